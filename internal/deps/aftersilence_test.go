package deps

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
)

func TestSilencedConditions(t *testing.T) {
	at := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	blocked := sensor.NewObject(map[string]sensor.Value{"blockedBy": sensor.ObjectValue(sensor.NewObject(map[string]sensor.Value{"pipelineId": sensor.StringValue("up")}))})
	evs := []event.Event{
		{ID: "1", PipelineID: "b", ScheduleID: "cron", Date: "2026-03-10", Type: event.SLAWarning, Time: at},
		{ID: "2", PipelineID: "b", ScheduleID: "cron", Date: "2026-03-10", Type: event.SLABreach, Time: at.Add(time.Hour)},
		{ID: "3", PipelineID: "b", ScheduleID: "cron", Date: "2026-03-10", Type: event.SLABreach, Time: at.Add(2 * time.Hour)}, // latest wins
		{ID: "4", PipelineID: "a", ScheduleID: "cron", Date: "2026-03-10", Type: event.JobFailed, Time: at},
		{ID: "5", PipelineID: "a", ScheduleID: "cron", Date: "2026-03-10", Type: event.JobTriggered, Time: at},               // opens nothing
		{ID: "6", PipelineID: "c", ScheduleID: "cron", Date: "2026-03-10", Type: event.SLABreach, Time: at, Detail: blocked}, // blocked
		{ID: "7", PipelineID: "a", ScheduleID: "cron", Date: "2026-03-09", Type: event.JobFailed, Time: at},
		{ID: "8", PipelineID: "d", ScheduleID: "cron", Date: "2026-03-10", Type: event.RelativeSLAWarning, Time: at}, // no breach: kept
		{ID: "9", PipelineID: "e", ScheduleID: "cron", Date: "2026-03-10", Type: event.JobFailed, Time: at},
		{ID: "10", PipelineID: "e", ScheduleID: "cron", Date: "2026-03-10", Type: event.RetryExhausted, Time: at.Add(time.Minute)}, // supersedes 9
	}
	got := SilencedConditions(evs)
	var ids []string
	for _, e := range got {
		ids = append(ids, e.ID)
	}
	// b's warning goes with its breach, e's failed attempt with its
	// exhausted retries; d's warning stands alone.
	want := []string{"7", "4", "3", "8", "10"}
	if len(ids) != len(want) {
		t.Fatalf("picked %v, want %v", ids, want)
	}
	for i := range want {
		if ids[i] != want[i] {
			t.Fatalf("picked %v, want %v", ids, want)
		}
	}
}

func TestAfterSilence(t *testing.T) {
	e := event.Event{Type: event.SLABreach, Message: "deadline 09:00 passed", Detail: sensor.NewObject(map[string]sensor.Value{"deadline": sensor.StringValue("09:00")})}
	n := AfterSilence(e, "s1")
	if n.Type != event.SLABreach || n.Message != "still so after s1 ended: deadline 09:00 passed" {
		t.Fatalf("note = %+v", n)
	}
	for k, want := range map[string]string{"silence": `"s1"`, "afterSilence": "true", "deadline": `"09:00"`} {
		v, ok := n.Detail.Get(k)
		if b, _ := v.MarshalJSON(); !ok || string(b) != want {
			t.Errorf("detail %s = %s, want %s", k, b, want)
		}
	}
	if run.AfterSilenceMarker("maintenance:nightly@1", event.JobFailed).String() != "after-silence/maintenance:nightly@1/JOB_FAILED" {
		t.Fatal(run.AfterSilenceMarker("maintenance:nightly@1", event.JobFailed))
	}
}
