package sqlite

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// TestMigrationShardsTheEventLog: a database an older binary left, with
// one global event sequence and an alert sink's cursor in the middle of
// it, opens with its events in their shards, each shard numbered in the
// old order, the counters at the shards' ends, and the cursor converted
// so that the sink goes on with exactly the events it had not read.
func TestMigrationShardsTheEventLog(t *testing.T) {
	db, path := databaseAt(t, 6)
	ctx := t.Context()
	// orders and billing share a shard; p0 and "" (no pipeline) do not.
	pipelines := []string{"orders", "p0", "billing", "", "orders", "p0", "orders", "billing", "", "p0"}
	t0 := time.Date(2026, time.March, 14, 6, 0, 0, 0, time.UTC)
	var ids []string
	for i, p := range pipelines {
		id := fmt.Sprint("old-", i+1)
		ids = append(ids, id)
		// Times run backwards: the old log's order is its sequence.
		if _, err := db.ExecContext(ctx, `INSERT INTO events (id, time, type, pipeline_id, schedule_id, date, message, detail)
			VALUES (?, ?, 'JOB_COMPLETED', ?, 'daily', '2026-03-14', 'm', NULL)`, id, t0.Add(-time.Duration(i)*time.Minute).UnixNano(), p); err != nil {
			t.Fatal(err)
		}
	}
	const readTo = 6 // the sink has read old-1 … old-6
	if _, err := db.ExecContext(ctx, `INSERT INTO markers (pipeline_id, schedule_id, period, kind, at, detail)
		VALUES ('#alert', 'slack', '', 'cursor', ?, ?)`, t0.UnixNano(), fmt.Sprintf(`{"seq":%d}`, readTo)); err != nil {
		t.Fatal(err)
	}
	db.Close()

	s := openPath(t, path)
	all, err := s.EventList(ctx, store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]event.Event{}
	for _, e := range all.Events {
		got[e.ID] = e
	}
	if len(got) != len(pipelines) {
		t.Fatalf("%d events after the migration, want %d", len(got), len(pipelines))
	}
	next := map[int]int64{}
	for i, id := range ids {
		e := got[id]
		shard := store.EventShard(pipelines[i])
		next[shard]++
		if e.Shard != shard || e.Seq != next[shard] {
			t.Errorf("%s (pipeline %q) at (%d, %d), want (%d, %d)", id, pipelines[i], e.Shard, e.Seq, shard, next[shard])
		}
	}

	dc, err := s.DeliveryCursorGet(ctx, "slack")
	if err != nil {
		t.Fatal(err)
	}
	c, text := dc.Cursor, dc.Cursor.String()
	rest, err := s.EventList(ctx, store.EventListParams{After: c})
	if err != nil {
		t.Fatal(err)
	}
	var unread []string
	for _, e := range rest.Events {
		unread = append(unread, e.ID)
	}
	slices.Sort(unread)
	want := slices.Clone(ids[readTo:])
	slices.Sort(want)
	if !slices.Equal(unread, want) {
		t.Fatalf("after the converted cursor %s: %v, want %v", text, unread, want)
	}

	// New events carry on after each shard's end.
	if err := s.Commit(ctx, store.Change{Events: []event.Event{{ID: "new", Time: t0, Type: event.JobTriggered, PipelineID: "orders"}}}); err != nil {
		t.Fatal(err)
	}
	page, err := s.EventList(ctx, store.EventListParams{PipelineID: "orders", After: all.Next})
	if err != nil || len(page.Events) != 1 || page.Events[0].Seq != next[store.EventShard("orders")]+1 {
		t.Fatalf("new event: %+v, %v; want seq %d", page.Events, err, next[store.EventShard("orders")]+1)
	}
}

// TestMigrationMovesAlertMarkers: the delivery state internal/alert kept
// in markers under '#alert…' pipeline ids before 0008 becomes the typed
// records, and the markers go.
func TestMigrationMovesAlertMarkers(t *testing.T) {
	db, path := databaseAt(t, 7)
	ctx := t.Context()
	t0 := time.Date(2026, time.March, 7, 6, 0, 0, 0, time.UTC)
	at := t0.Add(time.Hour).UnixNano()
	for _, m := range [][3]string{
		{"#alert", "cursor", `{"cursor":"v1.0.5"}`},
		{"#alert", "dead:ev-9", `{"type":"JOB_FAILED","pipelineId":"orders","scheduleId":"cron","date":"2026-03-07","eventTime":"2026-03-07T06:00:00Z","attempts":8,"error":"HTTP 503"}`},
		{"#alert-thread", "orders/cron/2026-03-07", `{"ts":"1700.01","channel":"C1"}`},
		{"#alert-sent", "orders/cron/2026-03-07/SLA_BREACH/abc123", `{"id":"ev-1"}`},
		{"#alert-alerted", "orders/cron/2026-03-07", `{"id":"ev-1","type":"SLA_BREACH"}`},
		{"#alert-sent", "orders/cron//CONFIG_INVALID/def456", `{"id":"ev-2"}`},
	} {
		if _, err := db.ExecContext(ctx, `INSERT INTO markers (pipeline_id, schedule_id, period, kind, at, detail) VALUES (?, 'slack', '', ?, ?, ?)`,
			m[0], m[1], at, m[2]); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s := openPath(t, path)
	key := run.Key{PipelineID: "orders", ScheduleID: "cron", Period: "2026-03-07"}
	when := t0.Add(time.Hour)
	check := func(what string, got, want any, err error) {
		t.Helper()
		if err != nil || fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s: %+v, %v; want %+v", what, got, err, want)
		}
	}
	c, err := s.DeliveryCursorGet(ctx, "slack")
	check("cursor", c, store.DeliveryCursor{Sink: "slack", Cursor: store.Cursor{0, 5}, At: when}, err)
	dls, err := s.DeadLetterList(ctx, "slack")
	check("dead letters", dls, []store.DeadLetter{{Sink: "slack", EventID: "ev-9", Type: event.JobFailed, Key: key,
		EventTime: t0, Attempts: 8, Error: "HTTP 503", At: when}}, err)
	th, err := s.AlertThreadGet(ctx, "slack", key)
	check("thread", th, store.AlertThread{Sink: "slack", Key: key, TS: "1700.01", Channel: "C1", At: when}, err)
	se, err := s.AlertSentGet(ctx, "slack", key, event.SLABreach, "abc123")
	check("sent", se, store.AlertSent{Sink: "slack", Key: key, Type: event.SLABreach, Hash: "abc123", EventID: "ev-1", At: when}, err)
	noPeriod := run.Key{PipelineID: "orders", ScheduleID: "cron"}
	se, err = s.AlertSentGet(ctx, "slack", noPeriod, event.ConfigInvalid, "def456")
	check("sent without a period", se, store.AlertSent{Sink: "slack", Key: noPeriod, Type: event.ConfigInvalid, Hash: "def456", EventID: "ev-2", At: when}, err)
	al, err := s.AlertAlertedGet(ctx, "slack", key)
	check("alerted", al, store.AlertAlerted{Sink: "slack", Key: key, EventID: "ev-1", Type: event.SLABreach, At: when}, err)
	markers, err := s.MarkerList(ctx, store.MarkerListParams{})
	if err != nil || len(markers) != 0 {
		t.Errorf("markers left after the move: %+v, %v", markers, err)
	}
}
