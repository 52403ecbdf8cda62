package rule

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/sensor"
)

// complement pairs each comparison with the one that must pass exactly when
// it does not, whenever the field is a number.
var complement = map[Op]Op{GT: LTE, GTE: LT, LT: GTE, LTE: GT}

// FuzzEvaluate feeds arbitrary sensor bodies and rules to Evaluate. Beyond
// "no panic", it checks properties that hold for every input: a reason is
// always given, a pass needs the sensor (and field), a comparison and its
// complement never agree on a number, age_lt and age_gt never both pass,
// and equals passes exactly when the typed values are Equal.
func FuzzEvaluate(f *testing.F) {
	f.Add([]byte(`{"count": 5}`), uint8(2), "count", []byte(`1000`), int64(1773129600), int64(0))
	f.Add([]byte(`{"data": {"status": "READY"}}`), uint8(1), "status", []byte(`"ready"`), int64(1773129600), int64(0))
	f.Add([]byte(`{"n": 1e6}`), uint8(1), "n", []byte(`1000000`), int64(0), int64(-1))
	f.Add([]byte(`{"updatedAt": "2026-03-10T07:00:00+02:00"}`), uint8(6), "updatedAt", []byte(`"2h"`), int64(1773129600), int64(300e9))
	f.Add([]byte(`{"updatedAt": 1773126000123}`), uint8(7), "updatedAt", []byte(`"1d"`), int64(1773129600), int64(0))
	f.Add([]byte(`{"updatedAt": "1773126000"}`), uint8(7), "updatedAt", []byte(`2h`), int64(-1<<62), int64(1<<62))
	f.Add([]byte(`{"count": "1500", "x": null}`), uint8(3), "x", []byte(`"1e3"`), int64(1<<62), int64(0))
	f.Add([]byte(`[]`), uint8(0), "", []byte(``), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, body []byte, opIndex uint8, field string, value []byte, nowUnix, skew int64) {
		s := SensorMap{}
		if data, err := sensor.ParseBody(body); err == nil {
			s["k"] = sensor.Record{Key: "k", Data: data}
		}
		var v sensor.Value
		if err := v.UnmarshalJSON(value); err != nil {
			v = sensor.StringValue(string(value)) // lets bare durations like 2h through
		}
		op := Op("unknown")
		if ops := Ops(); int(opIndex) < len(ops) {
			op = ops[opIndex]
		}
		at := time.Unix(nowUnix, 0)
		opt := Options{MaxClockSkew: time.Duration(skew)}
		r := Rule{Key: "k", Op: op, Field: field, Value: v}
		res := Evaluate(r, s, at, opt)

		if res.Reason == "" {
			t.Fatalf("no reason: %+v", res)
		}
		if again := Evaluate(r, s, at, opt); again.Passed != res.Passed || again.Reason != res.Reason {
			t.Fatalf("not deterministic: %+v then %+v", res, again)
		}
		checked := r
		if errs := checked.Check(); len(errs) > 0 {
			if res.Passed || !strings.HasPrefix(res.Reason, "invalid rule: ") {
				t.Fatalf("invalid rule %+v (%v) gave %+v", r, errs, res)
			}
			return
		}
		if res.Passed && !res.SensorPresent {
			t.Fatalf("passed without the sensor: %+v", res)
		}
		if res.Passed && field != "" && !res.FieldPresent {
			t.Fatalf("passed without the field: %+v", res)
		}
		if !res.FieldPresent && !res.Observed.IsNull() {
			t.Fatalf("observed a value of a missing field: %+v", res)
		}
		switch op {
		case Equals:
			if res.FieldPresent && res.Passed != res.Observed.Equal(v) {
				t.Fatalf("equals passed=%v but Equal=%v: %+v", res.Passed, !res.Passed, res)
			}
		case GT, GTE, LT, LTE:
			other := Evaluate(Rule{Key: "k", Op: complement[op], Field: field, Value: v}, s, at, opt)
			_, numeric := res.Observed.Numeric()
			if res.FieldPresent && numeric && res.Passed == other.Passed {
				t.Fatalf("%s and %s agree (%v) on %v: %q / %q", op, complement[op], res.Passed, res.Observed, res.Reason, other.Reason)
			}
			if !numeric && (res.Passed || other.Passed) {
				t.Fatalf("comparison passed on non-number %v: %q", res.Observed, res.Reason)
			}
		case AgeLT, AgeGT:
			lt := Evaluate(Rule{Key: "k", Op: AgeLT, Field: field, Value: v}, s, at, opt)
			gt := Evaluate(Rule{Key: "k", Op: AgeGT, Field: field, Value: v}, s, at, opt)
			if lt.Passed && gt.Passed {
				t.Fatalf("age_lt and age_gt both pass: %q / %q", lt.Reason, gt.Reason)
			}
			if res.Passed && res.Timestamp.IsZero() {
				t.Fatalf("age check passed without a timestamp: %+v", res)
			}
		}
	})
}
