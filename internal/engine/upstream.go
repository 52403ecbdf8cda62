package engine

import (
	"context"
	"time"

	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// Pipelines that depend on pipelines (docs/dependencies.md).
//
// A downstream's evaluation reads the upstream's runs of the mapped
// periods (deps.UpstreamPeriods): one RunGet for one period, one RunList
// over a period range for the hours of a day. An upstream's success
// re-evaluates its downstreams at once, durably, in three steps:
//
//  1. the commit that records the success arms one kindDownstreams timer,
//     due now (so the success commit stays small whatever the fan-out);
//  2. that timer reads the upstream's downstream index (the
//     run.DownstreamMarker markers each downstream's activation
//     writes), loads each downstream's config, maps the period
//     (deps.DownstreamPeriods) and arms one kindUpstream timer per
//     downstream period, due now;
//  3. each kindUpstream timer decides on its period alone
//     (deps.OnUpstreamSuccess): evaluate the run that waits, or open the
//     period of a downstream only upstreams start.
//
// Every step is a timer, so a process that dies between two steps leaves
// the next one armed; on AWS they are Scheduler schedules like the SLA
// timers (no router change).

const (
	kindDownstreams = string(run.TimerDownstreams) // an upstream period succeeded: find the downstream periods it feeds
	kindUpstream    = string(run.TimerUpstream)    // re-evaluate (or open) one downstream period
	// maxFanOut is how many upstream timers one commit of a downstreams
	// timer arms (store.MaxChangeRecords bounds a commit).
	maxFanOut = 48
)

func downstreamsTimerKey(k run.Key) string { return run.PeriodTimer(run.TimerDownstreams, k).String() }

func upstreamTimerKey(k run.Key) string { return run.PeriodTimer(run.TimerUpstream, k).String() }

// armDownstreams is step 1, in the commit of r's success.
func (b *batch) armDownstreams(r run.Run) {
	b.putTimer(store.Timer{Key: downstreamsTimerKey(r.Key), Kind: kindDownstreams, Run: r.Key, DueAt: b.now}, nil)
}

// downstreamsTimer is step 2: t.Run is the upstream period that succeeded.
func (e *Engine) downstreamsTimer(ctx context.Context, f *facts, t store.Timer, now time.Time) (*batch, error) {
	b := e.newBatch(nil, now).withFacts(f)
	up, err := f.pipelineOf(ctx, t.Run.PipelineID)
	if err != nil || up == nil {
		return b, err
	}
	upPer, err := parsePeriod(t.Run.Period)
	if err != nil {
		return b, nil // not a period: the timer goes
	}
	ids, err := e.downstreamIDs(ctx, b.f, up.p.ID)
	if err != nil {
		return nil, err
	}
	if len(ids) > 0 { // only an upstream can be a root cause (rootcause.go)
		if err := e.armRelease(ctx, b, t.Run); err != nil {
			return nil, err
		}
	}
	var downs []*pipeline.Pipeline
	for _, id := range ids {
		down, err := f.pipelineOf(ctx, id)
		if err != nil {
			return nil, err
		}
		if down != nil {
			downs = append(downs, down.p)
		}
	}
	// A commit holds at most store.MaxChangeRecords records: the timer
	// arms maxFanOut at a time and moves on (Detail "done": how many it
	// armed before) until all are (deps.FanOut).
	var done int64
	if v, ok := t.Detail.Get("done"); ok {
		done, _ = v.Int()
	}
	arm, next := deps.FanOut(deps.Reached(up.p, upPer, downs), done, maxFanOut)
	if next > 0 {
		due := t.DueAt
		b.putTimer(store.Timer{Key: t.Key, Kind: kindDownstreams, Run: t.Run, DueAt: now, Detail: run.Detail("done", next)}, &due)
	}
	for _, r := range arm {
		var detail sensor.Object
		if r.Opens {
			detail = run.Detail("opens", true)
		}
		b.putTimer(store.Timer{Key: upstreamTimerKey(r.Key), Kind: kindUpstream, Run: r.Key, DueAt: now, Detail: detail}, nil)
	}
	return b, nil
}

// downstreamIDs reads the downstream index of an upstream.
func (e *Engine) downstreamIDs(ctx context.Context, f *facts, upstream string) ([]string, error) {
	ms, err := f.markersOf(ctx, run.Key{PipelineID: upstream})
	if err != nil {
		return nil, err
	}
	kinds := make([]string, len(ms))
	for i, m := range ms {
		kinds[i] = m.Kind
	}
	return needs.DownstreamIDs(kinds), nil
}

// upstreamTimer is step 3: t.Run is the downstream period to re-evaluate.
func (e *Engine) upstreamTimer(ctx context.Context, f *facts, t store.Timer, now time.Time) (*batch, error) {
	lp, err := f.pipelineOf(ctx, t.Run.PipelineID)
	if err != nil || lp == nil {
		return e.newBatch(lp, now).withFacts(f), err
	}
	b := e.newBatch(lp, now).withFacts(f)
	per, err := parsePeriod(t.Run.Period)
	if err != nil {
		return b, nil
	}
	key := run.Key{PipelineID: lp.p.ID, ScheduleID: lp.p.ScheduleID(), Period: per.String()}
	existing, err := e.runOf(ctx, b, key)
	if err != nil {
		return nil, err
	}
	_, opens := t.Detail.Get("opens")
	pass := false
	if deps.NeedsUpstreamPass(lp.p, existing, opens) {
		ups, err := e.upstreamResults(ctx, b.f, lp.p, per)
		if err != nil {
			return nil, err
		}
		pass = deps.WithUpstreams(rule.Outcome{Passed: true}, 0, ups).Passed
	}
	switch deps.OnUpstreamSuccess(lp.p, existing, lp.row.Paused, opens, pass) {
	case deps.UpstreamEvaluate:
		r := *existing
		return b, e.evaluateRun(ctx, b, lp, &r, &r, run.Effect{}, nil, nil)
	case deps.UpstreamStart:
		return b, e.startPeriod(ctx, b, lp, key, per, run.CauseUpstream, nil)
	}
	return b, nil
}

// upstreamResults judges the upstream rules of p for period per.
func (e *Engine) upstreamResults(ctx context.Context, f *facts, p *pipeline.Pipeline, per schedule.Period) ([]rule.Result, error) {
	var out []rule.Result
	for _, u := range p.Upstreams {
		up, err := f.pipelineOf(ctx, u.Pipeline)
		if err != nil {
			return nil, err
		}
		if up == nil {
			out = append(out, deps.JudgeUpstream(u, nil, nil, nil))
			continue
		}
		pers := deps.UpstreamPeriods(p, up.p, u, per)
		runs, err := e.upstreamRuns(ctx, f, up.p, pers)
		if err != nil {
			return nil, err
		}
		out = append(out, deps.JudgeUpstream(u, up.p, pers, runs))
	}
	return out, nil
}

// upstreamRuns reads the upstream's runs of the mapped periods: one key,
// or one range (the hours of a day).
func (e *Engine) upstreamRuns(ctx context.Context, f *facts, up *pipeline.Pipeline, pers []schedule.Period) ([]run.Run, error) {
	switch len(pers) {
	case 0:
		return nil, nil
	case 1:
		r, err := f.run(ctx, run.Key{PipelineID: up.ID, ScheduleID: up.ScheduleID(), Period: pers[0].String()})
		if r == nil || err != nil {
			return nil, err
		}
		return []run.Run{*r}, nil
	}
	return e.st.RunList(ctx, store.RunListParams{PipelineID: up.ID, ScheduleID: up.ScheduleID(),
		PeriodFrom: pers[0].String(), PeriodTo: pers[len(pers)-1].String()})
}

// validation judges a period's validation rules, sensor rules and
// upstream rules together (deps.WithUpstreams).
func (e *Engine) validation(ctx context.Context, f *facts, p *pipeline.Pipeline, per schedule.Period, sensors rule.SensorMap, now time.Time) (rule.Outcome, error) {
	out := rule.EvaluateAll(p.Validation.Mode, p.Validation.Rules, sensors, now, e.rules)
	ups, err := e.upstreamResults(ctx, f, p, per)
	if err != nil {
		return out, err
	}
	return deps.WithUpstreams(out, len(p.Validation.Rules), ups), nil
}

// downstreamIndex writes p's entries in its upstreams' downstream indexes
// and drops those of upstreams its previous config had and this one does
// not (prev may be nil).
func (b *batch) downstreamIndex(p, prev *pipeline.Pipeline) {
	put, drop := deps.IndexChanges(p, prev)
	for _, u := range put {
		b.marker(store.Marker{Key: run.Key{PipelineID: u}, Kind: run.DownstreamMarker(p.ID).String(), At: b.now}, false)
	}
	for _, u := range drop {
		b.c.MarkerDeletes = append(b.c.MarkerDeletes, store.MarkerDelete{Key: run.Key{PipelineID: u}, Kind: run.DownstreamMarker(p.ID).String()})
	}
}
