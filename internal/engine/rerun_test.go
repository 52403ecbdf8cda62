package engine_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
)

// TestRerunVerdictIsTheCores: a refused request is told what its
// RERUN_REJECTED says (the core's typed verdict, not the event read
// back), and the reasons Interlock keeps are refused before anything is
// decided.
func TestRerunVerdictIsTheCores(t *testing.T) {
	f := newFixture(t)
	running(t, f)
	res, err := f.eng.RequestRerun(t.Context(), "orders", "2026-03-10", "manual")
	if err != nil || res.Accepted || res.Duplicate {
		t.Fatalf("rerun of a running period: %+v %v", res, err)
	}
	evs := f.events(t, event.RerunRejected)
	if len(evs) != 1 || res.Reason != evs[0].Message || !strings.Contains(res.Reason, "a run is in progress") {
		t.Fatalf("reason %q; events %+v", res.Reason, evs)
	}
	if _, err := f.eng.RequestRerun(t.Context(), "orders", "2026-03-10", "backfill"); !errors.Is(err, engine.ErrInvalidRequest) {
		t.Fatalf("reason backfill: %v", err)
	}
}
