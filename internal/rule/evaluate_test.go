package rule

import (
	"strconv"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/sensor"
)

// now is the instant every evaluation test is judged at.
var now = time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)

// sensorsFrom builds a snapshot from JSON bodies, as the API would store them.
func sensorsFrom(t *testing.T, bodies map[string]string) SensorMap {
	t.Helper()
	m := SensorMap{}
	for key, body := range bodies {
		data, err := sensor.ParseBody([]byte(body))
		if err != nil {
			t.Fatalf("sensor %s: %v", key, err)
		}
		m[key] = sensor.Record{Key: key, Data: data, ReceivedAt: now.Add(-time.Minute)}
	}
	return m
}

// jsonValue reads a rule value written as JSON, so "1e6" stays the number
// the config author wrote.
func jsonValue(t *testing.T, text string) sensor.Value {
	t.Helper()
	var v sensor.Value
	if err := v.UnmarshalJSON([]byte(text)); err != nil {
		t.Fatalf("value %s: %v", text, err)
	}
	return v
}

func ago(d time.Duration) string { return now.Add(-d).Format(time.RFC3339Nano) }

type evalCase struct {
	name   string
	rule   Rule
	body   string // the sensor "k"; "" means the sensor is missing
	opt    Options
	pass   bool
	reason string
}

func runEvalCases(t *testing.T, cases []evalCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bodies := map[string]string{"other": `{"count": 1}`}
			if c.body != "" {
				bodies["k"] = c.body
			}
			c.rule.Key = "k"
			got := Evaluate(c.rule, sensorsFrom(t, bodies), now, c.opt)
			if got.Passed != c.pass || got.Reason != c.reason {
				t.Fatalf("Evaluate = passed %v, %q\nwant       passed %v, %q", got.Passed, got.Reason, c.pass, c.reason)
			}
		})
	}
}

func TestEvaluateExists(t *testing.T) {
	runEvalCases(t, []evalCase{
		{name: "sensor present", rule: Rule{Op: Exists}, body: `{"a": 1}`, pass: true, reason: "sensor present"},
		{name: "empty wrapped sensor is present", rule: Rule{Op: Exists}, body: `{"data": {}}`, pass: true, reason: "sensor present"},
		{name: "sensor missing", rule: Rule{Op: Exists}, reason: "sensor missing"},
		{name: "field present", rule: Rule{Op: Exists, Field: "a"}, body: `{"a": 0}`, pass: true, reason: "field a present"},
		{name: "field null is present", rule: Rule{Op: Exists, Field: "a"}, body: `{"a": null}`, pass: true, reason: "field a present"},
		{name: "field missing", rule: Rule{Op: Exists, Field: "b"}, body: `{"a": 1}`, reason: "field b missing"},
		{name: "field on missing sensor", rule: Rule{Op: Exists, Field: "a"}, reason: "sensor missing"},
	})
}

func TestEvaluateEquals(t *testing.T) {
	eq := func(v string) Rule { return Rule{Op: Equals, Field: "f", Value: jsonValue(t, v)} }
	runEvalCases(t, []evalCase{
		{name: "same string", rule: eq(`"ready"`), body: `{"f": "ready"}`, pass: true, reason: `f is "ready"`},
		{name: "strings compare exactly", rule: eq(`"ready"`), body: `{"f": "READY"}`, reason: `f is "READY", want "ready"`},
		{name: "1000000 == 1e6", rule: eq(`1e6`), body: `{"f": 1000000}`, pass: true, reason: `f is 1000000`},
		{name: "1e6 == 1000000", rule: eq(`1000000`), body: `{"f": 1e6}`, pass: true, reason: `f is 1000000`},
		{name: "42 == 42.0", rule: eq(`42`), body: `{"f": 42.0}`, pass: true, reason: `f is 42`},
		{name: "0.5 == 0.50", rule: eq(`0.5`), body: `{"f": 0.50}`, pass: true, reason: `f is 0.5`},
		{name: "different numbers", rule: eq(`1000`), body: `{"f": 999}`, reason: `f is 999, want 1000`},
		{name: "bool is not string", rule: eq(`"true"`), body: `{"f": true}`, reason: `f is bool true, want string "true" (types differ)`},
		{name: "number is not string", rule: eq(`"1000"`), body: `{"f": 1000}`, reason: `f is number 1000, want string "1000" (types differ)`},
		{name: "string is not number", rule: eq(`1000`), body: `{"f": "1000"}`, reason: `f is string "1000", want number 1000 (types differ)`},
		{name: "same bool", rule: eq(`false`), body: `{"f": false}`, pass: true, reason: `f is false`},
		{name: "null field", rule: eq(`"ready"`), body: `{"f": null}`, reason: `f is null, want string "ready" (types differ)`},
		{name: "object field", rule: eq(`"ready"`), body: `{"f": {"status": "ready"}}`, reason: `f is object, want string "ready" (types differ)`},
		{name: "field missing", rule: eq(`"ready"`), body: `{"g": "ready"}`, reason: "field f missing"},
		{name: "sensor missing", rule: eq(`"ready"`), reason: "sensor missing"},
	})
}

func TestEvaluateCompare(t *testing.T) {
	cmp := func(op Op, v string) Rule { return Rule{Op: op, Field: "count", Value: jsonValue(t, v)} }
	runEvalCases(t, []evalCase{
		{name: "gt passes", rule: cmp(GT, `1000`), body: `{"count": 1500}`, pass: true, reason: "count 1500 > 1000"},
		{name: "gt fails on equal", rule: cmp(GT, `1000`), body: `{"count": 1000}`, reason: "count 1000 <= 1000"},
		{name: "gte passes on equal", rule: cmp(GTE, `1000`), body: `{"count": 1000}`, pass: true, reason: "count 1000 >= 1000"},
		{name: "gte fails", rule: cmp(GTE, `1000`), body: `{"count": 5}`, reason: "count 5 < 1000"},
		{name: "lt passes", rule: cmp(LT, `1000`), body: `{"count": 5}`, pass: true, reason: "count 5 < 1000"},
		{name: "lt fails on equal", rule: cmp(LT, `1000`), body: `{"count": 1000}`, reason: "count 1000 >= 1000"},
		{name: "lte passes on equal", rule: cmp(LTE, `1000`), body: `{"count": 1000}`, pass: true, reason: "count 1000 <= 1000"},
		{name: "lte fails", rule: cmp(LTE, `1000`), body: `{"count": 1001}`, reason: "count 1001 > 1000"},
		{name: "fractions and negatives", rule: cmp(LT, `0`), body: `{"count": -1.5}`, pass: true, reason: "count -1.5 < 0"},
		{name: "numeric string on the sensor", rule: cmp(GTE, `1000`), body: `{"count": "1500"}`, pass: true, reason: `count "1500" >= 1000`},
		{name: "numeric string in the rule", rule: cmp(GTE, `"1000"`), body: `{"count": 1500}`, pass: true, reason: `count 1500 >= "1000"`},
		{name: "leading zero is decimal, not octal", rule: cmp(GT, `16`), body: `{"count": "017"}`, pass: true, reason: `count "017" > 16`},
		{name: "hex string is not a number", rule: cmp(GT, `0`), body: `{"count": "0x10"}`, reason: `count is string "0x10", not a number`},
		{name: "word is not a number", rule: cmp(GT, `0`), body: `{"count": "abc"}`, reason: `count is string "abc", not a number`},
		{name: "bool is not a number", rule: cmp(GT, `0`), body: `{"count": true}`, reason: "count is bool true, not a number"},
		{name: "null is not a number", rule: cmp(LT, `10`), body: `{"count": null}`, reason: "count is null, not a number"},
		{name: "object is not a number", rule: cmp(GT, `0`), body: `{"count": {"n": 5}}`, reason: "count is object, not a number"},
		{name: "zero is not missing", rule: cmp(GTE, `1`), body: `{"count": 0}`, reason: "count 0 < 1"},
		{name: "field missing", rule: cmp(GTE, `1`), body: `{"rows": 5}`, reason: "field count missing"},
		{name: "sensor missing", rule: cmp(GTE, `1`), reason: "sensor missing"},
	})
}

func TestEvaluateAge(t *testing.T) {
	age := func(op Op, limit string) Rule {
		return Rule{Op: op, Field: "updatedAt", Value: sensor.StringValue(limit)}
	}
	body := func(v string) string { return `{"updatedAt": ` + v + `}` }
	quoted := strconv.Quote
	epochS := func(d time.Duration) string { return strconv.FormatInt(now.Add(-d).Unix(), 10) }
	epochMS := func(d time.Duration) string { return strconv.FormatInt(now.Add(-d).UnixMilli(), 10) }
	runEvalCases(t, []evalCase{
		{name: "age_lt passes", rule: age(AgeLT, "2h"), body: body(quoted(ago(time.Hour))), pass: true, reason: "updatedAt 1h old, under the 2h limit"},
		{name: "age_lt fails", rule: age(AgeLT, "2h"), body: body(quoted(ago(3*time.Hour + 12*time.Minute))), reason: "updatedAt 3h12m old, not under the 2h limit"},
		{name: "age_lt is strict", rule: age(AgeLT, "2h"), body: body(quoted(ago(2 * time.Hour))), reason: "updatedAt 2h old, not under the 2h limit"},
		{name: "age_gt passes", rule: age(AgeGT, "2h"), body: body(quoted(ago(3 * time.Hour))), pass: true, reason: "updatedAt 3h old, over the 2h minimum"},
		{name: "age_gt fails", rule: age(AgeGT, "2h"), body: body(quoted(ago(time.Hour))), reason: "updatedAt 1h old, not over the 2h minimum"},
		{name: "age_gt is strict", rule: age(AgeGT, "2h"), body: body(quoted(ago(2 * time.Hour))), reason: "updatedAt 2h old, not over the 2h minimum"},
		{name: "age_gt in days", rule: age(AgeGT, "2d"), body: body(quoted(ago(72 * time.Hour))), pass: true, reason: "updatedAt 72h old, over the 48h minimum"},
		{name: "RFC3339 with offset", rule: age(AgeLT, "1h"), body: body(`"2026-03-10T09:30:00+02:00"`), pass: true, reason: "updatedAt 30m old, under the 1h limit"},
		{name: "RFC3339 fractional seconds", rule: age(AgeLT, "1s"), body: body(`"2026-03-10T07:59:59.5Z"`), pass: true, reason: "updatedAt 500ms old, under the 1s limit"},
		{name: "epoch seconds number", rule: age(AgeLT, "2h"), body: body(epochS(time.Hour)), pass: true, reason: "updatedAt 1h old, under the 2h limit"},
		{name: "epoch seconds string", rule: age(AgeGT, "2h"), body: body(quoted(epochS(3 * time.Hour))), pass: true, reason: "updatedAt 3h old, over the 2h minimum"},
		{name: "epoch milliseconds number", rule: age(AgeLT, "2h"), body: body(epochMS(90 * time.Minute)), pass: true, reason: "updatedAt 1h30m old, under the 2h limit"},
		{name: "epoch milliseconds string", rule: age(AgeLT, "2h"), body: body(quoted(epochMS(150 * time.Minute))), reason: "updatedAt 2h30m old, not under the 2h limit"},
		{name: "future beyond skew fails age_lt", rule: age(AgeLT, "2h"), body: body(quoted(ago(-12 * time.Minute))), reason: "updatedAt timestamp in the future (12m ahead, max skew 5m)"},
		{name: "future beyond skew fails age_gt", rule: age(AgeGT, "2h"), body: body(quoted(ago(-12 * time.Minute))), reason: "updatedAt timestamp in the future (12m ahead, max skew 5m)"},
		{name: "future within skew counts as age 0 for age_lt", rule: age(AgeLT, "2h"), body: body(quoted(ago(-2 * time.Minute))), pass: true, reason: "updatedAt 2m ahead (within the 5m clock skew), counted as 0s old, under the 2h limit"},
		{name: "future within skew counts as age 0 for age_gt", rule: age(AgeGT, "1s"), body: body(quoted(ago(-2 * time.Minute))), reason: "updatedAt 2m ahead (within the 5m clock skew), counted as 0s old, not over the 1s minimum"},
		{name: "future exactly at the skew is allowed", rule: age(AgeLT, "2h"), body: body(quoted(ago(-5 * time.Minute))), pass: true, reason: "updatedAt 5m ahead (within the 5m clock skew), counted as 0s old, under the 2h limit"},
		{name: "configured skew", rule: age(AgeLT, "2h"), body: body(quoted(ago(-12 * time.Minute))), opt: Options{MaxClockSkew: 15 * time.Minute}, pass: true, reason: "updatedAt 12m ahead (within the 15m clock skew), counted as 0s old, under the 2h limit"},
		{name: "configured skew exceeded", rule: age(AgeLT, "2h"), body: body(quoted(ago(-2 * time.Minute))), opt: Options{MaxClockSkew: time.Minute}, reason: "updatedAt timestamp in the future (2m ahead, max skew 1m)"},
		{name: "unparseable string", rule: age(AgeLT, "2h"), body: body(`"yesterday"`), reason: `updatedAt: invalid timestamp: string "yesterday" is neither RFC3339 nor epoch seconds or milliseconds`},
		{name: "bool timestamp", rule: age(AgeGT, "2h"), body: body(`true`), reason: `updatedAt: invalid timestamp: bool true is neither RFC3339 nor epoch seconds or milliseconds`},
		{name: "null timestamp", rule: age(AgeGT, "2h"), body: body(`null`), reason: `updatedAt: invalid timestamp: null is neither RFC3339 nor epoch seconds or milliseconds`},
		{name: "zero placeholder does not pass age_gt", rule: age(AgeGT, "2h"), body: body(`0`), reason: `updatedAt: invalid timestamp: number 0 is not after 1970-01-01T00:00:00Z (a placeholder, not an update time)`},
		{name: "field missing", rule: age(AgeLT, "2h"), body: `{"count": 5}`, reason: "field updatedAt missing"},
		{name: "sensor missing", rule: age(AgeGT, "2h"), reason: "sensor missing"},
	})
}

func TestEvaluateInvalidRuleFailsClosed(t *testing.T) {
	runEvalCases(t, []evalCase{
		{name: "unknown check", rule: Rule{Op: "field_equals", Field: "f"}, body: `{"f": 1}`,
			reason: `invalid rule: check: unknown check "field_equals", want one of exists, equals, gt, gte, lt, lte, age_lt, age_gt`},
		{name: "age limit not a duration", rule: Rule{Op: AgeLT, Field: "f", Value: sensor.StringValue("soon")}, body: `{"f": 1}`,
			reason: `invalid rule: value: invalid duration "soon": want e.g. 2d, 36h, 1h30m`},
		{name: "every problem listed", rule: Rule{Op: GT}, body: `{"f": 1}`,
			reason: `invalid rule: field: required for check gt; value: check gt needs a number, got null`},
	})
}

func TestEvaluateResultFields(t *testing.T) {
	received := now.Add(-time.Minute)
	ts := now.Add(-90 * time.Minute)
	s := sensorsFrom(t, map[string]string{
		"k": `{"updatedAt": "` + ts.Format(time.RFC3339) + `", "n": null, "ahead": "` + now.Add(2*time.Minute).Format(time.RFC3339) + `", "far": "` + now.Add(time.Hour).Format(time.RFC3339) + `"}`,
	})
	t.Run("age op records timestamp, age and receive time", func(t *testing.T) {
		got := Evaluate(Rule{Key: "k", Op: AgeLT, Field: "updatedAt", Value: sensor.StringValue("2h")}, s, now, Options{})
		if !got.SensorPresent || !got.FieldPresent || !got.Timestamp.Equal(ts) || got.Age != 90*time.Minute ||
			!got.SensorReceivedAt.Equal(received) || got.Rule.Age != 2*time.Hour {
			t.Fatalf("result = %+v", got)
		}
		if s, _ := got.Observed.Str(); s != ts.Format(time.RFC3339) {
			t.Fatalf("Observed = %v", got.Observed)
		}
	})
	t.Run("future within skew has age 0", func(t *testing.T) {
		got := Evaluate(Rule{Key: "k", Op: AgeGT, Field: "ahead", Value: sensor.StringValue("1m")}, s, now, Options{})
		if got.Age != 0 || got.Timestamp.IsZero() {
			t.Fatalf("result = %+v", got)
		}
	})
	t.Run("future beyond skew keeps its negative age", func(t *testing.T) {
		got := Evaluate(Rule{Key: "k", Op: AgeLT, Field: "far", Value: sensor.StringValue("2h")}, s, now, Options{})
		if got.Passed || got.Age != -time.Hour {
			t.Fatalf("result = %+v", got)
		}
	})
	t.Run("null field is present and null", func(t *testing.T) {
		got := Evaluate(Rule{Key: "k", Op: Equals, Field: "n", Value: sensor.IntValue(0)}, s, now, Options{})
		if got.Passed || !got.FieldPresent || !got.Observed.IsNull() {
			t.Fatalf("result = %+v", got)
		}
	})
	t.Run("missing field is not present", func(t *testing.T) {
		got := Evaluate(Rule{Key: "k", Op: GTE, Field: "count", Value: sensor.IntValue(0)}, s, now, Options{})
		if got.Passed || !got.SensorPresent || got.FieldPresent {
			t.Fatalf("result = %+v", got)
		}
	})
	t.Run("missing sensor has no receive time", func(t *testing.T) {
		got := Evaluate(Rule{Key: "nope", Op: Exists}, s, now, Options{})
		if got.Passed || got.SensorPresent || !got.SensorReceivedAt.IsZero() {
			t.Fatalf("result = %+v", got)
		}
	})
	t.Run("nil sensors is no sensors", func(t *testing.T) {
		got := Evaluate(Rule{Key: "k", Op: Exists}, nil, now, Options{})
		if got.Passed || got.Reason != "sensor missing" {
			t.Fatalf("result = %+v", got)
		}
	})
}

// TestReadsNowNamesEveryOpThatReadsNow: every op whose verdict on the same
// sensor record differs at two instants says so (Rule.ReadsNow), since
// callers keep verdicts of the others across instants (the watchdog's
// pending trigger data); and the age ops do differ here, so the test
// can tell.
func TestReadsNowNamesEveryOpThatReadsNow(t *testing.T) {
	stamp := now.Add(-time.Hour).Format(time.RFC3339)
	for _, op := range Ops() {
		for _, data := range []string{`{"f": "` + stamp + `"}`, `{"f": 15}`, `{"f": "x"}`} {
			for _, v := range []sensor.Value{sensor.StringValue("2h"), sensor.IntValue(10), sensor.StringValue("x")} {
				r := Rule{Key: "k", Op: op, Field: "f", Value: v}
				sensors := sensorsFrom(t, map[string]string{"k": data})
				a := Evaluate(r, sensors, now, Options{})
				b := Evaluate(r, sensors, now.Add(5*time.Hour), Options{})
				differ := a.Passed != b.Passed || a.Reason != b.Reason
				if differ && !r.ReadsNow() {
					t.Errorf("%s on %s with %v: %q at one instant, %q at another, but ReadsNow is false", op, data, v, a.Reason, b.Reason)
				}
				if (op == AgeLT || op == AgeGT) && data[7] == '"' && v.Equal(sensor.StringValue("2h")) && !differ {
					t.Errorf("%s on %s: the same verdict %q 5h apart", op, data, a.Reason)
				}
			}
		}
	}
}
