package rule

import (
	"fmt"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/sensor"
)

// DefaultMaxClockSkew is how far ahead of `now` a timestamp may be before
// age checks refuse it (`rules.maxClockSkew`).
const DefaultMaxClockSkew = 5 * time.Minute

// Options tune evaluation.
type Options struct {
	// MaxClockSkew is how far in the future a sensor timestamp may be and
	// still count (as age 0): writers' clocks drift. Zero or negative means
	// DefaultMaxClockSkew (config durations are never negative; to allow
	// almost no skew, set 1ns).
	MaxClockSkew time.Duration
}

func (o Options) maxClockSkew() time.Duration {
	if o.MaxClockSkew <= 0 {
		return DefaultMaxClockSkew
	}
	return o.MaxClockSkew
}

// Sensors is where rules read sensors from: the engine's snapshot of the
// stored sensors, keys already mapped for the period.
type Sensors interface {
	Sensor(key string) (sensor.Record, bool)
}

// SensorMap is Sensors over a map, for the engine's snapshots and tests.
type SensorMap map[string]sensor.Record

var _ Sensors = SensorMap(nil)

// Sensor returns the record stored under key.
func (m SensorMap) Sensor(key string) (sensor.Record, bool) {
	r, ok := m[key]
	return r, ok
}

// Result is the verdict on one rule, with what was seen, for `explain` and
// events.
type Result struct {
	// Rule is the rule evaluated, with Age set for age ops.
	Rule   Rule
	Passed bool
	// SensorPresent and FieldPresent keep "no sensor", "no field" and
	// "field is null or zero" apart.
	SensorPresent bool
	FieldPresent  bool
	// Observed is the field's value; null when the sensor or field is
	// missing (FieldPresent tells those apart from a present null).
	Observed sensor.Value
	// Age is now minus Timestamp, for age ops whose timestamp parsed. A
	// timestamp ahead of now within the clock skew counts as 0; beyond it,
	// Age is negative.
	Age time.Duration
	// Timestamp is the field parsed by ParseTimestamp, for age ops.
	Timestamp time.Time
	// SensorReceivedAt is when Interlock received the sensor.
	SensorReceivedAt time.Time
	// Reason says why, for people; it is set whether the rule passed or not.
	Reason string
}

// ReadsNow reports whether Evaluate's verdict on r depends on now (the
// age checks): when it does not, a verdict on the same sensor record holds
// at any instant, and a caller may keep it.
func (r Rule) ReadsNow() bool { return r.Op == AgeLT || r.Op == AgeGT }

// Evaluate judges one rule against the sensors at instant now. It never
// reads the clock and never panics; a rule that fails Check fails here too
// (fail closed) with the problem as its reason.
func Evaluate(r Rule, s Sensors, now time.Time, opt Options) Result {
	res := Result{Rule: r}
	if errs := res.Rule.Check(); len(errs) > 0 {
		msgs := make([]string, len(errs))
		for i, e := range errs {
			msgs[i] = e.Error()
		}
		res.Reason = "invalid rule: " + strings.Join(msgs, "; ")
		return res
	}
	r = res.Rule
	if s == nil {
		s = SensorMap(nil)
	}
	rec, ok := s.Sensor(r.Key)
	if !ok {
		res.Reason = "sensor missing"
		return res
	}
	res.SensorPresent = true
	res.SensorReceivedAt = rec.ReceivedAt
	if r.Op == Exists && r.Field == "" {
		res.Passed, res.Reason = true, "sensor present"
		return res
	}
	obs, ok := rec.Data.Get(r.Field)
	if !ok {
		res.Reason = fmt.Sprintf("field %s missing", r.Field)
		return res
	}
	res.FieldPresent, res.Observed = true, obs
	switch r.Op {
	case Exists:
		res.Passed, res.Reason = true, fmt.Sprintf("field %s present", r.Field)
	case Equals:
		res.Passed, res.Reason = equals(r, obs)
	case GT, GTE, LT, LTE:
		res.Passed, res.Reason = compare(r, obs)
	case AgeLT, AgeGT:
		ageCheck(&res, now, opt.maxClockSkew())
	}
	return res
}

func equals(r Rule, obs sensor.Value) (bool, string) {
	switch {
	case obs.Equal(r.Value):
		return true, fmt.Sprintf("%s is %s", r.Field, show(obs))
	case obs.Kind() != r.Value.Kind():
		return false, fmt.Sprintf("%s is %s, want %s (types differ)", r.Field, describe(obs), describe(r.Value))
	}
	return false, fmt.Sprintf("%s is %s, want %s", r.Field, show(obs), show(r.Value))
}

// compare reads numeric strings on the sensor side ("1500") because many
// writers stringify counts; bools, null, objects and arrays are not numbers.
func compare(r Rule, obs sensor.Value) (bool, string) {
	x, ok := obs.Numeric()
	if !ok {
		return false, fmt.Sprintf("%s is %s, not a number", r.Field, describe(obs))
	}
	y, _ := r.Value.Numeric() // Check guarantees it
	var pass bool
	var yes, no string // the relation shown when the rule passes, and when not
	switch r.Op {
	case GT:
		pass, yes, no = x > y, ">", "<="
	case GTE:
		pass, yes, no = x >= y, ">=", "<"
	case LT:
		pass, yes, no = x < y, "<", ">="
	case LTE:
		pass, yes, no = x <= y, "<=", ">"
	}
	return pass, fmt.Sprintf("%s %s %s %s", r.Field, show(obs), pick(pass, yes, no), show(r.Value))
}

// ageCheck fills res for age_lt/age_gt. A timestamp beyond the clock skew
// fails both: a writer that far ahead cannot be trusted to say how old its
// data is, and the reference let such timestamps pass age_lt forever.
func ageCheck(res *Result, now time.Time, skew time.Duration) {
	r := res.Rule
	ts, err := ParseTimestamp(res.Observed)
	if err != nil {
		res.Reason = fmt.Sprintf("%s: %v", r.Field, err)
		return
	}
	res.Timestamp = ts
	res.Age = now.Sub(ts) // Sub saturates, so absurd instants cannot wrap
	ahead := ts.Sub(now)  // not -res.Age: negating the minimum duration overflows
	if ahead > skew {
		res.Reason = fmt.Sprintf("%s timestamp in the future (%s ahead, max skew %s)", r.Field, human(ahead), human(skew))
		return
	}
	seen := fmt.Sprintf("%s %s old", r.Field, human(res.Age))
	if ahead > 0 {
		res.Age = 0
		seen = fmt.Sprintf("%s %s ahead (within the %s clock skew), counted as 0s old", r.Field, human(ahead), human(skew))
	}
	switch r.Op {
	case AgeLT:
		res.Passed = res.Age < r.Age
		res.Reason = fmt.Sprintf("%s, %s the %s limit", seen, pick(res.Passed, "under", "not under"), human(r.Age))
	case AgeGT:
		res.Passed = res.Age > r.Age
		res.Reason = fmt.Sprintf("%s, %s the %s minimum", seen, pick(res.Passed, "over", "not over"), human(r.Age))
	}
}

func pick(b bool, yes, no string) string {
	if b {
		return yes
	}
	return no
}
