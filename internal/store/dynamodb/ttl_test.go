package dynamodb

import (
	"context"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
)

// TestTTLAttributesAreWhatTheDocSays pins the ttl values docs/aws.md
// gives, with the default retention (90 days): a period's records expire
// at the day after its date, 12:00 UTC, plus the retention; an event and
// alert bookkeeping at the first whole second after their time plus the
// retention; what must stay carries none.
func TestTTLAttributesAreWhatTheDocSays(t *testing.T) {
	c := ddblocal.Client(t)
	st, err := Open(context.Background(), Config{Client: c, Tables: newTables(t, c)}) // Retention 0: 90 days
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	day := run.Key{PipelineID: "orders", ScheduleID: "daily", Period: "2030-03-10"}
	active := run.Key{PipelineID: "orders", ScheduleID: "hourly", Period: "2030-03-10T05"}
	done := newRunAt(day)
	done.State, done.Outcome = run.Completed, run.OutcomeSucceeded
	evTime := time.Date(2030, 3, 10, 7, 0, 0, 5e8, time.UTC)
	deadAt := time.Date(2030, 3, 10, 8, 0, 0, 0, time.UTC)
	err = st.Commit(ctx, store.Change{
		Pipelines: []store.PipelineWrite{{Pipeline: store.Pipeline{ID: "orders"}}},
		Runs:      []store.RunWrite{{Run: done}, {Run: newRunAt(active)}},
		Markers: []store.MarkerWrite{{Marker: store.Marker{Key: day, Kind: "first-arrival", At: t2030}},
			{Marker: store.Marker{Key: run.Key{PipelineID: "orders"}, Kind: "first-loaded", At: t2030}}},
		Sensors: []store.SensorWrite{{Sensor: store.Sensor{PipelineID: "orders", Key: "k#20300310T05", ChangedAt: t2030}},
			{Sensor: store.Sensor{PipelineID: "orders", Key: "k", ChangedAt: t2030}}},
		Timers:      []store.TimerWrite{{Timer: store.Timer{Key: "t", Kind: "evaluate", Run: day, DueAt: t2030}}},
		Events:      []event.Event{{ID: "e", Type: event.JobCompleted, PipelineID: "orders", Time: evTime}},
		DeadLetters: []store.DeadLetter{{Sink: "slack", EventID: "e", Key: day, At: deadAt}},
	})
	if err != nil {
		t.Fatal(err)
	}
	const days90 = 90 * 24 * time.Hour
	periodTTL := time.Date(2030, 3, 11, 12, 0, 0, 0, time.UTC).Add(days90).Unix()
	for _, c := range []struct {
		what   string
		table  string
		pk, sk string
		want   int64 // 0: none
	}{
		{"terminal run", st.t.Control, "PIPELINE#orders", "TRIGGER#daily#2030-03-10", periodTTL},
		{"active run", st.t.Control, "PIPELINE#orders", "TRIGGER#hourly#2030-03-10T05", 0},
		{"period marker", st.t.Control, "PIPELINE#orders", "MARKER#daily#2030-03-10#first-arrival", periodTTL},
		{"pipeline-level marker", st.t.Control, "PIPELINE#orders", "MARKER###first-loaded", 0},
		{"hourly sensor of the day", st.t.Control, "PIPELINE#orders", "SENSORSTATE#k#20300310T05", periodTTL},
		{"plain sensor", st.t.Control, "PIPELINE#orders", "SENSORSTATE#k", 0},
		{"pipeline", st.t.Control, "PIPELINE#orders", "CONFIG", 0},
		{"timer", st.t.Control, "TIMER#t", "TIMER", 0},
		{"event", st.t.Events, eventPK(store.EventShard("orders")), eventSK(1), evTime.Add(days90).Unix() + 1},
		{"dead letter", st.t.Events, "SINK#slack", "DEAD#e", deadAt.Add(days90).Unix() + 1},
		{"shard counter", st.t.Events, counterPK(store.EventShard("orders")), skCounter, 0},
	} {
		it, err := st.get(ctx, c.table, c.pk, c.sk)
		if err != nil {
			t.Fatalf("%s (%s/%s): %v", c.what, c.pk, c.sk, err)
		}
		var got int64
		if it[attrTTL] != nil {
			got = readItem(it).num(attrTTL)
		}
		if got != c.want {
			t.Errorf("%s: ttl %d (%s), want %d (%s)", c.what, got, time.Unix(got, 0).UTC(), c.want, time.Unix(c.want, 0).UTC())
		}
	}
}
