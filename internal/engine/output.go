package engine

import (
	"context"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/textsafe"
	"github.com/interlockhq/interlock/internal/trigger"
)

// DetailOutput is the detail field of JOB_COMPLETED and JOB_FAILED that
// holds the end of what the job printed (trigger.Result.Output). The name
// is generic: any job type that can read its output may fill it.
const DetailOutput = "output"

// withOutput adds a job's output to the detail of the event that reports
// how the job ended. The runner has cleaned, redacted and bounded it; the
// engine only makes sure of the bound and of the control characters,
// whatever the job type (it cannot redact: it does not know the secrets).
func withOutput(eff run.Effect, output string) run.Effect {
	output = textsafe.Tail(textsafe.Lines(output), trigger.MaxOutput)
	if output == "" {
		return eff
	}
	for i, n := range eff.Notes {
		if n.Type != event.JobCompleted && n.Type != event.JobFailed {
			continue
		}
		fields := make(map[string]sensor.Value, n.Detail.Len()+1)
		for _, k := range n.Detail.Keys() {
			fields[k], _ = n.Detail.Get(k)
		}
		fields[DetailOutput] = sensor.StringValue(output)
		eff.Notes[i].Detail = sensor.NewObject(fields)
	}
	return eff
}

// JobOutput is the output of the period's last finished job, as its
// JOB_COMPLETED or JOB_FAILED event recorded it.
type JobOutput struct {
	Event   event.Type `json:"event"`
	At      time.Time  `json:"at"`
	Attempt int        `json:"attempt,omitempty"`
	Output  string     `json:"output"`
}

// lastJobOutput reads the output of the period's last finished job from
// the event log; nil when that job printed nothing (an older attempt's
// output is not shown: it would pass for the last one's).
func (e *Engine) lastJobOutput(ctx context.Context, key run.Key) (*JobOutput, error) {
	page, err := e.st.EventList(ctx, store.EventListParams{PipelineID: key.PipelineID, Period: key.Period,
		Types: []event.Type{event.JobCompleted, event.JobFailed}})
	if err != nil {
		return nil, err
	}
	evs := page.Events
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		if ev.ScheduleID != key.ScheduleID {
			continue
		}
		v, ok := ev.Detail.Get(DetailOutput)
		out, _ := v.Str()
		if !ok || out == "" {
			return nil, nil
		}
		o := &JobOutput{Event: ev.Type, At: ev.Time, Output: out}
		if a, ok := ev.Detail.Get("attempt"); ok {
			if n, ok := a.Int(); ok {
				o.Attempt = int(n)
			}
		}
		return o, nil
	}
	return nil, nil
}
