package simulate_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/scenario"
	"github.com/interlockhq/interlock/internal/simulate"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

func openSQLite(ctx context.Context, path string) (store.Store, error) {
	return sqlite.OpenScratch(ctx, path)
}

// runScenarioDir runs every scenario in dir as a subtest.
func runScenarioDir(t *testing.T, dir string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no scenarios in %s", dir)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			t.Parallel()
			sc, err := scenario.Load(f)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			res, err := simulate.Run(t.Context(), sc, simulate.Options{OpenStore: openSQLite, Dir: t.TempDir()})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			for _, c := range res.Checks {
				if !c.OK {
					kind := "expect"
					if c.Absent {
						kind = "absent"
					}
					t.Errorf("%s:%d: %s %s: %s", f, c.Matcher.Line, kind, simulate.Describe(c.Matcher), c.Why)
				}
			}
			for _, a := range res.Errors {
				if !strings.Contains(filepath.Base(f), "refused") {
					t.Errorf("timeline line %d refused: %s", a.Line, a.Err)
				}
			}
			if t.Failed() {
				for _, e := range res.Events {
					t.Logf("%s %-26s %s %s %s", e.Time.Format("2006-01-02T15:04:05Z"), e.Type, e.PipelineID, e.Date, e.Message)
				}
			}
		})
	}
}

// TestSharedScenarios runs the product's example scenarios, which must all
// pass. They live beside the repository (../shared/scenarios).
func TestSharedScenarios(t *testing.T) {
	dir := filepath.Join("..", "..", "..", "shared", "scenarios")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("shared scenarios not present beside the repository: %v", err)
	}
	runScenarioDir(t, dir)
}

// TestScenarios runs the project's own scenarios: one or more per behaviour
// and per event type the engine emits.
func TestScenarios(t *testing.T) {
	runScenarioDir(t, filepath.Join("..", "..", "testdata", "scenarios"))
}
