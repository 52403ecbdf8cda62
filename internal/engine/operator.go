package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// Pause stops new runs of a pipeline (product spec §3b): cron ticks and
// trigger sensors are still recorded but start nothing; running jobs
// finish; SLA and watchdog alerts continue. A zero until pauses until
// Resume.
func (e *Engine) Pause(ctx context.Context, pipelineID string, until time.Time, by string) error {
	return e.retry(ctx, "pause "+pipelineID, func() error {
		lp, err := e.pipelineOf(ctx, pipelineID)
		if err != nil {
			return err
		}
		if lp == nil {
			return unknown(pipelineID)
		}
		now := e.clk.Now()
		row := lp.row
		if row.Paused && row.PausedUntil.Equal(until) {
			return nil
		}
		if !until.IsZero() { // zero: until resumed
			if err := run.CheckPauseUntil(until, now); err != nil {
				return fmt.Errorf("%w: until %v", ErrInvalidRequest, err)
			}
		}
		next := row
		next.Paused, next.PausedUntil, next.UpdatedAt = true, until.UTC(), now
		if !row.Paused {
			next.PausedAt, next.ResumedAt = now, time.Time{}
		}
		b := e.newBatch(lp, now)
		b.c.Pipelines = append(b.c.Pipelines, store.PipelineWrite{Pipeline: next, ExpectVersion: row.Version})
		pk := run.Key{PipelineID: pipelineID, ScheduleID: lp.p.ScheduleID()}
		msg, detail := "pipeline paused until resumed", run.Detail("by", by)
		if !until.IsZero() {
			msg, detail = "pipeline paused until "+until.UTC().Format(time.RFC3339), run.Detail("by", by, "until", until)
			b.putTimer(store.Timer{Key: resumeTimerKey(pipelineID), Kind: kindResume, Run: run.Key{PipelineID: pipelineID}, DueAt: until}, nil)
		} else {
			b.deleteTimer(resumeTimerKey(pipelineID), nil)
		}
		b.emit(pk, event.PipelinePaused, msg, detail)
		return b.commit(ctx)
	})
}

// Resume allows new runs again and treats each period that received
// trigger data during the pause as if that data had just arrived, so it
// starts now.
func (e *Engine) Resume(ctx context.Context, pipelineID, by string) error {
	return e.retry(ctx, "resume "+pipelineID, func() error {
		b, err := e.resume(ctx, pipelineID, by, nil)
		if err != nil || b == nil {
			return err
		}
		return b.commit(ctx)
	})
}

func (e *Engine) resumeTimer(ctx context.Context, t store.Timer, now time.Time) (*batch, error) {
	due := t.DueAt
	b, err := e.resume(ctx, t.Run.PipelineID, "timer", &due)
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
	if b.hasRun(key) {
		return nil
	}
	return e.triggerSensor(ctx, b, lp, s, key, per)
}

// resume builds the resume batch; nil when the pipeline is not paused.
func (e *Engine) resume(ctx context.Context, pipelineID, by string, timerDue *time.Time) (*batch, error) {
	lp, err := e.pipelineOf(ctx, pipelineID)
	if err != nil {
		return nil, err
	}
	if lp == nil {
		return nil, unknown(pipelineID)
	}
	now := e.clk.Now()
	row := lp.row
	if !row.Paused {
		return nil, nil
	}
	p := lp.p
	next := row
	next.Paused, next.PausedUntil, next.UpdatedAt, next.ResumedAt = false, time.Time{}, now, now
	// The decisions below see the pipeline resumed; the row's write is
	// conditioned on the version read.
	resumed := &loadedPipeline{p: p, row: next, cals: lp.cals}
	b := e.newBatch(resumed, now)
	b.c.Pipelines = append(b.c.Pipelines, store.PipelineWrite{Pipeline: next, ExpectVersion: row.Version})
	if timerDue != nil {
		b.deleteTimer(resumeTimerKey(pipelineID), timerDue)
	} else {
		b.deleteTimer(resumeTimerKey(pipelineID), nil)
	}
	pk := run.Key{PipelineID: pipelineID, ScheduleID: p.ScheduleID()}
	b.emit(pk, event.PipelineResumed, "pipeline resumed", run.Detail("by", by))
	pausedAt := row.PausedAt
	// Keep the window: the watchdog does not report cron ticks skipped on
	// purpose. Dated by the resume, so it is in every snapshot whose
	// lookback the pause reaches into.
	if !pausedAt.IsZero() {
		resumeDay := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: schedule.Daily(schedule.DateOf(now, p.Schedule.Location)).String()}
		b.marker(store.Marker{Key: resumeDay, Kind: run.MarkerPausePrefix + pausedAt.UTC().Format(time.RFC3339Nano), At: now, Detail: run.Detail("from", pausedAt, "to", now)}, false)
	}
	// Runs held by the pause (evaluating, or about to trigger) go on, with
	// a fresh evaluation window.
	held, err := e.st.RunList(ctx, store.RunListParams{PipelineID: pipelineID, ActiveOnly: true})
	if err != nil {
		return nil, err
	}
	for i := range held {
		r := held[i]
		if r.State == run.Running || r.TriggerInFlight {
			continue
		}
		next, eff := run.Resume(r, p, now)
		if err := e.applyRun(ctx, b, resumed, &r, next, eff, nil); err != nil {
			return nil, err
		}
	}
	// A cron tick that fell in the pause starts its period now, as data
	// that came during the pause does.
	if !p.Schedule.Cron.IsZero() {
		if tick, ok := p.Schedule.Cron.Prev(now, p.Schedule.Location); ok && !tick.Before(pausedAt) {
			per := p.Schedule.Cron.PeriodOf(tick, p.Schedule.Location)
			key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per.String()}
			if !b.hasRun(key) {
				if err := e.startPeriod(ctx, b, resumed, key, per, run.CauseResume, nil); err != nil {
					return nil, err
				}
			}
		}
	}
	if p.Schedule.Trigger == nil {
		return b, nil
	}
	// Trigger data that came during the pause is handled as if it had
	// just arrived: it starts its period, completes a waiting run's rules,
	// or is late data for a period that already succeeded.
	sensors, err := e.triggerSensors(ctx, p)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for i := range sensors {
		s := sensors[i]
		if !run.MatchesTrigger(p, s.Key) || s.ChangedAt.Before(pausedAt) {
			continue
		}
		cond := p.Schedule.Trigger.Rule
		cond.Key = s.Key
		if !rule.Evaluate(cond, rule.SensorMap{s.Key: s.Record()}, now, e.rules).Passed {
			continue // another key of the period may satisfy the condition
		}
		per, err := run.SensorPeriod(p, s.Key, s.Data, s.ChangedAt)
		if err != nil || seen[per.String()] {
			continue
		}
		seen[per.String()] = true
		key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per.String()}
		if err := e.resumePeriod(ctx, b, resumed, &s, key, per); err != nil {
			return nil, err
		}
	}
	return b, nil
}
