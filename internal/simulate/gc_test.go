package simulate

import (
	"context"
	"os"
	"runtime/debug"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/scenario"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// gcSeen records the collector's target at each watchdog pass.
type gcSeen struct{ percents []int }

func (g *gcSeen) Pass(context.Context, *engine.Engine, time.Time) error {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	g.percents = append(g.percents, p)
	return nil
}

func runForGC(t *testing.T) *gcSeen {
	t.Helper()
	sc, err := scenario.Parse("gc.yaml", []byte("name: gc\nstart: 2026-03-01T00:00:00Z\nend: 2026-03-01T01:00:00Z\npipelines:\n  - pipeline: {id: a}\n    schedule: {trigger: {key: landed, check: exists}}\n    job: {type: glue, config: {jobName: j}}\n"))
	if err != nil {
		t.Fatal(err)
	}
	seen := &gcSeen{}
	open := func(ctx context.Context, path string) (store.Store, error) { return sqlite.OpenScratch(ctx, path) }
	if _, err := Run(t.Context(), sc, Options{OpenStore: open, Dir: t.TempDir(), Watchdog: seen}); err != nil {
		t.Fatal(err)
	}
	if len(seen.percents) == 0 {
		t.Fatal("no watchdog pass ran")
	}
	return seen
}

// A simulation runs with the collector's target at gcPercent and leaves
// the process's own setting as it found it.
func TestRunRaisesTheGCTarget(t *testing.T) {
	t.Setenv("GOGC", "") // restored after the test; absent during it
	os.Unsetenv("GOGC")
	before := debug.SetGCPercent(150)
	defer debug.SetGCPercent(before)
	seen := runForGC(t)
	for _, p := range seen.percents {
		if p != gcPercent {
			t.Fatalf("GC target during the simulation: %d, want %d", p, gcPercent)
		}
	}
	if after := debug.SetGCPercent(150); after != 150 {
		t.Fatalf("GC target after the simulation: %d, want the 150 it found", after)
	}
}

// A GOGC set in the environment is the user's: a simulation keeps it.
func TestRunKeepsAGOGCFromTheEnvironment(t *testing.T) {
	t.Setenv("GOGC", "150")
	before := debug.SetGCPercent(150)
	defer debug.SetGCPercent(before)
	for _, p := range runForGC(t).percents {
		if p != 150 {
			t.Fatalf("GC target during the simulation: %d, want GOGC's 150", p)
		}
	}
}
