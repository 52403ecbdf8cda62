package sqlite

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// TestQueryPlans pins the plans of the reads whose cost must follow recent
// activity, not stored history: the watchdog makes them on every pass. A
// plan that starts with "SCAN <table>" (no index) reads every row ever
// written. The planner has no statistics (the store runs no ANALYZE), so
// these plans change only with the schema, the SQL or the SQLite version —
// each of which deserves this test failing.
func TestQueryPlans(t *testing.T) {
	from := "2026-03-10"
	since := time.Date(2026, time.March, 10, 0, 0, 0, 0, time.UTC)
	// stmt takes a query builder's two results as one value.
	type statement struct {
		q    string
		args []any
	}
	stmt := func(q string, args []any) statement { return statement{q, args} }
	tests := []struct {
		name   string
		stmt   statement
		want   string // a step of the plan
		noSort bool   // the index gives the order: no temporary b-tree at all
	}{
		{"RunListPeriodFrom", stmt(dialect.RunListQuery(store.RunListParams{PeriodFrom: from})),
			"SEARCH runs USING INDEX runs_period (period>?)", false},
		// The watchdog's incremental pass: what changed since, not every
		// recent period.
		{"RunListUpdatedSince", stmt(dialect.RunListQuery(store.RunListParams{UpdatedSince: since})),
			"SEARCH runs USING INDEX runs_updated (updated_at>?)", false},
		{"MarkerListSince", stmt(dialect.MarkerListQuery(store.MarkerListParams{Since: since})),
			"SEARCH markers USING INDEX markers_at (at>?)", false},
		{"RunListActiveOfPipeline", stmt(dialect.RunListQuery(store.RunListParams{PipelineID: "orders", ActiveOnly: true})),
			"SEARCH runs USING INDEX runs_active (pipeline_id=?)", false},
		{"RunListPeriodFromOfPipeline", stmt(dialect.RunListQuery(store.RunListParams{PipelineID: "orders", PeriodFrom: from})),
			"SEARCH runs USING INDEX runs_pipeline_period (pipeline_id=? AND period>?)", true},
		// The new period index must not take the active-run scan away
		// from the small partial index.
		{"RunListActiveOnlyStaysOnTheActiveSet", stmt(dialect.RunListQuery(store.RunListParams{ActiveOnly: true})),
			"SCAN runs USING INDEX runs_active", false},
		{"MarkerListPeriodFrom", stmt(dialect.MarkerListQuery(store.MarkerListParams{PeriodFrom: from})),
			"SEARCH markers USING INDEX markers_period_kind (period>?)", false},
		{"SensorListChangedSince", stmt(dialect.SensorListChangedQuery(store.SensorListChangedParams{Since: since, Watched: true})),
			"SEARCH sensors USING INDEX sensors_changed (changed_at>?)", true},
		{"SensorListChangedSinceLimit", stmt(dialect.SensorListChangedQuery(store.SensorListChangedParams{Since: since, Watched: true, Limit: 10})),
			"SEARCH sensors USING INDEX sensors_changed (changed_at>?)", true},
		// The event log: one shard from a cursor position, or one
		// pipeline's (period's) events, each in seq order from the index.
		{"EventListOfShard", stmt(eventListQuery(store.EventListParams{After: store.Cursor{3: 10}}, 3)),
			"SEARCH events USING INDEX sqlite_autoindex_events_1 (shard=? AND seq>?)", true},
		{"EventListOfShardByType", stmt(eventListQuery(store.EventListParams{Types: []event.Type{event.JobFailed}, Limit: 10}, 3)),
			"SEARCH events USING INDEX sqlite_autoindex_events_1 (shard=? AND seq>?)", true},
		{"EventListOfPipeline", stmt(eventListQuery(store.EventListParams{PipelineID: "orders", Limit: 10}, store.EventShard("orders"))),
			"SEARCH events USING INDEX events_pipeline (pipeline_id=? AND seq>?)", true},
		{"EventListOfPeriod", stmt(eventListQuery(store.EventListParams{PipelineID: "orders", Period: "2026-03-14",
			Types: []event.Type{event.JobCompleted, event.JobFailed}}, store.EventShard("orders"))),
			"SEARCH events USING INDEX events_period (pipeline_id=? AND date=? AND seq>?)", true},
		{"TimerListOfKind", stmt(dialect.TimerListQuery(store.TimerListParams{Kind: "sla-breach"})),
			"SCAN timers USING INDEX timers_due", true},
	}
	s := openFile(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			plan := strings.Join(explain(t, s, tc.stmt.q, tc.stmt.args), " | ")
			if !strings.Contains(plan, tc.want) {
				t.Errorf("plan %q does not contain %q", plan, tc.want)
			}
			if tc.noSort && strings.Contains(plan, "TEMP B-TREE") {
				t.Errorf("plan %q sorts; the index should give the order", plan)
			}
		})
	}
}

// explain returns the detail column of each step of q's query plan.
func explain(t *testing.T, s *Store, q string, args []any) []string {
	t.Helper()
	rows, err := s.read.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+q, args...)
	if err != nil {
		t.Fatalf("EXPLAIN QUERY PLAN: %v", err)
	}
	defer rows.Close()
	var steps []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		steps = append(steps, detail)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return steps
}
