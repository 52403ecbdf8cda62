package engine

import (
	"context"
	"errors"
	"maps"
	"slices"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// SetCalendars stores the named calendars as the calendar files now define
// them, so every process resolves pipelines with the same dates: a changed
// calendar is written (a new version, which every decision of a pipeline
// naming it reads and re-parses by), a calendar whose file went away is
// marked removed. A removed calendar keeps its dates for the pipelines
// already stored that name it — they are refused with CONFIG_INVALID and
// keep their resolution, like an invalid file — while a pipeline loaded
// from now on may not name it. It returns how many pipelines were refused.
func (e *Engine) SetCalendars(ctx context.Context, cals map[string]schedule.Calendar) (int, error) {
	var removed []string
	for _, name := range slices.Sorted(maps.Keys(cals)) {
		if _, err := e.putCalendar(ctx, cals[name], false); err != nil {
			return 0, err
		}
	}
	stored, err := e.st.CalendarList(ctx)
	if err != nil {
		return 0, err
	}
	for _, c := range stored {
		if _, ok := cals[c.Name]; ok || !run.CalendarWrites(decide.StoredCalendar(c), nil) {
			continue // defined (written above), or marked removed already
		}
		gone, err := e.putCalendar(ctx, c.Schedule(), true)
		if err != nil {
			return 0, err
		}
		if gone {
			removed = append(removed, c.Name)
		}
	}
	if len(removed) == 0 {
		return 0, nil
	}
	// The pipelines that name a removed calendar no longer load: say so.
	rows, err := e.st.PipelineList(ctx)
	if err != nil {
		return 0, err
	}
	all, err := e.calendars(ctx)
	if err != nil {
		return 0, err
	}
	refused := 0
	for _, row := range rows {
		if !pipeline.Running(row.RemovedAt) {
			continue
		}
		if _, err := pipeline.ParsePipeline(row.File, row.Doc, e.parseOptions(all, true)); err != nil {
			e.configInvalid(ctx, row.File, row.Doc, err)
			refused++
		}
	}
	return refused, nil
}

// putCalendar writes c as defined by its file (remove: as removed) unless
// the store already says so (decide.CalendarWrite); it reports whether it
// wrote. The stored calendar is read beside any batch: no calendar is a
// fact kind (store.FactsQuery).
func (e *Engine) putCalendar(ctx context.Context, c schedule.Calendar, remove bool) (bool, error) {
	wrote := false
	err := e.retry(ctx, "calendar "+c.Name, func(ctx context.Context) error {
		wrote = false
		now := e.clk.Now()
		cur, err := e.st.CalendarGet(ctx, c.Name)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		var stored *store.Calendar
		if err == nil {
			stored = &cur
		}
		defined := &c
		if remove {
			defined = nil
		}
		w, ok := decide.CalendarWrite(stored, c.Name, defined, now)
		if !ok {
			return nil
		}
		if err := e.st.Commit(ctx, store.Change{Calendars: []store.CalendarWrite{w}}); err != nil {
			return err
		}
		wrote = true
		e.log.InfoContext(ctx, "calendar stored", "calendar", c.Name, "removed", remove, "version", cur.Version+1)
		return nil
	})
	return wrote, err
}

// Forget stops running a pipeline whose file was removed: its row is
// marked removed, so no process runs it any more (its timers are dropped
// as they come due, its sensors are refused as unknown) while its history
// stays in the store. Loading its file again brings it back. It reports
// whether the pipeline was running (decide.Forget).
func (e *Engine) Forget(ctx context.Context, id string) (bool, error) {
	forgot := false
	err := e.retry(ctx, "forget "+id, func(ctx context.Context) error {
		forgot = false
		f, err := e.loadFacts(ctx, func(*facts, needs.Configs) needs.Set { return needs.Pipeline(id) })
		if err != nil {
			return err
		}
		b := &batch{e: e, f: f}
		if forgot, err = decideWith(ctx, b, decide.Forget, id, e.clk.Now()); err != nil || !forgot {
			return err
		}
		return b.commit(ctx)
	})
	return forgot, err
}
