package backfill

import (
	"fmt"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
)

// What a backfill's steps say: each step's event, as a note the engine
// emits on the pipeline's (or the period's) key.

// RequestedNote is BACKFILL_REQUESTED: backfill id, begun (Begin) for req
// by by.
func RequestedNote(id, by string, req Request, b Begun) run.Note {
	return run.Note{Type: event.BackfillRequested,
		Message: fmt.Sprintf("backfill %s requested by %s: %s..%s, only %s, %d of %d periods would run, at most %d at once",
			id, by, b.From, b.To, req.Only, b.WouldRun, len(b.Periods), req.MaxActive),
		Detail: run.Detail("backfill", id, "from", b.From, "to", b.To, "only", string(req.Only), "maxActive", req.MaxActive, "reverse", req.Reverse,
			"periods", len(b.Periods), "wouldRun", b.WouldRun, "requestedBy", by)}
}

// CancelledNote is BACKFILL_CANCELLED: backfill id cancelled by by, its
// periods counted as they stood.
func CancelledNote(id, by string, c Counts) run.Note {
	return run.Note{Type: event.BackfillCancelled,
		Message: fmt.Sprintf("backfill %s cancelled by %s: %d periods not started; %d running finish", id, by, c.Pending, c.Active),
		Detail:  run.Detail("backfill", id, "cancelledBy", by, "pending", c.Pending, "active", c.Active, "succeeded", c.Succeeded, "failed", c.Failed, "skipped", c.Skipped)}
}

// CompletedNote is BACKFILL_COMPLETED: backfill id has no period left to
// run.
func CompletedNote(id string, c Counts) run.Note {
	return run.Note{Type: event.BackfillCompleted,
		Message: fmt.Sprintf("backfill %s completed: %d succeeded, %d failed, %d skipped", id, c.Succeeded, c.Failed, c.Skipped),
		Detail:  run.Detail("backfill", id, "succeeded", c.Succeeded, "failed", c.Failed, "skipped", c.Skipped)}
}

// StartedNote is BACKFILL_PERIOD_STARTED: backfill id started period (why:
// PlanPeriod's reason), as a rerun of an ended run or a new one.
func StartedNote(id, period, why string, rerun bool) run.Note {
	return run.Note{Type: event.BackfillPeriodStarted, Message: fmt.Sprintf("backfill %s started %s: %s", id, period, why),
		Detail: run.Detail("backfill", id, "reason", why, "rerun", rerun)}
}

// SkippedNote is BACKFILL_PERIOD_SKIPPED: backfill id skipped period, and
// why.
func SkippedNote(id, period, why string) run.Note {
	return run.Note{Type: event.BackfillPeriodSkipped, Message: fmt.Sprintf("backfill %s skipped %s: %s", id, period, why),
		Detail: run.Detail("backfill", id, "reason", why)}
}
