package engine

import (
	"context"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/schedule"
)

// SetCalendars replaces the named calendars and re-resolves every loaded
// pipeline against them (a calendar's dates live inside the parsed
// pipeline, not in its stored document, so no new config version is
// written). A pipeline that no longer loads — it names a calendar that
// was removed — is refused with CONFIG_INVALID and keeps its previous
// resolution, like an invalid file. It returns how many were refused.
func (e *Engine) SetCalendars(ctx context.Context, cals map[string]schedule.Calendar) int {
	e.mu.Lock()
	e.popt.Calendars = cals
	opt := e.popt
	loaded := make([]*loadedPipeline, 0, len(e.pipelines))
	for _, lp := range e.pipelines {
		loaded = append(loaded, lp)
	}
	e.mu.Unlock()
	refused := 0
	for _, lp := range loaded {
		p, err := pipeline.ParsePipeline(lp.row.File, lp.row.Doc, opt)
		if err != nil {
			e.configInvalid(ctx, lp.row.File, lp.row.Doc, err)
			refused++
			continue
		}
		e.mu.Lock()
		if cur := e.pipelines[lp.p.ID]; cur != nil && cur.row.ConfigVersion == lp.row.ConfigVersion {
			e.pipelines[lp.p.ID] = &loadedPipeline{p: p, row: cur.row}
		}
		e.mu.Unlock()
	}
	return refused
}

// Forget stops running a pipeline whose file was removed: it leaves the
// engine's memory (its timers are dropped as they come due, its sensors
// are refused as unknown), while its history stays in the store. Loading
// its file again brings it back.
func (e *Engine) Forget(id string) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	_, ok := e.pipelines[id]
	delete(e.pipelines, id)
	return ok
}
