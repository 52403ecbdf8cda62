package local

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

func TestReloadAppliesChangesAndRefusesInvalidOnce(t *testing.T) {
	dir := t.TempDir()
	write := writer(t, dir)
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
	p, row, _ := a.Engine.Pipeline(t.Context(), "p")
	if p.Job.Config.Str("jobName") != "two" || row.ConfigVersion != 2 {
		t.Fatalf("running config: %q v%d", p.Job.Config.Str("jobName"), row.ConfigVersion)
	}
	write("pipelines/p.yaml", strings.Replace(good, "check: exists", "check: exist", 1))
	for i := 0; i < 3; i++ {
		rl.reload(t.Context())
	}
	invalidPage, err := a.Store.EventList(t.Context(), store.EventListParams{Types: []event.Type{event.ConfigInvalid}})
	invalid := invalidPage.Events
	if err != nil || len(invalid) != 1 || invalid[0].PipelineID != "p" {
		t.Fatalf("CONFIG_INVALID events: %d %v", len(invalid), err)
	}
	if p, _, _ := a.Engine.Pipeline(t.Context(), "p"); p.Job.Config.Str("jobName") != "two" {
		t.Fatal("the last valid version did not keep running")
	}
	// Removing the file stops the pipeline.
	if err := os.Remove(filepath.Join(dir, "pipelines/p.yaml")); err != nil {
		t.Fatal(err)
	}
	rl.reload(t.Context())
	if _, _, err := a.Engine.Pipeline(t.Context(), "p"); err == nil {
		t.Fatal("a removed pipeline file kept its pipeline running")
	}
}

func TestPipelinesWithoutFilesDoNotRunAfterRestart(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "pipelines"), 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "interlock.yaml")
	if err := os.WriteFile(cfg, []byte("store: sqlite:./state.db\npipelines: ./pipelines\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc := "pipeline: {id: gone}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: glue, config: {jobName: j}}\n"
	a, err := app.Open(t.Context(), cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Engine.ApplyConfig(t.Context(), "gone.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	a.Close()
	// Restart with no file defining it: the stored pipeline does not run.
	a, err = app.Open(t.Context(), cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, _, err := a.Engine.Pipeline(t.Context(), "gone"); err != nil {
		t.Fatal("the store should still know the pipeline before the first look")
	}
	newReloader(a, slog.New(slog.DiscardHandler)).reload(t.Context())
	if _, _, err := a.Engine.Pipeline(t.Context(), "gone"); err == nil {
		t.Fatal("a pipeline without a file runs after a restart")
	}
}

func TestReloadCalendars(t *testing.T) {
	dir := t.TempDir()
	write := writer(t, dir)
	write("interlock.yaml", "store: sqlite:./state.db\npipelines: ./pipelines\ncalendars: ./calendars\n")
	write("calendars/hol.yaml", "name: holidays\ndates: [\"2026-12-25\"]\n")
	write("pipelines/p.yaml", "pipeline: {id: p}\nschedule: {trigger: {key: k, check: exists}, exclude: {calendar: holidays}}\njob: {type: glue, config: {jobName: j}}\n")
	a, err := app.Open(t.Context(), filepath.Join(dir, "interlock.yaml"), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rl := newReloader(a, slog.New(slog.DiscardHandler))
	rl.reload(t.Context())
	excluded := func(date string) bool {
		p, _, _ := a.Engine.Pipeline(t.Context(), "p")
		d, _ := schedule.ParseDate(date)
		return p.Schedule.Exclude.Days.Contains(d)
	}
	if !excluded("2026-12-25") || excluded("2026-12-31") {
		t.Fatal("initial calendar")
	}
	write("calendars/hol.yaml", "name: holidays\ndates: [\"2026-12-25\", \"2026-12-31\"]\n")
	rl.reload(t.Context())
	if !excluded("2026-12-31") {
		t.Fatal("an added holiday did not take effect")
	}
	// Removing the calendar breaks the pipeline: refused, previous kept.
	if err := os.Remove(filepath.Join(dir, "calendars/hol.yaml")); err != nil {
		t.Fatal(err)
	}
	rl.reload(t.Context())
	if !excluded("2026-12-31") {
		t.Fatal("the previous resolution was not kept")
	}
	invalidPage, _ := a.Store.EventList(t.Context(), store.EventListParams{Types: []event.Type{event.ConfigInvalid}})
	invalid := invalidPage.Events
	if len(invalid) != 1 {
		t.Fatalf("CONFIG_INVALID events: %d", len(invalid))
	}
}

// writer returns a function that writes files under dir.
func writer(t *testing.T, dir string) func(name, body string) {
	return func(name, body string) {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestRestoredPipelineGetsItsTimersBack: a pipeline file removed and
// restored unchanged keeps its cron (the ticks due meanwhile were dropped).
func TestRestoredPipelineGetsItsTimersBack(t *testing.T) {
	dir := t.TempDir()
	write := writer(t, dir)
	write("interlock.yaml", "store: sqlite:./state.db\npipelines: ./pipelines\n")
	doc := "pipeline: {id: nightly}\nschedule: {cron: \"0 6 * * *\"}\njob: {type: glue, config: {jobName: j}}\n"
	write("pipelines/n.yaml", doc)
	a, err := app.Open(t.Context(), filepath.Join(dir, "interlock.yaml"), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rl := newReloader(a, slog.New(slog.DiscardHandler))
	rl.reload(t.Context())
	if err := os.Remove(filepath.Join(dir, "pipelines/n.yaml")); err != nil {
		t.Fatal(err)
	}
	rl.reload(t.Context())
	// While it is gone, its cron timer is dropped as it comes due.
	if err := a.Store.Commit(t.Context(), store.Change{TimerDeletes: []store.TimerDelete{{Key: "cron/nightly"}}}); err != nil {
		t.Fatal(err)
	}
	write("pipelines/n.yaml", doc)
	rl.reload(t.Context())
	if _, err := a.Store.TimerGet(t.Context(), "cron/nightly"); err != nil {
		t.Fatalf("the restored pipeline has no cron timer: %v", err)
	}
}

// TestReloadFollowsPipelineIDsNotFileNames: a pipeline runs while some
// file defines it, valid or refused; a calendar that appears later makes a
// file that named it valid.
func TestReloadFollowsPipelineIDsNotFileNames(t *testing.T) {
	dir := t.TempDir()
	write := writer(t, dir)
	cfg := filepath.Join(dir, "interlock.yaml")
	write("interlock.yaml", "store: sqlite:./state.db\npipelines: ./pipelines\ncalendars: ./calendars\n")
	doc := func(id, extra string) string {
		return "pipeline: {id: " + id + "}\nschedule: {trigger: {key: k, check: exists}" + extra + "}\njob: {type: glue, config: {jobName: j}}\n"
	}
	write("pipelines/a.yaml", doc("orders", ""))
	a, err := app.Open(t.Context(), cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rl := newReloader(a, slog.New(slog.DiscardHandler))
	rl.reload(t.Context())
	running := func(id string) bool { _, _, err := a.Engine.Pipeline(t.Context(), id); return err == nil }

	// Renamed: the new file defines the id the old one did.
	if err := os.Rename(filepath.Join(dir, "pipelines/a.yaml"), filepath.Join(dir, "pipelines/b.yaml")); err != nil {
		t.Fatal(err)
	}
	rl.reload(t.Context())
	if !running("orders") {
		t.Fatal("renaming a pipeline file stopped its pipeline")
	}
	// The id changed in place: the old pipeline stops, the new one runs.
	write("pipelines/b.yaml", doc("orders-v2", ""))
	rl.reload(t.Context())
	if running("orders") || !running("orders-v2") {
		t.Fatalf("after an id change: orders %v, orders-v2 %v", running("orders"), running("orders-v2"))
	}
	// Broken, then serve restarts: the last valid version keeps running.
	write("pipelines/b.yaml", doc("orders-v2", ", bogus: 1"))
	rl.reload(t.Context())
	a.Close()
	a, err = app.Open(t.Context(), cfg, app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rl = newReloader(a, slog.New(slog.DiscardHandler))
	rl.reload(t.Context())
	if !running("orders-v2") {
		t.Fatal("a refused file at restart stopped the last valid version")
	}
	// A file naming a calendar that does not exist yet is refused, and
	// applied once the calendar (and its directory) appears.
	write("pipelines/c.yaml", doc("daily", ", exclude: {calendar: holidays}"))
	rl.reload(t.Context())
	if running("daily") {
		t.Fatal("a pipeline with an unknown calendar was applied")
	}
	write("calendars/hol.yaml", "name: holidays\ndates: [\"2026-12-25\"]\n")
	rl.reload(t.Context())
	if !running("daily") {
		t.Fatal("a refused file was not retried after its calendar appeared")
	}
	invalidPage, _ := a.Store.EventList(t.Context(), store.EventListParams{Types: []event.Type{event.ConfigInvalid}})
	invalid := invalidPage.Events
	if len(invalid) != 2 {
		t.Fatalf("CONFIG_INVALID events: %d, want 2 (the broken b.yaml once, c.yaml once)", len(invalid))
	}
}

// TestReloadRefusesASecondFileForOnePipeline: two files with one
// pipeline.id do not take turns; the first keeps it, the second is refused
// once and takes over when the first goes.
func TestReloadRefusesASecondFileForOnePipeline(t *testing.T) {
	dir := t.TempDir()
	write := writer(t, dir)
	write("interlock.yaml", "store: sqlite:./state.db\npipelines: ./pipelines\n")
	doc := func(job string) string {
		return "pipeline: {id: orders}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: glue, config: {jobName: " + job + "}}\n"
	}
	write("pipelines/a.yaml", doc("from-a"))
	write("pipelines/b.yaml", doc("from-b"))
	a, err := app.Open(t.Context(), filepath.Join(dir, "interlock.yaml"), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	rl := newReloader(a, slog.New(slog.DiscardHandler))
	job := func() string { p, _, _ := a.Engine.Pipeline(t.Context(), "orders"); return p.Job.Config.Str("jobName") }
	for i := 0; i < 3; i++ {
		if _, refused := rl.reload(t.Context()); refused != 1 {
			t.Fatalf("look %d: %d refused, want b.yaml", i, refused)
		}
	}
	if job() != "from-a" {
		t.Fatalf("running %q, want a.yaml's version", job())
	}
	invalidPage, _ := a.Store.EventList(t.Context(), store.EventListParams{Types: []event.Type{event.ConfigInvalid}})
	invalid := invalidPage.Events
	if len(invalid) != 1 || !strings.Contains(invalid[0].Message, "already defined in") {
		t.Fatalf("CONFIG_INVALID: %+v", invalid)
	}
	if err := os.Remove(filepath.Join(dir, "pipelines/a.yaml")); err != nil {
		t.Fatal(err)
	}
	if applied, refused := rl.reload(t.Context()); applied != 1 || refused != 0 || job() != "from-b" {
		t.Fatalf("after a.yaml went: applied %d refused %d running %q", applied, refused, job())
	}
}
