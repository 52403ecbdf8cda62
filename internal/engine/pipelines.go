package engine

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// A decision's pipeline facts. Every decision reads its pipeline's row
// from the store — pause state, config version, first-load time, whether
// a file still defines it — and the calendars its config names, and its
// batch commits on the condition that none of them moved (batch.commit):
// a pause, a reload or a calendar change committed by any process between
// the read and the commit makes the commit conflict, and the decision is
// made again on fresh facts (Engine.retry).
//
// What a process keeps is a parse cache: a pipeline's parsed config for a
// (config version, calendar versions), so a decision does not parse YAML.
// The cache saves a parse, never answers a question: it is consulted only
// after the row and the calendars were read, and only for the versions
// read. A pipeline is parsed when a decision first needs it, so opening an
// engine costs nothing per pipeline.

// parsed is one entry of the parse cache.
type parsed struct {
	configVersion int64
	hash          string
	cals          []store.CalendarCheck // the calendars the config names, as parsed
	p             *pipeline.Pipeline
}

type parseCache struct {
	mu sync.Mutex
	m  map[string]*parsed
	// configs are the parsed configs by id, whatever their version: what
	// an input's needs are first named with (needs.ConfigCache).
	configs needs.ConfigCache
	// refused remembers the config version of a stored pipeline that no
	// longer parses, only so the log says so once per version.
	refused map[string]int64
}

func (c *parseCache) get(id string) *parsed {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[id]
}

func (c *parseCache) put(id string, x *parsed) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[id] = x
	c.configs.Put(id, x.p)
}

func (c *parseCache) drop(id string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, id)
	c.configs.Drop(id)
}

// firstRefusal reports whether the stored config version of id was not
// reported as unparseable yet, and records it.
func (c *parseCache) firstRefusal(id string, version int64) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.refused[id]; ok && v == version {
		return false
	}
	c.refused[id] = version
	return true
}

// pipelineOf reads the facts of a decision about pipeline id: nil when no
// pipeline of that id runs (never loaded, its file removed, or its stored
// config no longer parses).
func (e *Engine) pipelineOf(ctx context.Context, id string) (*loadedPipeline, error) {
	row, err := e.st.PipelineGet(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return e.pipelineOfRow(ctx, row)
}

// knownPipeline is pipelineOf for a pipeline that must run:
// unknown(id) when none of that id does.
func (e *Engine) knownPipeline(ctx context.Context, id string) (*loadedPipeline, error) {
	lp, err := e.pipelineOf(ctx, id)
	if err == nil && lp == nil {
		err = unknown(id)
	}
	return lp, err
}

// pipelineOfRow is pipelineOf for a row already read.
func (e *Engine) pipelineOfRow(ctx context.Context, row store.Pipeline) (*loadedPipeline, error) {
	if !pipeline.Running(row.RemovedAt) {
		return nil, nil
	}
	return e.withConfig(ctx, row, nil)
}

// withConfig returns row with its config: from the parse cache when the
// cache holds this config version resolved with the calendars as they are
// stored now, else parsed. all, when not nil, is every stored calendar by
// name (a caller that needs many pipelines reads them once); otherwise the
// calendars are read one by one, or listed on a parse.
func (e *Engine) withConfig(ctx context.Context, row store.Pipeline, all map[string]store.Calendar) (*loadedPipeline, error) {
	if x := e.parses.get(row.ID); x != nil && x.configVersion == row.ConfigVersion && x.hash == row.Hash {
		fresh, err := e.calendarsStill(ctx, x.cals, all)
		if err != nil {
			return nil, err
		}
		if fresh {
			return &loadedPipeline{P: x.p, Row: row, Cals: x.cals}, nil
		}
	}
	if all == nil {
		// A config that names no calendar parses the same without them:
		// they are listed only for one that does (or does not parse).
		if p, err := pipeline.ParsePipeline(row.File, row.Doc, e.parseOptions(nil, false)); err == nil && len(p.Schedule.CalendarNames()) == 0 {
			return e.parsedConfig(row, p, nil), nil
		}
		var err error
		if all, err = e.calendars(ctx); err != nil {
			return nil, err
		}
	}
	p, err := pipeline.ParsePipeline(row.File, row.Doc, e.parseOptions(all, false))
	if err != nil {
		if e.parses.firstRefusal(row.ID, row.ConfigVersion) {
			e.log.ErrorContext(ctx, "stored pipeline config no longer loads; it does not run", "pipeline", row.ID, "version", row.ConfigVersion, "err", err)
		}
		return nil, nil
	}
	return e.parsedConfig(row, p, all), nil
}

// parsedConfig caches p, parsed from row with the calendars all, and
// returns it loaded.
func (e *Engine) parsedConfig(row store.Pipeline, p *pipeline.Pipeline, all map[string]store.Calendar) *loadedPipeline {
	x := &parsed{configVersion: row.ConfigVersion, hash: row.Hash, p: p}
	for _, name := range p.Schedule.CalendarNames() {
		x.cals = append(x.cals, store.CalendarCheck{Name: name, Version: all[name].Version})
	}
	e.parses.put(row.ID, x)
	return &loadedPipeline{P: p, Row: row, Cals: x.cals}
}

// calendarsStill reports whether every calendar is still at the version
// a parse used.
func (e *Engine) calendarsStill(ctx context.Context, cals []store.CalendarCheck, all map[string]store.Calendar) (bool, error) {
	for _, c := range cals {
		var cur store.Calendar
		if all != nil {
			cur = all[c.Name]
		} else {
			var err error
			cur, err = e.st.CalendarGet(ctx, c.Name)
			if errors.Is(err, store.ErrNotFound) {
				return false, nil
			}
			if err != nil {
				return false, err
			}
		}
		if cur.Version != c.Version {
			return false, nil
		}
	}
	return true, nil
}

// calendars reads every stored calendar, removed ones too, by name.
func (e *Engine) calendars(ctx context.Context) (map[string]store.Calendar, error) {
	list, err := e.st.CalendarList(ctx)
	if err != nil {
		return nil, fmt.Errorf("engine: calendars: %w", err)
	}
	all := make(map[string]store.Calendar, len(list))
	for _, c := range list {
		all[c.Name] = c
	}
	return all, nil
}

// parseOptions are the options pipeline configs are checked against:
// the calendars that resolve a stored config, or a document being loaded
// (pipeline.CalendarResolves).
func (e *Engine) parseOptions(all map[string]store.Calendar, loading bool) pipeline.Options {
	cals := make(map[string]schedule.Calendar, len(all))
	for name, c := range all {
		if !pipeline.CalendarResolves(c.RemovedAt, loading) {
			continue
		}
		cals[name] = c.Schedule()
	}
	return pipeline.Options{Calendars: cals, EnvAllow: e.envAllow}
}

// activePipelines reads every pipeline a file defines, with its config,
// for a caller that looks at all of them (the watchdog's snapshot). The
// calendars are read once for all.
func (e *Engine) activePipelines(ctx context.Context) ([]*loadedPipeline, error) {
	rows, err := e.st.PipelineList(ctx)
	if err != nil {
		return nil, fmt.Errorf("engine: list pipelines: %w", err)
	}
	all, err := e.calendars(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]*loadedPipeline, 0, len(rows))
	for _, row := range rows {
		if !pipeline.Running(row.RemovedAt) {
			continue
		}
		lp, err := e.withConfig(ctx, row, all)
		if err != nil {
			return nil, err
		}
		if lp != nil {
			out = append(out, lp)
		}
	}
	return out, nil
}

// Pipeline returns a running pipeline's config and stored row, as a
// decision would read them now; ErrUnknownPipeline when none runs by that
// id.
func (e *Engine) Pipeline(ctx context.Context, id string) (*pipeline.Pipeline, store.Pipeline, error) {
	lp, err := e.knownPipeline(ctx, id)
	if err != nil {
		return nil, store.Pipeline{}, err
	}
	return lp.P, lp.Row, nil
}

// Pipelines lists the ids of the pipelines a file defines (those not
// removed), sorted. It reads the store; it parses nothing.
func (e *Engine) Pipelines(ctx context.Context) ([]string, error) {
	rows, err := e.st.PipelineList(ctx)
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(rows))
	for _, row := range rows {
		if pipeline.Running(row.RemovedAt) {
			ids = append(ids, row.ID)
		}
	}
	return ids, nil
}

// unknown is the error of a decision about a pipeline that does not run.
func unknown(id string) error { return decide.Unknown(id) }

// Loaded is a running pipeline's config and stored row.
type Loaded struct {
	Config *pipeline.Pipeline
	Row    store.Pipeline
}

// Running returns every pipeline a file defines with its config and row,
// sorted by id, the calendars read once for all: for a reader that shows
// all of them at once (the dashboard's overview), at one list read of the
// pipelines (configs come from the parse cache).
func (e *Engine) Running(ctx context.Context) ([]Loaded, error) {
	lps, err := e.activePipelines(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Loaded, len(lps))
	for i, lp := range lps {
		out[i] = Loaded{Config: lp.P, Row: lp.Row}
	}
	return out, nil
}
