package rule

import (
	"errors"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/duration"
	"github.com/interlockhq/interlock/internal/sensor"
)

// Rule is one precondition on one sensor.
type Rule struct {
	// Key is the sensor key. The engine has already mapped per-period keys
	// to their base key.
	Key string
	// Op is the check.
	Op Op
	// Field is a top-level field of the sensor data (no dotted paths: "a.b"
	// is a field named "a.b"). Required by every op except Exists.
	Field string
	// Value is what the field is compared with; for age ops a duration
	// string such as "2h" or "1d".
	Value sensor.Value
	// Age is Value parsed, for age ops. Check sets it.
	Age time.Duration
}

// ErrInvalidRule is wrapped by every FieldError, so callers can tell a rule
// problem from others with errors.Is.
var ErrInvalidRule = errors.New("invalid rule")

// FieldError is one problem with one field of a rule: "key", "check",
// "field" or "value" (the names used in pipeline YAML).
type FieldError struct {
	Field string
	Msg   string
}

func (e FieldError) Error() string { return e.Field + ": " + e.Msg }

// Unwrap lets errors.Is(err, ErrInvalidRule) hold.
func (e FieldError) Unwrap() error { return ErrInvalidRule }

// Check validates r without any sensor data and reports every problem at
// once, so `interlock validate` can list them all. For age ops it sets Age.
//
// Decisions that are easy to get wrong:
//   - exists may name a field; it then passes only when the sensor has that
//     field. A value makes no sense for exists and is refused.
//   - equals refuses null: a YAML rule with `value:` forgotten decodes to
//     null too, and the two cannot be told apart. It compares scalars only.
//   - gt/gte/lt/lte want a number or a numeric string ("1000").
//   - age_lt/age_gt want a positive duration string; a zero limit would
//     make age_lt never pass and age_gt pass on any past timestamp.
func (r *Rule) Check() []FieldError {
	var errs []FieldError
	add := func(field, format string, args ...any) {
		errs = append(errs, FieldError{Field: field, Msg: fmt.Sprintf(format, args...)})
	}
	r.Age = 0
	if r.Key == "" {
		add("key", "required")
	}
	op, err := ParseOp(string(r.Op))
	if err != nil {
		add("check", "%s", err.Error())
		return errs // field and value rules depend on the op
	}
	if op != Exists && r.Field == "" {
		add("field", "required for check %s", op)
	}
	switch op {
	case Exists:
		if !r.Value.IsNull() {
			add("value", "not used by check exists (name a field to require it), got %s", describe(r.Value))
		}
	case Equals:
		switch r.Value.Kind() {
		case sensor.Null:
			add("value", "required for check equals (null is refused: it cannot be told from a missing value)")
		case sensor.ObjectKind, sensor.Array:
			add("value", "check equals compares a string, number or bool, got %s", r.Value.Kind())
		}
	case GT, GTE, LT, LTE:
		if _, ok := r.Value.Numeric(); !ok {
			add("value", "check %s needs a number, got %s", op, describe(r.Value))
		}
	case AgeLT, AgeGT:
		s, ok := r.Value.Str()
		if !ok {
			add("value", "check %s needs a duration string such as \"2h\" or \"1d\", got %s", op, describe(r.Value))
			break
		}
		d, err := duration.Parse(s)
		switch {
		case err != nil:
			add("value", "%s", err.Error())
		case d <= 0:
			// duration.Parse refuses negatives, but "36500d2000000h" overflows
			// into one; refuse that too rather than trust it.
			add("value", "check %s needs a positive duration, got %q", op, s)
		default:
			r.Age = d
		}
	}
	return errs
}
