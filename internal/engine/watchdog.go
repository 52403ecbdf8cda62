package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/eventid"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/watchdog"
)

// WatchdogReport is the outcome of one watchdog pass.
type WatchdogReport struct {
	At       time.Time
	Result   watchdog.Result
	Raised   []event.Event // events the pass recorded
	Repaired int           // silent repairs (SLA timers set)
}

// Degraded reports whether any check failed.
func (r WatchdogReport) Degraded() bool { return r.Result.Degraded() }

// WatchdogPass runs every watchdog check once at the clock's time and
// applies what they found: each finding is committed with its dedup
// marker, so it is raised once, whichever process or pass notices it
// first. stuckThreshold is watchdog.stuckRunThreshold.
func (e *Engine) WatchdogPass(ctx context.Context, stuckThreshold time.Duration) (_ WatchdogReport, err error) {
	ctx, span := e.startSpan(ctx, spanWatchdog)
	defer func() { endSpan(span, err) }()
	// One pass at a time: the snapshot shares the cache's maps, which the
	// next pass's snapshot updates.
	e.wd.mu.Lock()
	defer e.wd.mu.Unlock()
	now := e.clk.Now()
	snap := e.watchdogSnapshot(ctx, now, stuckThreshold)
	res := watchdog.Pass(snap)
	rep := WatchdogReport{At: now, Result: res}
	if err := e.applyFindings(ctx, res.Findings, &rep); err != nil {
		return rep, err
	}
	evs, err := e.recordPass(ctx, now, res, snap.Unavailable)
	rep.Raised = append(rep.Raised, evs...)
	return rep, err
}

// watchdogCache is the watchdog's snapshot kept between passes
// (watchdog.Kept, which decides how it is refreshed and aged): it saves
// reads, never answers a question — each finding is committed on its
// dedup marker's absence and its run's version.
type watchdogCache struct {
	mu   sync.Mutex
	kept watchdog.Kept
}

// watchdogSnapshot builds what the checks read, bounded by the lookback
// window: its cost grows with pipelines and recent activity, not with
// stored history. Data that cannot be loaded is named in Unavailable so
// the checks that need it fail visibly (and the next pass reloads fully).
//
// The caller holds e.wd.mu.
func (e *Engine) watchdogSnapshot(ctx context.Context, now time.Time, stuck time.Duration) *watchdog.Snapshot {
	k := &e.wd.kept
	s := &watchdog.Snapshot{Now: now, StuckRunThreshold: stuck, Rules: e.rules}
	unavailable := func(what string, err error) {
		s.Unavailable = append(s.Unavailable, what+": "+err.Error())
	}
	plan := k.Plan(now)
	// One range per read, so one index serves it on every backend: a
	// full load reads the recent periods, an incremental one what was
	// written since; what has aged out of the window goes in Refresh.
	recentRuns, recentMarkers := store.RunListParams{PeriodFrom: plan.PeriodFrom}, store.MarkerListParams{PeriodFrom: plan.PeriodFrom}
	if !plan.Full {
		recentRuns, recentMarkers = store.RunListParams{UpdatedSince: plan.Since}, store.MarkerListParams{Since: plan.Since}
	}
	// The reads are independent: they run at once (a pass takes as long
	// as its longest read, not their sum), the sensors' after the
	// pipelines', which say whether a check reads sensors.
	var (
		active    []run.Run
		ts        []store.Timer
		read      watchdog.Read
		errActive error
		errTs     error
		wg        sync.WaitGroup
	)
	wg.Go(func() { active, errActive = e.st.RunList(ctx, store.RunListParams{ActiveOnly: true}) })
	wg.Go(func() { read.Runs, read.RunsErr = e.st.RunList(ctx, recentRuns) })
	wg.Go(func() { read.Markers, read.MarkersErr = e.st.MarkerList(ctx, recentMarkers) })
	wg.Go(func() { ts, errTs = e.st.TimerList(ctx, store.TimerListParams{Kind: kindSLABreach}) })
	// The pipelines as the store has them now: a pause, a reload or a
	// removal by any process is in this pass.
	loaded, errP := e.activePipelines(ctx)
	s.Pipelines = make([]watchdog.Pipeline, 0, len(loaded))
	for _, lp := range loaded {
		s.Pipelines = append(s.Pipelines, watchdog.Pipeline{P: lp.P, Paused: lp.Row.Paused, FirstLoadedAt: lp.Row.FirstLoadedAt,
			Pauses: lp.Row.PauseWindows, WatchChangedAt: lp.Row.WatchChangedAt})
	}
	// Sensors only when a check reads them (trigger data), and only those
	// (watched): kept between passes only while read, so the first pass
	// that needs them again reads the whole window.
	sensorReads := watchdog.PlanSensorReads(plan, k.SensorsKept(), s.Pipelines)
	if read.SensorsRead = sensorReads.Read; read.SensorsRead {
		read.Sensors, read.SensorsErr = e.readWatchedSensors(ctx, sensorReads, plan.SensorsFrom)
	}
	wg.Wait()

	if errP != nil {
		unavailable(watchdog.DataPipelines, errP)
	}
	if errActive != nil {
		unavailable(watchdog.DataActiveRuns, errActive)
	} else {
		s.ActiveRuns = active
	}
	if read.RunsErr != nil {
		unavailable(watchdog.DataRuns, read.RunsErr)
	}
	if read.MarkersErr != nil {
		unavailable(watchdog.DataMarkers, read.MarkersErr)
	}
	if errTs != nil {
		unavailable(watchdog.DataTimers, errTs)
	} else {
		for _, t := range ts {
			s.AddBreachTimer(t.Key)
		}
	}
	if read.SensorsRead && read.SensorsErr != nil {
		unavailable(watchdog.DataSensors, read.SensorsErr)
	}
	k.Refresh(plan, read, now, s)
	return s
}

// sensorReadsAtOnce bounds the reads of a pass's sensors at the same time.
const sensorReadsAtOnce = 8

// readWatchedSensors reads what plan says: the watched sensors changed
// since plan.Since across pipelines, and every sensor changed since from
// of each of plan.Pipelines (whose watched set a config load changed).
func (e *Engine) readWatchedSensors(ctx context.Context, plan watchdog.SensorReads, from time.Time) ([]store.Sensor, error) {
	reads := []store.SensorListChangedParams{{Since: plan.Since, Watched: true}}
	for _, id := range plan.Pipelines {
		reads = append(reads, store.SensorListChangedParams{PipelineID: id, Since: from})
	}
	got := make([][]store.Sensor, len(reads))
	errs := make([]error, len(reads))
	eachAtMost(len(reads), sensorReadsAtOnce, func(i int) {
		got[i], errs[i] = e.st.SensorListChanged(ctx, reads[i])
	})
	return slices.Concat(got...), errors.Join(errs...)
}

// eachAtMost calls do(i) for each i in [0, n), at most limit of them at
// the same time, and returns when all have returned.
func eachAtMost(n, limit int, do func(i int)) {
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			do(i)
		})
	}
	wg.Wait()
}

// findingsAtOnce bounds the findings a pass commits at the same time.
var findingsAtOnce = 8

// applyFindings commits a pass's findings: those of pipelines in different
// event shards at the same time (their decisions and commits are
// independent: each is about its own pipeline), those of one shard in
// order, so every shard's events are logged in the order one-by-one
// commits would give them. rep gets the events raised in finding order;
// the first failure (in that order) is returned, after the others are
// done, and stops the rest of its shard.
func (e *Engine) applyFindings(ctx context.Context, fs []watchdog.Finding, rep *WatchdogReport) error {
	type applied struct {
		evs      []event.Event
		repaired bool
		err      error
	}
	out := make([]applied, len(fs))
	// Ids in finding order, reserved before the concurrent commits: the
	// log at one instant is then the one one-by-one commits would leave.
	ids := make([]eventid.Block, len(fs))
	for i := range fs {
		ids[i] = eventid.Reserve()
	}
	var shards [][]int
	byShard := map[int]int{}
	for i, f := range fs {
		sh := store.EventShard(f.Key.PipelineID)
		g, ok := byShard[sh]
		if !ok {
			g = len(shards)
			byShard[sh] = g
			shards = append(shards, nil)
		}
		shards[g] = append(shards[g], i)
	}
	eachAtMost(len(shards), findingsAtOnce, func(g int) {
		for _, i := range shards[g] {
			a := &out[i]
			if a.evs, a.repaired, a.err = e.applyFinding(ctx, fs[i], ids[i]); a.err != nil {
				return
			}
		}
	})
	var first error
	for i, a := range out {
		if a.err != nil && first == nil {
			f := fs[i]
			first = fmt.Errorf("engine: watchdog %s for %s/%s: %w", f.Check, f.Key.PipelineID, f.Key.Period, a.err)
		}
		rep.Raised = append(rep.Raised, a.evs...)
		if a.repaired {
			rep.Repaired++
		}
	}
	return first
}

// applyFinding commits one finding (decide.Finding on the facts
// needs.Finding names). A finding whose dedup marker exists, or whose run
// moved since the snapshot, is dropped: someone already acted. It returns
// the events recorded and whether it repaired timers.
func (e *Engine) applyFinding(ctx context.Context, f watchdog.Finding, ids eventid.Block) ([]event.Event, bool, error) {
	var out []event.Event
	repaired := false
	err := e.retry(ctx, "watchdog "+f.Check, func(ctx context.Context) error {
		out, repaired = nil, false
		fs, err := e.loadFor(ctx, f.Key.PipelineID, func(_ *facts, cfg needs.Configs) needs.Set { return needs.Finding(cfg(f.Key.PipelineID), cfg, f) })
		if err != nil {
			return err
		}
		b := &batch{e: e, f: fs, ids: ids} // each attempt numbers its events from the block's start
		in := decide.FindingIn{Finding: f, Env: b.env()}
		applied, err := decideWith(ctx, b, decide.Finding, in, e.clk.Now())
		if err != nil {
			return err
		}
		return b.commitThen(ctx, func() { out, repaired = b.C.Events, applied.Repaired })
	})
	return out, repaired, err
}

// recordPass records the pass (decide.WatchdogPass): when it ran, and
// WATCHDOG_DEGRADED once per distinct set of failing checks.
func (e *Engine) recordPass(ctx context.Context, now time.Time, res watchdog.Result, unavailable []string) ([]event.Event, error) {
	var out []event.Event
	err := e.retry(ctx, "watchdog pass", func(ctx context.Context) error {
		out = nil
		fs, err := e.loadFacts(ctx, func(*facts, needs.Configs) needs.Set { return needs.WatchdogPass() })
		if err != nil {
			return err
		}
		b := &batch{e: e, f: fs}
		in := decide.PassIn{Result: res, Unavailable: unavailable, Env: b.env()}
		if err := decideOutcome(ctx, b, func(f *decide.Facts) (*decide.Outcome, error) { return decide.WatchdogPass(in, f, now) }); err != nil {
			return err
		}
		return b.commitThen(ctx, func() { out = b.C.Events })
	})
	return out, err
}

// LastWatchdogPass returns when the watchdog last ran; ok is false when it
// never has.
func (e *Engine) LastWatchdogPass(ctx context.Context) (time.Time, bool, error) {
	m, err := e.st.MarkerGet(ctx, run.Key{}, run.MarkerWatchdogPass)
	if errors.Is(err, store.ErrNotFound) {
		return time.Time{}, false, nil
	}
	return m.At, err == nil, err
}
