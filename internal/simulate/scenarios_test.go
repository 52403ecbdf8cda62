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
	// Every Change the engine commits is checked (changecheck_test.go);
	// the largest is reported once the parallel scenarios are done.
	largest := &largestChange{}
	t.Cleanup(func() {
		t.Logf("largest Change in %s: %d records (%s), at most %d allowed", dir, largest.records, largest.scenario, store.MaxChangeRecords)
	})
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			t.Parallel()
			sc, err := scenario.Load(f)
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			res, err := simulate.Run(t.Context(), sc, simulate.Options{OpenStore: checkedOpener(t, largest), Dir: t.TempDir()})
			if err != nil {
				t.Fatalf("run: %v", err)
			}
			if res.Facts.LateReads > 0 {
				t.Errorf("%s: %d late reads (facts an input's needs did not name, engine/facts.go); the last: %s", f, res.Facts.LateReads, res.Facts.LastLate)
			}
			for _, c := range res.Checks {
				if !c.OK {
					t.Errorf("%s:%d: %s %s: %s", f, c.Matcher.Line, c.Kind(), c.What(), c.Why)
				}
			}
			// A refusal the scenario does not expect (refused: true on
			// the action, checked above) is a mistake in the scenario.
			expected := map[int]bool{}
			for _, a := range sc.Timeline {
				expected[a.Line] = a.Refused
			}
			for _, a := range res.Errors {
				if !expected[a.Line] {
					t.Errorf("%s: timeline line %d refused: %s (mark the action refused: true if that is the point)", f, a.Line, a.Err)
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
// pass. The repository carries a copy (testdata/scenarios/shared), so a
// clean clone runs them too.
func TestSharedScenarios(t *testing.T) {
	runScenarioDir(t, filepath.Join("..", "..", "testdata", "scenarios", "shared"))
}

// TestSharedScenariosAreCurrent: where the product's scenarios sit beside
// the repository (../shared/scenarios), the copy must equal them, so an
// update there cannot go unnoticed.
func TestSharedScenariosAreCurrent(t *testing.T) {
	src := filepath.Join("..", "..", "..", "shared", "scenarios")
	files, err := filepath.Glob(filepath.Join(src, "*.yaml"))
	if err != nil || len(files) == 0 {
		t.Skipf("no product scenarios beside the repository at %s (the copy in testdata is what runs)", src)
	}
	for _, f := range files {
		want, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join("..", "..", "testdata", "scenarios", "shared", filepath.Base(f)))
		if err != nil || string(got) != string(want) {
			t.Errorf("testdata/scenarios/shared/%s differs from %s (%v): copy it again", filepath.Base(f), f, err)
		}
	}
}

// TestScenarios runs the project's own scenarios: one or more per behaviour
// and per event type the engine emits.
func TestScenarios(t *testing.T) {
	runScenarioDir(t, filepath.Join("..", "..", "testdata", "scenarios"))
}
