package sqlite

import (
	"slices"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/pause"
	"github.com/interlockhq/interlock/internal/store"
)

// TestMigrationKeepsPauseWindows: a database an older binary left, whose
// pause windows are markers of kind "paused:<start>" (and, for the last
// pause, the row's paused_at and resumed_at), opens with the windows on
// the pipelines' rows, oldest first, and without those markers.
func TestMigrationKeepsPauseWindows(t *testing.T) {
	db, path := databaseAt(t, 8)
	ctx := t.Context()
	t0 := time.Date(2026, time.March, 14, 6, 0, 0, 123456789, time.UTC)
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.ExecContext(ctx, q, args...); err != nil {
			t.Fatal(err)
		}
	}
	pipe := func(id string, paused int, pausedAt, resumedAt any) {
		exec(`INSERT INTO pipelines (id, version, config_version, doc, hash, file, paused, paused_at, resumed_at) VALUES (?, 1, 1, x'', 'h', 'f', ?, ?, ?)`, id, paused, pausedAt, resumedAt)
	}
	marker := func(id, period, kind string, at time.Time) {
		exec(`INSERT INTO markers (pipeline_id, schedule_id, period, kind, at, detail) VALUES (?, 'cron', ?, ?, ?, NULL)`, id, period, kind, at.UnixNano())
	}
	streamMarker := func(id, period, kind string, at time.Time) {
		exec(`INSERT INTO markers (pipeline_id, schedule_id, period, kind, at, detail) VALUES (?, 'stream', ?, ?, ?, NULL)`, id, period, kind, at.UnixNano())
	}
	w := func(from, to time.Duration) pause.Window {
		return pause.Window{From: t0.Add(from), To: t0.Add(to)}
	}
	// orders: two windows as markers, the earlier under the schedule id
	// of a config before its cron was added ("stream" sorts after "cron"),
	// the last one also on the row.
	pipe("orders", 0, t0.Add(5*time.Hour).UnixNano(), t0.Add(6*time.Hour).UnixNano())
	marker("orders", "2026-03-14", "paused:"+t0.Add(5*time.Hour).Format(time.RFC3339Nano), t0.Add(6*time.Hour))
	streamMarker("orders", "2026-03-13", "paused:"+t0.Add(-20*time.Hour).Format(time.RFC3339Nano), t0.Add(-19*time.Hour))
	marker("orders", "2026-03-14", "sla-breach", t0)
	// billing: only the row knows its last pause. audit: paused now, with an
	// earlier window. zeta: a marker whose start cannot be read.
	pipe("billing", 0, t0.Add(time.Hour).UnixNano(), t0.Add(2*time.Hour).UnixNano())
	pipe("audit", 1, t0.Add(3*time.Hour).UnixNano(), nil)
	marker("audit", "2026-03-14", "paused:"+t0.Format(time.RFC3339Nano), t0.Add(time.Hour))
	pipe("zeta", 0, nil, nil)
	marker("zeta", "2026-03-14", "paused:yesterday", t0)
	db.Close()

	s := openPath(t, path)
	want := map[string][]pause.Window{
		"orders":  {w(-20*time.Hour, -19*time.Hour), w(5*time.Hour, 6*time.Hour)},
		"billing": {w(time.Hour, 2*time.Hour)},
		"audit":   {w(0, time.Hour)},
		"zeta":    nil,
	}
	for id, ws := range want {
		p, err := s.PipelineGet(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(p.PauseWindows, ws, func(a, b pause.Window) bool { return a.From.Equal(b.From) && a.To.Equal(b.To) }) {
			t.Errorf("%s: windows %v, want %v", id, p.PauseWindows, ws)
		}
	}
	all, err := s.MarkerList(ctx, store.MarkerListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Kind != "sla-breach" {
		t.Errorf("markers after the migration: %v, want the sla-breach marker only", all)
	}
}
