package engine

import (
	"context"
	"time"

	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// Root causes (docs/root-cause.md): every event the engine commits goes
// through batch.commit, so that is where a downstream problem is found
// blocked by its upstream's (deps.RootCause); a root's success arms the
// release of what it blocked (kindRelease) from the downstreams timer
// the success arms (upstream.go). The facts are read
// from the store — the upstreams' configs and their periods' facts —
// never remembered.

const kindRelease = string(run.TimerRelease) // a root's period succeeded: release the conditions it blocked

func releaseTimerKey(k run.Key) string { return run.PeriodTimer(run.TimerRelease, k).String() }

// upstreamReader answers deps.RootCause from a decision's facts, each
// pipeline and period read once per decision.
type upstreamReader struct {
	ctx   context.Context
	f     *facts
	pipes map[string]*pipeline.Pipeline
	facts map[run.Key]deps.ConditionFacts
}

func (e *Engine) upstreamReader(ctx context.Context, f *facts) *upstreamReader {
	return &upstreamReader{ctx: ctx, f: f, pipes: map[string]*pipeline.Pipeline{}, facts: map[run.Key]deps.ConditionFacts{}}
}

func (u *upstreamReader) Pipeline(id string) (*pipeline.Pipeline, error) {
	if p, ok := u.pipes[id]; ok {
		return p, nil
	}
	lp, err := u.f.pipelineOf(u.ctx, id)
	if err != nil {
		return nil, err
	}
	var p *pipeline.Pipeline
	if lp != nil {
		p = lp.p
	}
	u.pipes[id] = p
	return p, nil
}

func (u *upstreamReader) Facts(key run.Key) (deps.ConditionFacts, error) {
	if f, ok := u.facts[key]; ok {
		return f, nil
	}
	f, err := store.ConditionFactsOf(u.ctx, u.f.reader(), key)
	if err != nil {
		return f, err
	}
	u.facts[key] = f
	return f, nil
}

// rootCauses stores each problem event of the batch that an upstream root
// explains as blocked by it (Detail.blockedBy, without released: a
// released alert explained by another root is blocked again), with the
// marker on the root's period its release reads (armRelease).
func (b *batch) rootCauses(ctx context.Context) error {
	var ups *upstreamReader
	for i := range b.c.Events {
		e := &b.c.Events[i]
		if !deps.SeeksRoot(*e) {
			continue
		}
		if ups == nil {
			ups = b.e.upstreamReader(ctx, b.e.directFacts()) // the root causes are looked up as they are found
			if b.p != nil {
				ups.pipes[b.p.ID] = b.p // the decision's own config, as it read it
			}
		}
		p, err := ups.Pipeline(e.PipelineID)
		if err != nil {
			return err
		}
		per, err := schedule.ParsePeriod(e.Date)
		if err != nil {
			continue
		}
		root, ok, err := deps.RootCause(ups, p, per, b.now)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		e.Detail = deps.BlockedDetail(e.Detail, root)
		c := deps.BlockedOf(p, *e)
		b.putMarker(store.Marker{Key: root.Key(), Kind: run.BlockedMarker(c.Down, c.Type).String(), At: b.now, Detail: c.MarkerDetail()})
	}
	return nil
}

// putMarker writes m, replacing the batch's own write or delete of the
// same marker (a Change touches a record once).
func (b *batch) putMarker(m store.Marker) {
	for i, w := range b.c.Markers {
		if w.Marker.Key == m.Key && w.Marker.Kind == m.Kind {
			b.c.Markers[i] = store.MarkerWrite{Marker: m}
			return
		}
	}
	for i, d := range b.c.MarkerDeletes {
		if d.Key == m.Key && d.Kind == m.Kind {
			b.c.MarkerDeletes = append(b.c.MarkerDeletes[:i:i], b.c.MarkerDeletes[i+1:]...)
			break
		}
	}
	b.marker(m, false)
}

// armRelease sets the release timer of a period that succeeded, if it
// blocked downstream conditions (its blocked markers). It is called by
// the downstreams timer its success arms (upstream.go), and only for a
// pipeline that has downstreams — only those can be a root — so a
// success costs no read more on the commit that records it.
func (e *Engine) armRelease(ctx context.Context, b *batch, key run.Key) error {
	ms, err := b.f.markersOf(ctx, key)
	if err != nil {
		return err
	}
	at, ok := deps.ReleaseAt(b.now, blockedConditions(ms))
	if !ok || b.touchesTimer(releaseTimerKey(key)) {
		return nil
	}
	b.putTimer(store.Timer{Key: releaseTimerKey(key), Kind: kindRelease, Run: key, DueAt: at}, nil)
	return nil
}

func blockedConditions(ms []store.Marker) []deps.BlockedCondition {
	var out []deps.BlockedCondition
	for _, m := range ms {
		if c, ok := deps.BlockedFromMarker(m.Kind, m.Detail); ok {
			out = append(out, c)
		}
	}
	return out
}

// releaseTimer releases the conditions a root's period blocked (deps.Release):
// each is alerted again or resolved, and its marker removed in the same
// commit, so each is released once. A root that is no longer succeeded
// (a rerun reopened it) keeps them blocked: its next success releases them.
func (e *Engine) releaseTimer(ctx context.Context, fs *facts, t store.Timer, now time.Time) (*batch, error) {
	b := e.newBatch(nil, now).withFacts(fs)
	f, err := store.ConditionFactsOf(ctx, fs.reader(), t.Run)
	if err != nil {
		return nil, err
	}
	if !f.Succeeded() {
		return b, nil
	}
	ms, err := fs.markersOf(ctx, t.Run)
	if err != nil {
		return nil, err
	}
	ups := e.upstreamReader(ctx, fs)
	var held []deps.HeldCondition
	var kept []store.Marker
	for _, m := range ms {
		c, ok := deps.BlockedFromMarker(m.Kind, m.Detail)
		if !ok {
			continue
		}
		p, err := ups.Pipeline(c.Down.PipelineID)
		if err != nil {
			return nil, err
		}
		df, err := ups.Facts(c.Down)
		if err != nil {
			return nil, err
		}
		held = append(held, deps.HeldCondition{Condition: c, Pipeline: p, Facts: df})
		kept = append(kept, m)
	}
	d := deps.ReleaseHeld(t.Run, held, now)
	for _, r := range d.Released {
		if n := r.Note; n != nil {
			b.emit(held[r.Index].Condition.Down, n.Type, n.Message, n.Detail)
		}
		m := kept[r.Index]
		b.c.MarkerDeletes = append(b.c.MarkerDeletes, store.MarkerDelete{Key: m.Key, Kind: m.Kind})
	}
	if !d.Again.IsZero() {
		due := t.DueAt
		b.putTimer(store.Timer{Key: t.Key, Kind: kindRelease, Run: t.Run, DueAt: d.Again}, &due)
	}
	return b, nil
}
