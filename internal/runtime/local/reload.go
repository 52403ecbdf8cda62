package local

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

// reloader applies the project's pipeline files to the engine as they
// change. Only files whose content changed are applied again, so an
// invalid file is refused (CONFIG_INVALID) once, not on every look.
type reloader struct {
	a   *app.App
	log *slog.Logger

	mu        sync.Mutex
	hashes    map[string][sha256.Size]byte
	ids       map[string]string // file → the pipeline id it defines (read from refused files too)
	refused   map[string]error  // files refused at their last change, and why
	calendars [sha256.Size]byte // of every calendar file, in order

	// shown is the refused files as of the last look, for GET /v1/health
	// (read without waiting for a reload in progress).
	shown atomic.Pointer[[]api.RefusedConfig]
}

func newReloader(a *app.App, log *slog.Logger) *reloader {
	return &reloader{a: a, log: log, hashes: map[string][sha256.Size]byte{}, ids: map[string]string{}, refused: map[string]error{}}
}

// reload looks at every pipeline file once and returns how many were
// applied and how many refused.
func (r *reloader) reload(ctx context.Context) (applied, refused int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.reloadCalendars(ctx)
	files, err := pipeline.PipelineFiles(r.a.Path(r.a.Settings.Pipelines))
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			r.log.Error("listing pipeline files", "err", err)
		}
		return 0, 0
	}
	seen := map[string]bool{}
	for _, f := range files {
		seen[f] = true
	}
	owner := map[string]string{} // pipeline id → the listed file that defines it
	for f, id := range r.ids {
		if seen[f] {
			owner[id] = f
		}
	}
	claim := func(f, id string) {
		if old, ok := r.ids[f]; ok && owner[old] == f {
			delete(owner, old)
		}
		delete(r.ids, f)
		if id != "" {
			r.ids[f], owner[id] = id, f
		}
	}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			r.log.Error("reading pipeline file", "file", f, "err", err)
			continue
		}
		sum := sha256.Sum256(data)
		if prev, ok := r.hashes[f]; ok && prev == sum {
			continue
		}
		r.hashes[f] = sum
		id := engine.PipelineIDOf(f, data)
		if other, ok := owner[id]; ok && id != "" && other != f {
			// Two files must not take turns running one pipeline: the
			// file that defined it first keeps it. This one is looked at
			// again each time (no cached hash), so it takes over when the
			// other file goes; CONFIG_INVALID is still once per content.
			err := fmt.Errorf("%s: pipeline.id: pipeline %q is already defined in %s", f, id, other)
			r.a.Engine.RefuseConfig(ctx, f, data, err)
			if r.refused[f] == nil {
				r.log.Warn("pipeline file refused", "file", f, "err", err)
			}
			refused++
			r.refused[f] = err
			delete(r.hashes, f)
			claim(f, "")
			continue
		}
		p, err := r.a.Engine.ApplyConfig(ctx, f, data)
		if err != nil {
			refused++
			r.refused[f] = err
			// A refused file still claims its pipeline: the last valid
			// version keeps running (also when serve restarts with it).
			claim(f, id)
			r.log.Warn("pipeline file refused; the previous version (if any) keeps running", "file", f, "err", err)
			continue
		}
		delete(r.refused, f)
		claim(f, p.ID)
		applied++
	}
	// Forget what was known of files that are gone.
	maps.DeleteFunc(r.hashes, func(f string, _ [sha256.Size]byte) bool { return !seen[f] })
	maps.DeleteFunc(r.ids, func(f, _ string) bool { return !seen[f] })
	maps.DeleteFunc(r.refused, func(f string, _ error) bool { return !seen[f] })
	r.show()
	// A pipeline runs while some file defines it: a file renamed, or an id
	// moved to another file, keeps it; a file removed (also while serve was
	// down) or an id changed in place stops the old one. Its history stays.
	defined := map[string]bool{}
	for _, id := range r.ids {
		defined[id] = true
	}
	running, err := r.a.Engine.Pipelines(ctx)
	if err != nil {
		r.log.Error("listing stored pipelines", "err", err)
	}
	for _, id := range running {
		if defined[id] {
			continue
		}
		forgot, err := r.a.Engine.Forget(ctx, id)
		switch {
		case err != nil:
			r.log.Error("cannot stop a pipeline no file defines", "pipeline", id, "err", err)
		case forgot:
			r.log.Warn("no pipeline file defines this pipeline: it does not run (its history stays)", "pipeline", id)
		}
	}
	return applied, refused
}

// reloadCalendars loads the calendars directory again when any file in it
// changed (and at the first look), and stores the calendars through the
// engine: every process resolves pipelines with the stored calendars. An
// invalid calendar file keeps the previous calendars.
func (r *reloader) reloadCalendars(ctx context.Context) {
	dir := r.a.Path(r.a.Settings.Calendars)
	if dir == "" {
		return
	}
	h := sha256.New()
	entries, err := os.ReadDir(dir)
	if err != nil {
		return // no calendars directory (yet): nothing to reload
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			continue
		}
		h.Write([]byte(e.Name()))
		h.Write(data)
	}
	var sum [sha256.Size]byte
	copy(sum[:], h.Sum(nil))
	if sum == r.calendars {
		return
	}
	cals, err := pipeline.LoadCalendarDir(dir)
	if err != nil {
		r.log.Error("calendar files refused; the previous calendars stay", "err", err)
		r.calendars = sum // refused once per content, not on every look
		return
	}
	refused, err := r.a.Engine.SetCalendars(ctx, cals)
	if err != nil {
		r.log.Error("cannot store the calendars; will try again", "err", err)
		return
	}
	r.calendars = sum
	r.log.Info("calendars reloaded", "calendars", len(cals), "pipelines refused", refused)
	// A file refused for a calendar it named may be valid now: look again.
	for f := range r.refused {
		delete(r.hashes, f)
	}
}

// show publishes the refused files, by file name.
func (r *reloader) show() {
	out := make([]api.RefusedConfig, 0, len(r.refused))
	for _, f := range slices.Sorted(maps.Keys(r.refused)) {
		out = append(out, api.RefusalOf(f, r.refused[f]))
	}
	r.shown.Store(&out)
}

// Refused returns the pipeline files refused at their last change, as of
// the last look, by file name.
func (r *reloader) Refused() []api.RefusedConfig {
	if p := r.shown.Load(); p != nil {
		return *p
	}
	return nil
}
