package local

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

func TestReloadAppliesChangesAndRefusesInvalidOnce(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("interlock.yaml", "store: sqlite:./state.db\npipelines: ./pipelines\n")
	good := "pipeline: {id: p}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: glue, config: {jobName: one}}\n"
	write("pipelines/p.yaml", good)
	a, err := app.Open(t.Context(), filepath.Join(dir, "interlock.yaml"), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rl := newReloader(a, slog.New(slog.DiscardHandler))

	if applied, refused := rl.reload(t.Context()); applied != 1 || refused != 0 {
		t.Fatalf("first load: applied %d refused %d", applied, refused)
	}
	if applied, refused := rl.reload(t.Context()); applied != 0 || refused != 0 {
		t.Fatalf("unchanged files were applied again: %d %d", applied, refused)
	}
	write("pipelines/p.yaml", strings.Replace(good, "jobName: one", "jobName: two", 1))
	if applied, _ := rl.reload(t.Context()); applied != 1 {
		t.Fatal("a changed file was not applied")
	}
	p, row, _ := a.Engine.Pipeline("p")
	if p.Job.Config.Str("jobName") != "two" || row.ConfigVersion != 2 {
		t.Fatalf("running config: %q v%d", p.Job.Config.Str("jobName"), row.ConfigVersion)
	}
	write("pipelines/p.yaml", strings.Replace(good, "check: exists", "check: exist", 1))
	for i := 0; i < 3; i++ {
		rl.reload(t.Context())
	}
	invalid, err := a.Store.EventList(t.Context(), store.EventListParams{Types: []event.Type{event.ConfigInvalid}})
	if err != nil || len(invalid) != 1 || invalid[0].PipelineID != "p" {
		t.Fatalf("CONFIG_INVALID events: %d %v", len(invalid), err)
	}
	if p, _, _ := a.Engine.Pipeline("p"); p.Job.Config.Str("jobName") != "two" {
		t.Fatal("the last valid version did not keep running")
	}
}
