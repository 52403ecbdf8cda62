package engine

import (
	"context"
	"fmt"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
)

// The end of a silence or of a maintenance window's occurrence. A
// durable timer is armed at it — a silence's when it is created (moved
// to the expiry when it is expired early), a window's at its next
// occurrence's end (ArmMaintenance: decide.MaintenanceArm, then re-armed
// by each firing) — and its firing is decided by decide.Timer: the
// timer moved or removed, and the conditions
// the silence covered, found in the stored events it judges (pages of
// the event log read in rounds of the timer's facts). The engine then
// decides each condition on its period's facts (decide.AfterSilence):
// the alert and a marker (run.AfterSilenceMarker, written IfAbsent) in
// one commit, so a restart or a second replica that fires the timer
// again sends nothing more.

// ArmMaintenance puts the end timer of each maintenance window that has
// none, at its next occurrence's end (decide.MaintenanceArm).
func (e *Engine) ArmMaintenance(ctx context.Context) error {
	windows, err := e.Maintenance(ctx)
	if err != nil {
		return err
	}
	keys := make([]string, len(windows))
	for i, w := range windows {
		keys[i] = run.MaintenanceEndTimer(w.Name).String()
	}
	f, err := e.loadFacts(ctx, func(*facts, needs.Configs) needs.Set { return needs.MaintenanceEnds(keys) })
	if err != nil {
		return err
	}
	b := &batch{e: e, f: f}
	if err := decideOutcome(ctx, b, func(f *decide.Facts) (*decide.Outcome, error) { return decide.MaintenanceArm(windows, f, e.clk.Now()) }); err != nil {
		return err
	}
	return b.commit(ctx)
}

// alertAfterSilence alerts each condition an end judges that still
// holds, once per marker id: one commit per condition.
func (e *Engine) alertAfterSilence(ctx context.Context, end decide.SilenceEnding) error {
	for _, ev := range end.Conditions {
		if err := e.alertIfHolds(ctx, ev, end.SilenceID, end.MarkerID); err != nil {
			return err
		}
	}
	return nil
}

// alertIfHolds judges one silenced condition on its period's facts
// (decide.AfterSilence) and commits what it decides.
func (e *Engine) alertIfHolds(ctx context.Context, ev event.Event, silenceID, markerID string) error {
	key := run.Key{PipelineID: ev.PipelineID, ScheduleID: ev.ScheduleID, Period: ev.Date}
	// A conflict (another process sent it, or the pipeline moved) judges
	// again on fresh facts; the marker ends it once sent.
	err := e.retry(ctx, "alert after "+silenceID, func(ctx context.Context) error {
		f, err := e.loadFor(ctx, key.PipelineID, func(*facts, needs.Configs) needs.Set { return needs.AfterSilence(key) })
		if err != nil {
			return err
		}
		b := &batch{e: e, f: f}
		in := decide.AfterSilenceIn{Event: ev, SilenceID: silenceID, MarkerID: markerID, Env: b.env()}
		if err := decideOutcome(ctx, b, func(f *decide.Facts) (*decide.Outcome, error) { return decide.AfterSilence(in, f, e.clk.Now()) }); err != nil {
			return err
		}
		return b.commit(ctx)
	})
	if err != nil {
		return fmt.Errorf("alert after silence %s: %w", silenceID, err)
	}
	return nil
}
