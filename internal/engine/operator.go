package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pause"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// Pause stops new runs of a pipeline (product spec §3b): cron ticks and
// trigger sensors are still recorded but start nothing; running jobs
// finish; SLA and watchdog alerts continue. A zero until pauses until
// Resume.
func (e *Engine) Pause(ctx context.Context, pipelineID string, until time.Time, by string) (err error) {
	ctx, span := e.startSpan(ctx, spanOperator+"pause", attrPipeline.String(pipelineID))
	defer func() { endSpan(span, err) }()
	return e.retry(ctx, "pause "+pipelineID, func(ctx context.Context) error {
		f, lp, err := e.loadPipeline(ctx, pipelineID, func(*facts, needs.Configs) needs.Set { return needs.Pause(pipelineID) })
		if err != nil {
			return err
		}
		now := e.clk.Now()
		row := lp.Row
		d, ok, err := pause.Pause(pauseState(row), until, by, now)
		if err != nil {
			return fmt.Errorf("%w: until %v", ErrInvalidRequest, err)
		}
		if !ok {
			return nil
		}
		next := withPause(row, d.State, now)
		b := e.newBatch(lp, now).withFacts(f)
		b.C.Pipelines = append(b.C.Pipelines, store.PipelineWrite{Pipeline: next, ExpectVersion: row.Version})
		if d.ResumeAt.IsZero() {
			b.DeleteTimer(resumeTimerKey(pipelineID), nil)
		} else {
			b.PutTimer(store.Timer{Key: resumeTimerKey(pipelineID), Kind: kindResume, Run: run.Key{PipelineID: pipelineID}, DueAt: d.ResumeAt}, nil)
		}
		b.Notes(run.Key{PipelineID: pipelineID, ScheduleID: lp.P.ScheduleID()}, []run.Note{d.Note})
		return b.commit(ctx)
	})
}

// Resume allows new runs again and treats each period that received
// trigger data during the pause as if that data had just arrived, so it
// starts now.
func (e *Engine) Resume(ctx context.Context, pipelineID, by string) (err error) {
	ctx, span := e.startSpan(ctx, spanOperator+"resume", attrPipeline.String(pipelineID))
	defer func() { endSpan(span, err) }()
	return e.retry(ctx, "resume "+pipelineID, func(ctx context.Context) error {
		now := e.clk.Now()
		f, err := e.loadFacts(ctx, e.resumeNeeds(pipelineID, now))
		if err != nil {
			return err
		}
		b, err := e.resume(ctx, f, pipelineID, by, nil, now)
		if err != nil || b == nil {
			return err
		}
		return b.commit(ctx)
	})
}

// resumeTimer resumes the pipeline of a resume timer on the timer's
// facts f, which it loads the resume's needs into.
func (e *Engine) resumeTimer(ctx context.Context, f *facts, t store.Timer, now time.Time) (*batch, error) {
	if err := f.rounds(ctx, e.resumeNeeds(t.Run.PipelineID, now)); err != nil {
		return nil, err
	}
	due := t.DueAt
	b, err := e.resume(ctx, f, t.Run.PipelineID, "timer", &due, now)
	if errors.Is(err, ErrUnknownPipeline) {
		return e.newBatch(nil, now), nil // its file was removed: the timer is dropped
	}
	if err != nil || b == nil {
		return e.newBatch(nil, now), err
	}
	return b, nil
}

// resumePeriod handles one period's trigger data on resume. A run held by
// the pause was already re-armed in this batch, so it is left to its
// evaluation; anything else goes through the trigger-sensor path.
func (e *Engine) resumePeriod(ctx context.Context, b *batch, lp *loadedPipeline, s *store.Sensor, key run.Key, per schedule.Period) error {
	if b.HasRun(key) {
		return nil
	}
	return e.triggerSensor(ctx, b, lp, s, key, per)
}

// resumeNeeds names what resuming pipelineID at now reads
// (needs.Resume): the plan is made, as resume makes it, once the row, the
// active runs and the trigger sensors are read.
func (e *Engine) resumeNeeds(pipelineID string, now time.Time) needsFunc {
	return func(f *facts, cfg needs.Configs) needs.Set {
		p := cfg(pipelineID)
		row, rowRead := f.Pipelines[pipelineID]
		trigger := needs.TriggerSensors(p)
		if p == nil || !rowRead || !slices.Contains(f.Asked.ActiveRuns, pipelineID) || len(trigger.Prefixes) > 0 && !slices.Contains(f.Asked.Prefixes, trigger.Prefixes[0]) {
			return needs.Resume(p, cfg, f.ReadRuns, pipelineID, nil, nil)
		}
		if _, paused := pause.Resume(pauseState(row), "", now); !paused {
			return needs.Resume(p, cfg, f.ReadRuns, pipelineID, nil, nil)
		}
		active := f.Active[pipelineID]
		recs, _ := f.readTriggerRecords(p) // read: asked above
		plan := pause.PlanResume(p, row.PausedAt, now, active, recs, e.rules)
		return needs.Resume(p, cfg, f.ReadRuns, pipelineID, active, &plan)
	}
}

// resume builds the resume batch on the facts f (resumeNeeds); nil when
// the pipeline is not paused.
func (e *Engine) resume(ctx context.Context, f *facts, pipelineID, by string, timerDue *time.Time, now time.Time) (*batch, error) {
	lp, err := f.knownPipeline(ctx, pipelineID)
	if err != nil {
		return nil, err
	}
	row := lp.Row
	d, ok := pause.Resume(pauseState(row), by, now)
	if !ok {
		return nil, nil
	}
	p := lp.P
	next := withPause(row, d.State, now)
	// The decisions below see the pipeline resumed; the row's write is
	// conditioned on the version read.
	resumed := &loadedPipeline{P: p, Row: next, Cals: lp.Cals}
	b := e.newBatch(resumed, now).withFacts(f)
	b.C.Pipelines = append(b.C.Pipelines, store.PipelineWrite{Pipeline: next, ExpectVersion: row.Version})
	b.DeleteTimer(resumeTimerKey(pipelineID), timerDue)
	if err := e.wakeBackfillOnResume(ctx, b, pipelineID); err != nil {
		return nil, err
	}
	b.Notes(run.Key{PipelineID: pipelineID, ScheduleID: p.ScheduleID()}, []run.Note{d.Note})
	active, err := f.activeRuns(ctx, pipelineID)
	if err != nil {
		return nil, err
	}
	sensors, err := f.triggerSensors(ctx, p)
	if err != nil {
		return nil, err
	}
	plan := pause.PlanResume(p, row.PausedAt, now, active, sensorRecords(sensors), e.rules)
	for _, i := range plan.Rearm {
		r := active[i]
		next, eff := run.Resume(r, p, now)
		if err := e.applyRun(ctx, b, resumed, &r, next, eff, nil); err != nil {
			return nil, err
		}
	}
	if per := plan.CronPeriod; per != nil {
		key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per.String()}
		if !b.HasRun(key) { // re-armed above
			if err := e.startPeriod(ctx, b, resumed, key, *per, run.CauseResume, nil); err != nil {
				return nil, err
			}
		}
	}
	for _, d := range plan.Data {
		key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: d.Period.String()}
		if err := e.resumePeriod(ctx, b, resumed, &sensors[d.Sensor], key, d.Period); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// pauseState is a row's pause state as run's pause decisions read it.
func pauseState(row store.Pipeline) pause.State {
	return pause.State{Paused: row.Paused, Until: row.PausedUntil, PausedAt: row.PausedAt, ResumedAt: row.ResumedAt, Windows: row.PauseWindows}
}

// withPause is row with pause state st, updated at now.
func withPause(row store.Pipeline, st pause.State, now time.Time) store.Pipeline {
	row.Paused, row.PausedUntil, row.PausedAt, row.ResumedAt, row.PauseWindows, row.UpdatedAt = st.Paused, st.Until, st.PausedAt, st.ResumedAt, st.Windows, now
	return row
}
