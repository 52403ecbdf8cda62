package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/trigger"
)

// NextDue returns when the earliest timer is due; ok is false when no timer
// is set.
func (e *Engine) NextDue(ctx context.Context) (time.Time, bool, error) {
	t, err := e.st.TimerNext(ctx)
	if errors.Is(err, store.ErrNotFound) {
		return time.Time{}, false, nil
	}
	if err != nil {
		return time.Time{}, false, err
	}
	return t.DueAt, true, nil
}

// RunDue processes every timer due at the clock's current time, including
// timers that processing makes due at once (a passed evaluation makes the
// trigger step due immediately). It returns how many timers it processed.
func (e *Engine) RunDue(ctx context.Context) (int, error) {
	return e.RunDueOn(ctx, 1)
}

// RunDueOn is RunDue with the due timers of different pipelines processed
// on up to workers goroutines, and the outcome that of RunDue: the same
// commits, and the same events in the same order. Of each listed batch,
// a run of timers that each touch only their own pipeline (besideOthers)
// is processed at once, those of one event shard (so of one pipeline) in
// list order, each numbering its events from an id block reserved in
// list order (withDueIDs), as a watchdog pass commits its findings;
// every other timer is processed alone, after the ones before it and
// before the ones after it. A process that may stop in the middle of a
// timer (a simulated crash) would get another order of commits from
// this: its runtime processes one by one (workers ≤ 1).
func (e *Engine) RunDueOn(ctx context.Context, workers int) (int, error) {
	n := 0
	for {
		ts, err := e.st.TimerListDue(ctx, e.clk.Now(), 64)
		if err != nil {
			return n, err
		}
		if len(ts) == 0 {
			return n, nil
		}
		for i := 0; i < len(ts); {
			j := i + 1
			if workers > 1 && e.besideOthers(ts[i]) {
				for j < len(ts) && e.besideOthers(ts[j]) {
					j++
				}
			}
			done, err := e.processAtOnce(ctx, ts[i:j], workers)
			n += done
			if err != nil {
				return n, err
			}
			i = j
		}
	}
}

// besideOthers reports whether t's decision reads and writes only its own
// pipeline's records, so it may be taken beside other pipelines' timers:
// a run's step, a cron tick, an SLA or a new period's timer, of an
// Isolated pipeline. Backfill, dependency, pause, silence and maintenance
// timers reach across pipelines or are global.
func (e *Engine) besideOthers(t store.Timer) bool {
	switch t.Kind {
	case string(run.StepEvaluate), string(run.StepTrigger), string(run.StepPoll), string(run.TimerCron), string(run.TimerSLAWarning), string(run.TimerSLABreach), string(run.TimerPeriod):
		return e.Isolated(t.Run.PipelineID)
	}
	return false
}

// Isolated reports whether the decisions on a pipeline's own inputs (its
// sensor writes, steps and timers) read no other pipeline's records: its
// config is known and names no upstreams. What a success arms for its
// downstreams is a timer of its own, which reaches across (besideOthers).
func (e *Engine) Isolated(pipelineID string) bool {
	if pipelineID == "" {
		return false
	}
	p := e.cachedConfigs(pipelineID)
	return p != nil && len(p.Upstreams) == 0
}

// processAtOnce processes ts, timers of different event shards at once on
// up to workers goroutines (see RunDueOn). The first error in list order
// is returned, once the others are done.
func (e *Engine) processAtOnce(ctx context.Context, ts []store.Timer, workers int) (int, error) {
	if len(ts) == 1 || workers < 2 {
		return e.processInOrder(ctx, ts)
	}
	pipelines := make([]string, len(ts))
	for i, t := range ts {
		pipelines[i] = t.Run.PipelineID
	}
	errs := e.AtOnce(ctx, pipelines, workers, func(ctx context.Context, i int) error {
		return e.processTimer(ctx, ts[i])
	})
	for i, err := range errs {
		if err != nil {
			return i, fmt.Errorf("engine: timer %s: %w", ts[i].Key, err)
		}
	}
	return len(ts), nil
}

// AtOnce does do(ctx, i) for each input i of a list, in the order of the
// list as far as anyone can tell, on up to workers goroutines: the inputs
// are grouped by their pipeline's event shard (pipelines[i]), each
// group's in list order on one goroutine, stopping at its first error
// (the rest of the group is not done), and each input's commits number
// their events from an id block reserved in list order. So, as long as
// each input's decisions read and write only its own pipeline's records
// (Isolated), the store and the event log end as one-by-one calls leave
// them: a shard's log is in the order of its commits, and events of one
// instant sort by id. errs[i] is input i's error.
func (e *Engine) AtOnce(ctx context.Context, pipelines []string, workers int, do func(ctx context.Context, i int) error) (errs []error) {
	errs = make([]error, len(pipelines))
	groups := shardGroups(len(pipelines), func(i int) string { return pipelines[i] })
	if len(groups) < 2 || workers < 2 {
		for i := range pipelines {
			if errs[i] = do(ctx, i); errs[i] != nil {
				break
			}
		}
		return errs
	}
	blocks := make([]idBlock, len(pipelines))
	for i := range blocks {
		blocks[i] = reserveDueIDs()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, len(groups)) {
		wg.Go(func() {
			for g := int(next.Add(1) - 1); g < len(groups); g = int(next.Add(1) - 1) {
				for _, i := range groups[g] {
					if errs[i] = do(withDueIDs(ctx, &blocks[i]), i); errs[i] != nil {
						break
					}
				}
			}
		})
	}
	wg.Wait()
	return errs
}

// shardGroups groups the indexes of n inputs by the event shard of their
// pipeline (pipeline(i)), in order of first appearance, each group in
// index order.
func shardGroups(n int, pipeline func(i int) string) [][]int {
	var groups [][]int
	byShard := map[int]int{}
	for i := range n {
		sh := store.EventShard(pipeline(i))
		g, ok := byShard[sh]
		if !ok {
			g = len(groups)
			byShard[sh] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// processInOrder processes ts one by one, stopping at an error.
func (e *Engine) processInOrder(ctx context.Context, ts []store.Timer) (int, error) {
	for i, t := range ts {
		if err := e.processTimer(ctx, t); err != nil {
			return i, fmt.Errorf("engine: timer %s: %w", t.Key, err)
		}
	}
	return len(ts), nil
}

// dueBlockSize is how many event ids an input taken beside others
// (AtOnce) numbers its events from: its few commits' events, retries
// included.
const dueBlockSize = 256

// reserveDueIDs reserves an input's block of the id sequence.
func reserveDueIDs() idBlock {
	to := idSeq.Add(dueBlockSize) + 1
	return idBlock{from: to - dueBlockSize, to: to}
}

type dueIDsKey struct{}

// withDueIDs makes every commit under ctx number its events from block.
func withDueIDs(ctx context.Context, block *idBlock) context.Context {
	return context.WithValue(ctx, dueIDsKey{}, block)
}

// numberEvents numbers b's events from the id block ctx carries (an input
// taken beside others, AtOnce), unless b has its own block: so the events
// of inputs committed at once sort as one-by-one commits would have made
// them. A block used up leaves the rest their own ids.
func (b *batch) numberEvents(ctx context.Context) {
	block, _ := ctx.Value(dueIDsKey{}).(*idBlock)
	if block == nil || b.ids != nil {
		return
	}
	for i := range b.C.Events {
		if id := block.next(b.Now); id != "" {
			b.C.Events[i].ID = id
		}
	}
}

// DueTimers lists timers due at the clock's time, earliest first, at most
// limit: for runtimes that process timers concurrently (ProcessTimer).
func (e *Engine) DueTimers(ctx context.Context, limit int) ([]store.Timer, error) {
	return e.st.TimerListDue(ctx, e.clk.Now(), limit)
}

// ProcessTimer processes one timer. It is safe to call concurrently, for
// the same timer too: its due time is a condition of the commit, so only
// one call acts on it. A run's step timer is the sequencer of the step
// entry points (steps.go): evaluate → Evaluate; trigger → TriggerBegin,
// TriggerCall, TriggerRecord; poll → Poll, PollRecord.
func (e *Engine) ProcessTimer(ctx context.Context, t store.Timer) error {
	return e.processTimer(ctx, t)
}

func (e *Engine) processTimer(ctx context.Context, t store.Timer) error {
	call, err := e.ProcessTimerUntilCall(ctx, t)
	if err != nil || call == nil {
		return err
	}
	_, err = e.MakeCall(ctx, *call)
	return err
}

// ProcessTimerUntilCall processes a timer as ProcessTimer does, except
// that a trigger call it begins is returned instead of made: the caller
// makes it (MakeCall) where a slow synchronous job holds nothing that
// other timers need.
func (e *Engine) ProcessTimerUntilCall(ctx context.Context, t store.Timer) (call *Call, err error) {
	ctx, span := e.startSpan(ctx, spanTimer, attrTimer.String(t.Kind), attrPipeline.String(t.Run.PipelineID), attrPeriod.String(t.Run.Period))
	defer func() { endSpan(span, err) }()
	// A bug in a handler must not take the process down with every timer
	// still due: report it, keep the timer for a later try.
	defer e.survive("processing a timer", t.Key, &err)
	ref := StepRef{Run: t.Run, Due: t.DueAt, Since: run.StampOf(t.Detail).Since}
	switch t.Kind {
	case string(run.StepEvaluate):
		_, err = e.Evaluate(ctx, ref)
	case string(run.StepTrigger):
		_, call, err = e.TriggerBegin(ctx, ref)
	case string(run.StepPoll):
		var polled *Polled
		if _, polled, err = e.Poll(ctx, ref); err == nil && polled != nil {
			_, err = e.PollRecord(ctx, *polled)
		}
	default:
		err = e.processOther(ctx, t)
	}
	return call, err
}

// MakeCall makes a begun trigger call and records its answer
// (TriggerCall, then TriggerRecord).
func (e *Engine) MakeCall(ctx context.Context, c Call) (res StepResult, err error) {
	return e.MakeCallBy(ctx, c, time.Time{})
}

// MakeCallBy is MakeCall with the job call bounded by callDeadline (zero:
// ctx's own), so that a caller whose own time is bounded — a Lambda
// invocation — keeps the time to record the answer. A call cut by that
// bound has an unknown outcome (the job may have started): its answer is
// not recorded as a failure — which would retry, and could start the job
// twice — but left, with the call's in-flight mark, to the crash rules at
// the end of its lease (the lookup, or TRIGGER_OUTCOME_UNKNOWN), as if the
// caller had stopped; the run's current step (the lease's end) is returned.
func (e *Engine) MakeCallBy(ctx context.Context, c Call, callDeadline time.Time) (res StepResult, err error) {
	ctx, span := e.startSpan(callTrace(ctx, c), spanJobCall, attrPipeline.String(c.Run.PipelineID), attrPeriod.String(c.Run.Period))
	defer func() { endSpan(span, err) }()
	defer e.survive("making a trigger call", keyString(c.Run), &err)
	callCtx := ctx
	if !callDeadline.IsZero() {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithDeadline(ctx, callDeadline)
		defer cancel()
	}
	cr, err := e.TriggerCall(callCtx, c)
	if err != nil {
		return StepResult{Run: c.Run}, err
	}
	if cr.Err != "" && callCtx.Err() != nil && ctx.Err() == nil {
		e.log.WarnContext(ctx, "trigger call cut at its deadline; its outcome is established at the end of its lease", "pipeline", c.Run.PipelineID, "period", c.Run.Period, "err", cr.Err)
		return e.Current(ctx, c.Run)
	}
	return e.TriggerRecord(ctx, c, cr)
}

// survive turns a panic into *err, logged. A panic during a trigger call
// leaves its in-flight mark: the crash rules establish its outcome.
func (e *Engine) survive(what, key string, err *error) {
	if p := recover(); p != nil {
		e.log.Error("panic "+what, "key", key, "panic", p)
		*err = fmt.Errorf("panic: %v", p)
	}
}

// processOther runs the handler of a timer that is not a run's step and
// commits its batch. Every handler moves or removes its timer in the same
// commit, so a timer is processed once even when several processes race
// for it: the loser's commit fails its due-time condition and it re-reads.
func (e *Engine) processOther(ctx context.Context, t store.Timer) error {
	fam := run.TimerFamily(t.Kind)
	if k, err := run.ParseTimerKey(t.Key); err == nil {
		fam = k.Family
	}
	return e.retry(ctx, "timer "+t.Key, func(ctx context.Context) error {
		now := e.clk.Now()
		f, err := e.loadFacts(ctx, func(f *facts, cfg needs.Configs) needs.Set {
			return needs.Timer(cfg(t.Run.PipelineID), cfg, f.ReadMarkers, t.Key, fam, t.Run, t.DueAt, now)
		})
		if err != nil {
			return err
		}
		due, err := get(ctx, f, func() (*store.Timer, error) { return decide.DueTimer(f.Facts, t, now) })
		if due == nil || err != nil {
			return err // nil: someone else processed it
		}
		t := *due
		b := &batch{e: e, f: f}
		var decided bool
		// A timer's pipelines are all its decision's: its own, the
		// upstreams it judges, the downstreams it reaches.
		if err := f.resolve(ctx, slices.Sorted(maps.Keys(f.Pipelines))...); err != nil {
			return err
		}
		if err := f.decide(ctx, func() error {
			var err error
			b.Outcome, decided, err = decide.Timer(decide.TimerIn{Timer: t, Rules: e.rules, NewID: b.nextID}, f.Facts, now)
			return err
		}); err != nil {
			return err
		}
		if !decided {
			switch t.Kind {
			case kindResume:
				b, err = e.resumeTimer(ctx, f, t, now)
			case kindBackfill:
				b, err = e.backfillTimerFired(ctx, f, t, now)
			case kindSilenceEnd:
				b, err = e.silenceEndTimerFired(ctx, f, t, now)
			case kindMaintenanceEnd:
				b, err = e.maintenanceEndTimerFired(ctx, t, now)
			default:
				e.log.ErrorContext(ctx, "unknown timer kind; removing it", "key", t.Key, "kind", t.Kind)
				b = e.newBatch(nil, now)
			}
			if err != nil || b == nil {
				return err
			}
			if !b.TouchesTimer(t.Key) {
				due := t.DueAt
				b.DeleteTimer(t.Key, &due)
			}
		}
		return b.commit(ctx)
	})
}

// timerKey reads t's key as one of family f. A key that is not (a store
// edited by hand) is logged and its timer dropped, as a timer of an
// unknown kind is: no handler can act on it, and kept it would fire for
// ever.
func (e *Engine) timerKey(ctx context.Context, t store.Timer, f run.TimerFamily) (run.TimerKey, bool) {
	k, err := run.ParseTimerKey(t.Key)
	if err == nil && k.Family != f {
		err = fmt.Errorf("%w: %q is not a %s timer's key", run.ErrTimerKey, t.Key, f)
	}
	if err != nil {
		e.log.ErrorContext(ctx, "unreadable timer key; removing the timer", "key", t.Key, "kind", t.Kind, "err", err)
		return run.TimerKey{}, false
	}
	return k, true
}

// pollReport is a job's reported status as the core reads it (known:
// the status could be read).
func pollReport(res trigger.Result, known bool) run.JobReport {
	return run.JobReport{Known: known, Status: string(res.Status), Failure: run.Failure{Category: res.Category, Message: res.Message}}
}
