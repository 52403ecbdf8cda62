package sqlite

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// TestExpirePlans: every batch of the retention sweep, and the scoped
// sensor reads, find their rows through an index. A step "SCAN <table>"
// (without "USING") would read every row of the history on every batch.
func TestExpirePlans(t *testing.T) {
	s := openFile(t)
	type statement struct {
		name, q string
		args    []any
	}
	var stmts []statement
	for _, x := range expiries {
		before := sqlstore.QueryNanos(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		args := []any{"2026-01-01", 100, before}
		if x.byTime() {
			args = []any{before, 100}
		}
		stmts = append(stmts, statement{"expire " + x.kind, x.query, args})
	}
	q, args := dialect.SensorListChangedQuery(store.SensorListChangedParams{PipelineID: "orders", Since: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), Limit: 1})
	stmts = append(stmts, statement{"changed sensor of a pipeline", q, args})
	for _, st := range stmts {
		t.Run(st.name, func(t *testing.T) {
			steps := explain(t, s, st.q, st.args)
			plan := strings.Join(steps, " | ")
			t.Log(plan)
			for _, step := range steps {
				if strings.HasPrefix(step, "SCAN ") && !strings.Contains(step, " USING ") {
					t.Errorf("plan %q scans a table", plan)
				}
			}
		})
	}
}
