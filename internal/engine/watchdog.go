package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
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
func (e *Engine) WatchdogPass(ctx context.Context, stuckThreshold time.Duration) (WatchdogReport, error) {
	now := e.clk.Now()
	snap := e.watchdogSnapshot(ctx, now, stuckThreshold)
	res := watchdog.Pass(snap)
	rep := WatchdogReport{At: now, Result: res}
	for _, f := range res.Findings {
		evs, repaired, err := e.applyFinding(ctx, f, now)
		if err != nil {
			return rep, fmt.Errorf("engine: watchdog %s for %s/%s: %w", f.Check, f.Key.PipelineID, f.Key.Period, err)
		}
		rep.Raised = append(rep.Raised, evs...)
		if repaired {
			rep.Repaired++
		}
	}
	evs, err := e.recordPass(ctx, now, res, snap.Unavailable)
	rep.Raised = append(rep.Raised, evs...)
	return rep, err
}

// watchdogSnapshot loads what the checks read, in bulk and bounded by the
// lookback window: its cost grows with pipelines and recent activity, not
// with stored history. Data that cannot be loaded is named in Unavailable
// so the checks that need it fail visibly.
func (e *Engine) watchdogSnapshot(ctx context.Context, now time.Time, stuck time.Duration) *watchdog.Snapshot {
	s := &watchdog.Snapshot{Now: now, StuckRunThreshold: stuck, Rules: e.rules, Runs: map[run.Key]run.Run{}, Markers: map[watchdog.MarkerKey]store.Marker{}, Timers: map[string]bool{}}
	e.mu.RLock()
	for _, lp := range e.pipelines {
		wp := watchdog.Pipeline{P: lp.p, Paused: lp.row.Paused, FirstLoadedAt: lp.row.FirstLoadedAt}
		if !lp.row.Paused && !lp.row.PausedAt.IsZero() && !lp.row.ResumedAt.IsZero() {
			wp.Pauses = []watchdog.Span{{From: lp.row.PausedAt, To: lp.row.ResumedAt}}
		}
		s.Pipelines = append(s.Pipelines, wp)
	}
	e.mu.RUnlock()
	// Periods are dates in each pipeline's zone: start a day early so every
	// zone's periods within the lookback are included.
	from := schedule.DateOf(now.Add(-watchdog.Lookback-24*time.Hour), time.UTC).String()

	if active, err := e.st.RunList(ctx, store.RunListParams{ActiveOnly: true}); err != nil {
		s.Unavailable = append(s.Unavailable, "active runs: "+err.Error())
	} else {
		s.ActiveRuns = active
	}
	if recent, err := e.st.RunList(ctx, store.RunListParams{PeriodFrom: from}); err != nil {
		s.Unavailable = append(s.Unavailable, "runs: "+err.Error())
	} else {
		for _, r := range recent {
			s.Runs[r.Key] = r
		}
	}
	if ms, err := e.st.MarkerList(ctx, store.MarkerListParams{PeriodFrom: from}); err != nil {
		s.Unavailable = append(s.Unavailable, "markers: "+err.Error())
	} else {
		pauses := map[string][]watchdog.Span{}
		for _, m := range ms {
			s.Markers[watchdog.MarkerKey{Key: m.Key, Kind: m.Kind}] = m
			if strings.HasPrefix(m.Kind, run.MarkerPausePrefix) {
				if from, err := time.Parse(time.RFC3339Nano, strings.TrimPrefix(m.Kind, run.MarkerPausePrefix)); err == nil {
					pauses[m.Key.PipelineID] = append(pauses[m.Key.PipelineID], watchdog.Span{From: from, To: m.At})
				}
			}
		}
		for i := range s.Pipelines {
			s.Pipelines[i].Pauses = append(s.Pipelines[i].Pauses, pauses[s.Pipelines[i].P.ID]...)
		}
	}
	if ts, err := e.st.TimerList(ctx, store.TimerListParams{Kind: kindSLABreach}); err != nil {
		s.Unavailable = append(s.Unavailable, "timers: "+err.Error())
	} else {
		for _, t := range ts {
			s.Timers[t.Key] = true
		}
	}
	if ss, err := e.st.SensorListChanged(ctx, store.SensorListChangedParams{Since: now.Add(-watchdog.Lookback)}); err != nil {
		s.Unavailable = append(s.Unavailable, "sensors: "+err.Error())
	} else {
		s.Sensors = ss
	}
	return s
}

// applyFinding commits one finding. A finding whose dedup marker exists,
// or whose run moved since the snapshot, is dropped: someone already
// acted. It returns the events recorded and whether it repaired timers.
func (e *Engine) applyFinding(ctx context.Context, f watchdog.Finding, now time.Time) ([]event.Event, bool, error) {
	lp := e.loaded(f.Key.PipelineID)
	if lp == nil {
		return nil, false, nil
	}
	var out []event.Event
	repaired := false
	err := e.retry(ctx, "watchdog "+f.Check, func() error {
		out, repaired = nil, false
		now := e.clk.Now()
		b := e.newBatch(lp.p, now)
		if f.Marker != "" {
			if done, err := e.hasMarker(ctx, f.Key, f.Marker); err != nil || done {
				return err
			}
			b.marker(store.Marker{Key: f.Key, Kind: f.Marker, At: now, Detail: f.Detail}, true)
		}
		note := []run.Note{{Type: f.Event, Message: f.Message, Detail: f.Detail}}
		switch f.Action {
		case watchdog.ActionNone:
			b.notes(f.Key, note)
		case watchdog.ActionFailRun:
			r, err := e.st.RunGet(ctx, f.Key)
			if err != nil || f.Run == nil || r.Version != f.Run.Version || r.State.Terminal() {
				return ignoreNotFound(err)
			}
			next, eff := run.TimedOut(r, now)
			eff.Notes = note
			if err := e.applyRun(ctx, b, lp, &r, next, eff, nil); err != nil {
				return err
			}
		case watchdog.ActionStartRun:
			per, err := parsePeriod(f.Key.Period)
			if err != nil {
				return err
			}
			if err := e.startPeriod(ctx, b, lp, f.Key, per, run.CauseRecovered, nil); err != nil {
				return err
			}
			if !b.hasRun(f.Key) {
				return nil // excluded, paused or started meanwhile: nothing was recovered
			}
			b.c.Events = append(b.notesFirst(f.Key, note), b.c.Events...)
		case watchdog.ActionClosePeriod:
			if _, err := e.st.RunGet(ctx, f.Key); err == nil {
				return nil // a run showed up: nothing to close
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			r := run.Close(f.Key, lp.row.ConfigVersion, now)
			b.putRun(r, 0)
			b.notes(f.Key, note)
			e.dropSLATimers(b, f.Key)
		case watchdog.ActionArmSLA:
			per, err := parsePeriod(f.Key.Period)
			if err != nil {
				return err
			}
			if err := e.armSLA(ctx, b, lp.p, f.Key, per); err != nil {
				return err
			}
			repaired = len(b.c.Timers) > 0
		}
		if err := b.commit(ctx); err != nil {
			return err
		}
		out = b.c.Events
		return nil
	})
	return out, repaired, err
}

// recordPass records when the pass ran (so a stopped watchdog can be
// noticed) and raises WATCHDOG_DEGRADED when checks failed — once per
// distinct set of failing checks, not on every pass.
func (e *Engine) recordPass(ctx context.Context, now time.Time, res watchdog.Result, unavailable []string) ([]event.Event, error) {
	var out []event.Event
	err := e.retry(ctx, "watchdog pass", func() error {
		out = nil
		b := e.newBatch(nil, now)
		failed := strings.Join(res.Failed, ", ")
		msg := watchdog.DegradedMessage(res)
		b.marker(store.Marker{Key: run.Key{}, Kind: run.MarkerWatchdogPass, At: now, Detail: run.Detail("findings", len(res.Findings), "failed", failed)}, false)
		prev, err := e.st.MarkerGet(ctx, run.Key{}, run.MarkerWatchdogDegraded)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		prevFailed := ""
		if err == nil {
			v, _ := prev.Detail.Get("failed")
			prevFailed, _ = v.Str()
		}
		switch {
		case failed != "" && failed != prevFailed:
			b.emit(run.Key{}, event.WatchdogDegraded, msg, run.Detail("failed", failed, "unavailable", strings.Join(unavailable, "; ")))
			b.marker(store.Marker{Key: run.Key{}, Kind: run.MarkerWatchdogDegraded, At: now, Detail: run.Detail("failed", failed)}, false)
		case failed == "" && prevFailed != "":
			b.c.MarkerDeletes = append(b.c.MarkerDeletes, store.MarkerDelete{Key: run.Key{}, Kind: run.MarkerWatchdogDegraded})
		}
		if err := b.commit(ctx); err != nil {
			return err
		}
		out = b.c.Events
		return nil
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

func ignoreNotFound(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}
