package rule

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/sensor"
)

func TestCheck(t *testing.T) {
	str := sensor.StringValue
	num := sensor.IntValue
	obj := sensor.ObjectValue(sensor.NewObject(map[string]sensor.Value{"a": num(1)}))
	cases := []struct {
		name    string
		rule    Rule
		want    []FieldError
		wantAge time.Duration
	}{
		{name: "exists", rule: Rule{Key: "k", Op: Exists}},
		{name: "exists with field", rule: Rule{Key: "k", Op: Exists, Field: "f"}},
		{name: "equals string", rule: Rule{Key: "k", Op: Equals, Field: "f", Value: str("ready")}},
		{name: "equals number", rule: Rule{Key: "k", Op: Equals, Field: "f", Value: num(0)}},
		{name: "equals bool", rule: Rule{Key: "k", Op: Equals, Field: "f", Value: sensor.BoolValue(false)}},
		{name: "gt number", rule: Rule{Key: "k", Op: GT, Field: "f", Value: sensor.NumberValue(0.5)}},
		{name: "gte numeric string", rule: Rule{Key: "k", Op: GTE, Field: "f", Value: str("1000")}},
		{name: "age_lt hours", rule: Rule{Key: "k", Op: AgeLT, Field: "f", Value: str("2h")}, wantAge: 2 * time.Hour},
		{name: "age_gt days", rule: Rule{Key: "k", Op: AgeGT, Field: "f", Value: str("2d")}, wantAge: 48 * time.Hour},

		{name: "key missing", rule: Rule{Op: Exists},
			want: []FieldError{{"key", "required"}}},
		{name: "check missing", rule: Rule{Key: "k"},
			want: []FieldError{{"check", `unknown check "", want one of exists, equals, gt, gte, lt, lte, age_lt, age_gt`}}},
		{name: "check is case-sensitive", rule: Rule{Key: "k", Op: "EQUALS", Field: "f", Value: str("x")},
			want: []FieldError{{"check", `unknown check "EQUALS", want one of exists, equals, gt, gte, lt, lte, age_lt, age_gt`}}},
		{name: "exists with value", rule: Rule{Key: "k", Op: Exists, Value: str("x")},
			want: []FieldError{{"value", `not used by check exists (name a field to require it), got string "x"`}}},
		{name: "equals without field", rule: Rule{Key: "k", Op: Equals, Value: str("x")},
			want: []FieldError{{"field", "required for check equals"}}},
		{name: "equals null", rule: Rule{Key: "k", Op: Equals, Field: "f"},
			want: []FieldError{{"value", "required for check equals (null is refused: it cannot be told from a missing value)"}}},
		{name: "equals object", rule: Rule{Key: "k", Op: Equals, Field: "f", Value: obj},
			want: []FieldError{{"value", "check equals compares a string, number or bool, got object"}}},
		{name: "gt non-numeric string", rule: Rule{Key: "k", Op: GT, Field: "f", Value: str("abc")},
			want: []FieldError{{"value", `check gt needs a number, got string "abc"`}}},
		{name: "gte bool", rule: Rule{Key: "k", Op: GTE, Field: "f", Value: sensor.BoolValue(true)},
			want: []FieldError{{"value", "check gte needs a number, got bool true"}}},
		{name: "lte null", rule: Rule{Key: "k", Op: LTE, Field: "f"},
			want: []FieldError{{"value", "check lte needs a number, got null"}}},
		{name: "lt without field and value", rule: Rule{Key: "k", Op: LT},
			want: []FieldError{{"field", "required for check lt"}, {"value", "check lt needs a number, got null"}}},
		{name: "every problem at once", rule: Rule{Op: AgeGT, Value: num(3600)},
			want: []FieldError{
				{"key", "required"},
				{"field", "required for check age_gt"},
				{"value", `check age_gt needs a duration string such as "2h" or "1d", got number 3600`},
			}},
		{name: "age_lt unparseable", rule: Rule{Key: "k", Op: AgeLT, Field: "f", Value: str("2 hours")},
			want: []FieldError{{"value", `invalid duration "2 hours": want e.g. 2d, 36h, 1h30m`}}},
		{name: "age_lt negative", rule: Rule{Key: "k", Op: AgeLT, Field: "f", Value: str("-5m")},
			want: []FieldError{{"value", `invalid duration "-5m": must not be negative`}}},
		{name: "age_gt zero", rule: Rule{Key: "k", Op: AgeGT, Field: "f", Value: str("0s")},
			want: []FieldError{{"value", `check age_gt needs a positive duration, got "0s"`}}},
		{name: "age_lt overflowing", rule: Rule{Key: "k", Op: AgeLT, Field: "f", Value: str("36500d2000000h")},
			want: []FieldError{{"value", `invalid duration "36500d2000000h": too long`}}},
		{name: "age_gt null", rule: Rule{Key: "k", Op: AgeGT, Field: "f", Age: time.Hour},
			want: []FieldError{{"value", `check age_gt needs a duration string such as "2h" or "1d", got null`}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := c.rule
			got := r.Check()
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("Check() = %q\nwant      %q", got, c.want)
			}
			if r.Age != c.wantAge {
				t.Fatalf("Age = %v, want %v", r.Age, c.wantAge)
			}
		})
	}
}

func TestFieldErrorWrapsSentinel(t *testing.T) {
	r := Rule{Op: Exists}
	errs := r.Check()
	if len(errs) != 1 {
		t.Fatalf("Check() = %v, want one error", errs)
	}
	var err error = errs[0]
	if !errors.Is(err, ErrInvalidRule) {
		t.Fatalf("errors.Is(%v, ErrInvalidRule) = false", err)
	}
	if err.Error() != "key: required" {
		t.Fatalf("Error() = %q", err.Error())
	}
}
