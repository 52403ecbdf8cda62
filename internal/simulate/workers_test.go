package simulate_test

import (
	"fmt"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/scenario"
	"github.com/interlockhq/interlock/internal/simulate"
)

// Timers due at one instant, and sensor writes at one instant, are
// processed on two workers (engine.RunDueOn, AtOnce) with the outcome of
// one by one: every scenario of the corpus, and a busy one where many
// pipelines are due at once and two pipelines' sensors arrive each
// minute, logs the same events in the same order either way (ids aside,
// which differ from run to run).
func TestTimerWorkersKeepTheLog(t *testing.T) {
	var files []string
	for _, dir := range []string{filepath.Join("..", "..", "testdata", "scenarios"), filepath.Join("..", "..", "testdata", "scenarios", "shared")} {
		fs, err := filepath.Glob(filepath.Join(dir, "*.yaml"))
		if err != nil || len(fs) == 0 {
			t.Fatalf("no scenarios in %s (%v)", dir, err)
		}
		files = append(files, fs...)
	}
	busy, err := scenario.Parse("busy.yaml", []byte(busyScenario(240, 2)))
	if err != nil {
		t.Fatal(err)
	}
	load := map[string]func() (*scenario.File, error){"busy": func() (*scenario.File, error) { return busy, nil }}
	for _, f := range files {
		load[strings.TrimSuffix(filepath.Base(f), ".yaml")] = func() (*scenario.File, error) { return scenario.Load(f) }
	}
	for name, get := range load {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			sc, err := get()
			if err != nil {
				t.Fatalf("load: %v", err)
			}
			// A scenario whose job crashes the process runs one by one
			// (the default, TimerWorkers 0, sees to it).
			atOnce := 2
			for _, ps := range simulate.Plans(sc) {
				for _, p := range ps {
					if p.Crash != "" {
						atOnce = 0
					}
				}
			}
			var logs, ids [2][]string
			for i, workers := range []int{1, atOnce} {
				res, err := simulate.Run(t.Context(), sc, simulate.Options{OpenStore: openSQLite, Dir: t.TempDir(), TimerWorkers: workers})
				if err != nil {
					t.Fatalf("run on %d workers: %v", workers, err)
				}
				index := map[string]string{}
				for k, e := range res.Events {
					index[e.ID] = fmt.Sprintf("event#%d", k)
				}
				for _, e := range res.Events {
					// An event's detail may name another's id: named by
					// its place in the log instead.
					line := eventID.ReplaceAllStringFunc(logLine(e), func(id string) string {
						if at, ok := index[id]; ok {
							return at
						}
						return id
					})
					logs[i] = append(logs[i], line)
					ids[i] = append(ids[i], e.ID)
				}
			}
			if !reflect.DeepEqual(logs[0], logs[1]) {
				for i := range max(len(logs[0]), len(logs[1])) {
					a, b := at(logs[0], i), at(logs[1], i)
					if a != b {
						for k := max(0, i-8); k < min(i+8, len(logs[0]), len(logs[1])); k++ {
							t.Logf("%d\n  %s %.90s\n  %s %.90s", k, ids[0][k], logs[0][k], ids[1][k], logs[1][k])
						}
						t.Fatalf("event %d of %d/%d differs:\none by one: %s\ntwo workers: %s", i, len(logs[0]), len(logs[1]), a, b)
					}
				}
			}
		})
	}
}

// eventID matches an event id (engine.newID).
var eventID = regexp.MustCompile(`[0-9a-z]+-[0-9a-f]{16}`)

func logLine(e event.Event) string {
	return fmt.Sprintf("%s %s %s/%s/%s %q %v", e.Time.Format("2006-01-02T15:04:05.000Z"), e.Type, e.PipelineID, e.ScheduleID, e.Date, e.Message, e.Detail)
}

func at(s []string, i int) string {
	if i < len(s) {
		return s[i]
	}
	return "(none)"
}
