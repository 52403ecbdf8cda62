package storetest

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// The suite is only as strict as diff: these pin what it must catch and
// what it must let through.
func TestDiff(t *testing.T) {
	base := fullRun(key("orders", "daily", "2026-03-14"))
	tests := []struct {
		name   string
		change func(r *run.Run)
		want   string // a substring of the single reported difference; "" for none
	}{
		{"Identical", func(*run.Run) {}, ""},
		{"SameInstantInUTC", func(r *run.Run) { r.StateSince = r.StateSince.UTC() }, ""},
		{"NanosecondOff", func(r *run.Run) { r.CreatedAt = r.CreatedAt.Add(time.Nanosecond) }, "CreatedAt"},
		{"MicrosecondRounding", func(r *run.Run) { r.UpdatedAt = r.UpdatedAt.Truncate(time.Microsecond) }, "UpdatedAt"},
		{"NotInUTC", func(r *run.Run) { r.UpdatedAt = r.UpdatedAt.In(elsewhere) }, "want it in UTC"},
		{"ZeroBecameEpoch", func(r *run.Run) { r.EvalDeadline = time.Time{} }, "EvalDeadline"},
		{"NilFailure", func(r *run.Run) { r.LastFailure = nil }, "LastFailure"},
		{"FailureMessage", func(r *run.Run) { r.LastFailure = &run.Failure{Category: run.Transient} }, "LastFailure.Message"},
		{"MetaMissingKey", func(r *run.Run) { delete(r.JobMeta, "step") }, `JobMeta["step"]`},
		{"MetaValue", func(r *run.Run) { r.JobMeta = map[string]string{"cluster": "x", "step": "s-42", "empty": ""} }, `JobMeta["cluster"]`},
		{"Key", func(r *run.Run) { r.Period = "2026-03-15" }, "Key.Period"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := fullRun(base.Key)
			got.StateSince = got.StateSince.UTC() // a store hands times back in UTC
			tc.change(&got)
			d := diff(got, base)
			switch {
			case tc.want == "" && len(d) != 0:
				t.Fatalf("reported %v, want no difference", d)
			case tc.want != "" && (len(d) != 1 || !strings.Contains(d[0], tc.want)):
				t.Fatalf("reported %v, want one difference mentioning %q", d, tc.want)
			}
		})
	}
}

func TestDiffSensorData(t *testing.T) {
	num := func(f float64) sensor.Object {
		return sensor.NewObject(map[string]sensor.Value{"rows": sensor.NumberValue(f)})
	}
	tests := []struct {
		name      string
		got, want store.Sensor
		differs   bool
	}{
		{"SameNumberOtherSpelling", store.Sensor{Data: sensor.NewObject(map[string]sensor.Value{"rows": sensor.IntValue(1000000)})}, store.Sensor{Data: num(1e6)}, false},
		{"OtherNumber", store.Sensor{Data: num(1e6 + 1)}, store.Sensor{Data: num(1e6)}, true},
		{"StringIsNotNumber", store.Sensor{Data: sensor.NewObject(map[string]sensor.Value{"rows": sensor.StringValue("1000000")})}, store.Sensor{Data: num(1e6)}, true},
		{"LostPrecision", store.Sensor{Data: sensor.NewObject(map[string]sensor.Value{"n": sensor.IntValue(9007199254740992)})},
			store.Sensor{Data: sensor.NewObject(map[string]sensor.Value{"n": sensor.IntValue(9007199254740993)})}, true},
		{"EmptyEqualsZero", store.Sensor{Data: sensor.NewObject(nil)}, store.Sensor{}, false},
		{"NestedDifference", store.Sensor{Data: sensorData()}, store.Sensor{Data: func() sensor.Object {
			d := sensorData()
			m := map[string]sensor.Value{}
			for _, k := range d.Keys() {
				m[k], _ = d.Get(k)
			}
			m["nested"] = sensor.ObjectValue(sensor.NewObject(nil))
			return sensor.NewObject(m)
		}()}, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if d := diff(tc.got, tc.want); (len(d) > 0) != tc.differs {
				t.Fatalf("reported %v, want a difference: %v", d, tc.differs)
			}
		})
	}
}

func TestDiffEmptyEqualsNil(t *testing.T) {
	a := store.Baseline{Sensors: map[string]sensor.Object{}}
	if d := diff(a, store.Baseline{}); len(d) != 0 {
		t.Fatalf("empty and nil maps reported different: %v", d)
	}
	if d := diff(store.Pipeline{Doc: []byte{}}, store.Pipeline{}); len(d) != 0 {
		t.Fatalf("empty and nil bytes reported different: %v", d)
	}
	if d := diff(store.Pipeline{Doc: []byte("a")}, store.Pipeline{Doc: []byte("b")}); len(d) != 1 {
		t.Fatalf("different docs: reported %v, want one difference", d)
	}
}

func TestRequireAllSetNamesZeroFields(t *testing.T) {
	r := fullRun(key("orders", "daily", "2026-03-14"))
	if zero := zeroFields(r); len(zero) != 0 {
		t.Fatalf("fullRun leaves %v unset", zero)
	}
	r.JobMeta = map[string]string{}
	r.Key.Period = ""
	r.TriggerInFlight = false
	if zero := zeroFields(r); strings.Join(zero, ",") != "Key.Period,TriggerInFlight,JobMeta" {
		t.Fatalf("zero fields %v, want [Key.Period JobMeta]", zero)
	}
}
