package sqlite

import (
	"database/sql"
	"fmt"
	"path/filepath"
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
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "interlock.db")
	db, err := sql.Open("sqlite", fileURI(path))
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := migrateTo(ctx, db, ms[:6]); err != nil {
		t.Fatal(err)
	}
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

	m, err := s.MarkerGet(ctx, run.Key{PipelineID: "#alert", ScheduleID: "slack"}, "cursor")
	if err != nil {
		t.Fatal(err)
	}
	v, _ := m.Detail.Get("cursor")
	text, _ := v.Str()
	c, err := store.ParseCursor(text)
	if err != nil {
		t.Fatalf("converted cursor %q: %v", text, err)
	}
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
