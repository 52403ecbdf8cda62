package engine_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

func TestExplain(t *testing.T) {
	f := newFixture(t)
	const doc = `
pipeline: {id: gold}
schedule:
  trigger: {key: ready, check: equals, field: status, value: ready}
  timezone: America/New_York
validation:
  rules:
    - {key: ready, check: equals, field: status, value: ready}
    - {key: rows, check: gte, field: count, value: 1000}
sla: {deadline: "10:00", expectedDuration: 30m}
job: {type: glue, config: {jobName: gold}, maxRetries: 2}
`
	if _, err := f.eng.ApplyConfig(t.Context(), "gold.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.PutSensor(t.Context(), "gold", "rows", obj("count", 5)); err != nil {
		t.Fatal(err)
	}
	f.clk.Advance(90 * time.Second)
	x, err := f.eng.Explain(t.Context(), "gold", "")
	if err != nil {
		t.Fatal(err)
	}
	if x.Period != "2026-03-10" || x.Timezone != "America/New_York" || x.Validation.Passed || x.Run != nil {
		t.Fatalf("explanation: %+v", x)
	}
	rows := x.Validation.Rules[1]
	if rows.Passed || rows.Observed == nil || rows.Observed.String() != "5" || rows.SensorAge != "1m30s" || !strings.Contains(rows.Reason, "5") {
		t.Fatalf("rows rule: %+v", rows)
	}
	ready := x.Validation.Rules[0]
	if ready.Passed || ready.Reason == "" || ready.ReceivedAt != nil {
		t.Fatalf("ready rule (missing sensor): %+v", ready)
	}
	if x.Trigger == nil || x.Trigger.Passed || x.Trigger.Reason != "no trigger sensor for this period" {
		t.Fatalf("trigger: %+v", x.Trigger)
	}
	if x.Deadlines.SLABreach == nil || !x.Deadlines.SLABreach.Equal(time.Date(2026, 3, 10, 14, 0, 0, 0, time.UTC)) || x.Deadlines.SLAWarning == nil {
		t.Fatalf("deadlines: %+v", x.Deadlines)
	}
	if len(x.Budgets) != 4 || x.Budgets[0].Max != 2 {
		t.Fatalf("budgets: %+v", x.Budgets)
	}
	if _, err := json.Marshal(x); err != nil {
		t.Fatal(err)
	}
	if _, err := f.eng.Explain(t.Context(), "gold", "2026-13-01"); err == nil {
		t.Fatal("bad period accepted")
	}
	if _, err := f.eng.Explain(t.Context(), "nope", ""); err == nil {
		t.Fatal("unknown pipeline accepted")
	}
}

// TestExplainAgreesWithTheTimersArmed: the SLA instants explain shows
// are those the decision armed timers at (absolute and relative), as the
// same core functions resolve them.
func TestExplainAgreesWithTheTimersArmed(t *testing.T) {
	f := goldLanded(t, "expectedDuration: 1h, maxDuration: 4h")
	x, err := f.eng.Explain(t.Context(), "gold", "2026-03-10")
	if err != nil {
		t.Fatal(err)
	}
	due := func(key string) time.Time {
		t.Helper()
		tm, err := f.st.TimerGet(t.Context(), key)
		if err != nil {
			t.Fatalf("timer %s: %v", key, err)
		}
		return tm.DueAt
	}
	for _, c := range []struct {
		name  string
		shown *time.Time
		timer string
	}{
		{"SLA warning", x.Deadlines.SLAWarning, "sla-warning/gold/stream/2026-03-10"},
		{"SLA breach", x.Deadlines.SLABreach, "sla-breach/gold/stream/2026-03-10"},
		{"relative SLA breach", x.Deadlines.RelativeSLABreach, "relative-sla-breach/gold/stream/2026-03-10"},
	} {
		if want := due(c.timer); c.shown == nil || !c.shown.Equal(want) {
			t.Errorf("%s shown %v, armed at %s", c.name, c.shown, want)
		}
	}
	if x.Deadlines.FirstTriggerSensor == nil || !x.Deadlines.FirstTriggerSensor.Equal(t0) || x.Deadlines.NextCronTick != nil || x.Deadlines.LoadedAt != nil {
		t.Errorf("deadlines %+v", x.Deadlines)
	}
}
