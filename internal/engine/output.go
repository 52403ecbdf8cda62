package engine

import (
	"context"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/textsafe"
	"github.com/interlockhq/interlock/internal/trigger"
)

// DetailOutput is the detail field of JOB_COMPLETED and JOB_FAILED that
// holds the end of what the job printed (run.DetailOutput).
const DetailOutput = run.DetailOutput

// boundOutput is a job's output as the event that reports how the job
// ended holds it (run.WithJobOutput): its last lines, within the job
// port's bound, control characters cleaned. The runner has cleaned,
// redacted and bounded it; the engine only makes sure of the bound and of
// the control characters, whatever the job type (it cannot redact: it
// does not know the secrets).
func boundOutput(output string) string {
	return textsafe.Tail(textsafe.Lines(output), trigger.MaxOutput)
}

// JobOutput is the output of the period's last finished job, as its
// JOB_COMPLETED or JOB_FAILED event recorded it.
type JobOutput = decide.JobOutput

// lastJobOutput reads the output of the period's last finished job from
// the event log (decide.LastJobOutput); nil when that job printed nothing.
func (e *Engine) lastJobOutput(ctx context.Context, key run.Key) (*JobOutput, error) {
	page, err := e.st.EventList(ctx, store.EventListParams{PipelineID: key.PipelineID, Period: key.Period,
		Types: []event.Type{event.JobCompleted, event.JobFailed}})
	if err != nil {
		return nil, err
	}
	return decide.LastJobOutput(page.Events, key.ScheduleID), nil
}
