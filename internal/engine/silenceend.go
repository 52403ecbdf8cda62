package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
)

// The end of a silence or of a maintenance window's occurrence. A
// durable timer is armed at it — a silence's when it is created (moved
// to the expiry when it is expired early), a window's at its next
// occurrence's end (ArmMaintenance, then re-armed by each firing; when,
// and which occurrence a firing ended, silence.ArmWindowEnd and
// silence.EndedOccurrence decide) — and
// its handler alerts, once, each condition the silence covered that
// still holds (deps.SilencedConditions, deps.ConditionHolds on
// store.ConditionFactsOf): the alert and a marker
// (run.AfterSilenceMarker, written IfAbsent) in one commit, so a restart
// or a second replica that fires the timer again sends nothing more.

func silenceEndTimerKey(id string) string       { return run.SilenceEndTimer(id).String() }
func maintenanceEndTimerKey(name string) string { return run.MaintenanceEndTimer(name).String() }

func silenceEndTimer(s silence.Silence) store.Timer {
	return store.Timer{Key: silenceEndTimerKey(s.ID), Kind: kindSilenceEnd, DueAt: s.End(),
		Detail: sensor.NewObject(map[string]sensor.Value{"silence": sensor.StringValue(s.ID)})}
}

// ArmMaintenance puts the end timer of each maintenance window that has
// none, at its next occurrence's end. A timer already due is left to
// fire (an end passed while no process ran); one armed for another
// future instant (the window's cron or duration changed) is moved.
func (e *Engine) ArmMaintenance(ctx context.Context) error {
	windows, err := e.Maintenance(ctx)
	if err != nil {
		return err
	}
	now := e.clk.Now()
	keys := make([]string, len(windows))
	for i, w := range windows {
		keys[i] = maintenanceEndTimerKey(w.Name)
	}
	f, err := e.loadFacts(ctx, func(*facts, needs.Configs) needs.Set { return needs.MaintenanceEnds(keys) })
	if err != nil {
		return err
	}
	b := e.newBatch(nil, now).withFacts(f)
	for i, w := range windows {
		var cur time.Time
		t, err := f.timer(ctx, keys[i])
		if err != nil {
			return err
		}
		if t != nil {
			cur = t.DueAt
		}
		if due, put := silence.ArmWindowEnd(w, now, cur, t != nil); put {
			b.PutTimer(maintenanceEndTimer(w.Name, due), nil)
		}
	}
	return b.commit(ctx)
}

func maintenanceEndTimer(name string, due time.Time) store.Timer {
	return store.Timer{Key: maintenanceEndTimerKey(name), Kind: kindMaintenanceEnd, DueAt: due,
		Detail: sensor.NewObject(map[string]sensor.Value{"window": sensor.StringValue(name)})}
}

// silenceEndTimerFired handles a silence's end timer.
func (e *Engine) silenceEndTimerFired(ctx context.Context, f *facts, t store.Timer, now time.Time) (*batch, error) {
	k, ok := e.timerKey(ctx, t, run.TimerSilenceEnd)
	if !ok {
		return e.newBatch(nil, now), nil
	}
	id := k.Name
	if err := f.rounds(ctx, func(*facts, needs.Configs) needs.Set { return needs.Silence(id) }); err != nil {
		return nil, err
	}
	stored, err := f.silence(ctx, id)
	if err != nil {
		return nil, err
	}
	if stored == nil {
		return e.newBatch(nil, now), nil // gone by retention: nothing to judge
	}
	s := *stored
	if !s.Over(now) {
		// Not over (a timer left from an older end): wait for the end.
		b := e.newBatch(nil, now)
		due := t.DueAt
		b.PutTimer(silenceEndTimer(s.Silence), &due)
		return b, nil
	}
	if err := e.alertAfterSilence(ctx, s.Silence, s.ID, now); err != nil {
		return nil, err
	}
	return e.newBatch(nil, now), nil
}

// maintenanceEndTimerFired handles a window's end timer: the occurrence
// that ended at the timer's due time, then the timer moves to the next
// occurrence's end. A window no longer configured drops its timer.
func (e *Engine) maintenanceEndTimerFired(ctx context.Context, t store.Timer, now time.Time) (*batch, error) {
	k, ok := e.timerKey(ctx, t, run.TimerMaintenanceEnd)
	if !ok {
		return e.newBatch(nil, now), nil
	}
	windows, err := e.Maintenance(ctx)
	if err != nil {
		return nil, err
	}
	b := e.newBatch(nil, now)
	occ, ok := silence.EndedOccurrence(windows, k.Name, t.DueAt, now)
	if !ok {
		return b, nil
	}
	if err := e.alertAfterSilence(ctx, occ.Silence, occ.MarkerID, now); err != nil {
		return nil, err
	}
	if !occ.Next.IsZero() {
		due := t.DueAt
		b.PutTimer(maintenanceEndTimer(k.Name, occ.Next), &due)
	}
	return b, nil
}

// maxAfterSilenceEvents bounds the events one end reads (a silence that
// covered more is judged on the first ones and says so in the log).
const maxAfterSilenceEvents = 100_000

// alertAfterSilence alerts each condition s covered that still holds,
// once per marker id: one commit per condition.
func (e *Engine) alertAfterSilence(ctx context.Context, s silence.Silence, markerID string, now time.Time) error {
	q := silence.EndQueryOf(s, event.Types(), deps.OpensCondition)
	if q.None() {
		return nil
	}
	p := store.EventListParams{Since: q.Since, Types: q.Types, PipelineID: q.PipelineID, Limit: 500}
	m := &SilenceMatcher{e: e, ctx: ctx, silences: []silence.Silence{s}, owners: map[string]string{}, byOwner: silence.NeedsOwners([]silence.Silence{s}, nil)}
	var covered []event.Event
	for read := 0; read < maxAfterSilenceEvents; {
		page, err := e.st.EventList(ctx, p)
		if err != nil {
			return err
		}
		for _, ev := range page.Events {
			if _, ok := m.Match(ev); ok {
				covered = append(covered, ev)
			}
		}
		read += len(page.Events)
		if len(page.Events) < p.Limit {
			break
		}
		p.After = page.Next
	}
	for _, ev := range deps.SilencedConditions(covered) {
		if err := e.alertIfHolds(ctx, ev, s.ID, markerID); err != nil {
			return err
		}
	}
	return nil
}

// alertIfHolds judges one silenced condition on its period's facts and,
// when it holds, commits its alert with the marker that makes it once.
func (e *Engine) alertIfHolds(ctx context.Context, ev event.Event, silenceID, markerID string) error {
	key := run.Key{PipelineID: ev.PipelineID, ScheduleID: ev.ScheduleID, Period: ev.Date}
	kind := run.AfterSilenceMarker(markerID, ev.Type).String()
	// A conflict (another process sent it, or the pipeline moved) judges
	// again on fresh facts; the marker ends it once sent.
	err := e.retry(ctx, "alert after "+silenceID, func(ctx context.Context) error {
		f, err := e.loadFacts(ctx, func(*facts, needs.Configs) needs.Set { return needs.AfterSilence(key) })
		if err != nil {
			return err
		}
		if done, err := f.hasMarker(ctx, key, kind); err != nil || done {
			return err
		}
		lp, err := f.pipelineOf(ctx, key.PipelineID)
		if err != nil || lp == nil {
			return err
		}
		facts, err := get(ctx, f, func() (deps.ConditionFacts, error) { return decide.ConditionFacts(f.Facts, key) })
		if err != nil {
			return err
		}
		now := e.clk.Now()
		held, verdict := deps.LetGo(lp.P, ev, facts, now)
		switch verdict {
		case deps.LetGoCleared:
			e.log.InfoContext(ctx, "silenced condition cleared before the silence ended; nothing to send", "silence", silenceID,
				"pipeline", key.PipelineID, "period", key.Period, "type", ev.Type)
			return nil
		case deps.LetGoTold:
			e.log.InfoContext(ctx, "silenced condition was reported by a later alert; nothing to send", "silence", silenceID,
				"pipeline", key.PipelineID, "period", key.Period, "type", ev.Type)
			return nil
		}
		b := e.newBatch(lp, now).withFacts(f)
		b.Marker(store.Marker{Key: key, Kind: kind, At: now}, true)
		b.Notes(key, []run.Note{deps.AfterSilence(held, silenceID)})
		return b.commit(ctx)
	})
	if err != nil {
		return fmt.Errorf("alert after silence %s: %w", silenceID, err)
	}
	return nil
}
