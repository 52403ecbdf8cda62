package run

import (
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/sensor"
)

// DetailOutput is the detail field of JOB_COMPLETED and JOB_FAILED that
// holds the end of what the job printed. The name is generic: any job
// type that can read its output may fill it.
const DetailOutput = "output"

// reportsJobEnd reports whether an event of type t says how a job ended:
// the one that carries the job's output.
func reportsJobEnd(t event.Type) bool { return t == event.JobCompleted || t == event.JobFailed }

// WithJobOutput adds output, already bounded and cleaned, to the detail
// of eff's notes that say how the job ended; "" adds nothing.
func WithJobOutput(eff Effect, output string) Effect {
	if output == "" {
		return eff
	}
	for i, n := range eff.Notes {
		if !reportsJobEnd(n.Type) {
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

// JobOutput is what the last finished job of a period printed, as the
// event that said how it ended recorded it.
type JobOutput struct {
	Event   event.Event
	Output  string
	Attempt int // 0: not recorded
}

// LastJobOutput finds the output of the period's last finished job in
// evs (the period's events, oldest first) of schedule scheduleID. ok is
// false when that job printed nothing: an older attempt's output is not
// shown, it would pass for the last one's.
func LastJobOutput(evs []event.Event, scheduleID string) (JobOutput, bool) {
	for i := len(evs) - 1; i >= 0; i-- {
		ev := evs[i]
		if ev.ScheduleID != scheduleID || !reportsJobEnd(ev.Type) {
			continue
		}
		out, _ := ev.Detail.Str(DetailOutput)
		if out == "" {
			return JobOutput{}, false
		}
		o := JobOutput{Event: ev, Output: out}
		if a, ok := ev.Detail.Get("attempt"); ok {
			if n, ok := a.Int(); ok {
				o.Attempt = int(n)
			}
		}
		return o, true
	}
	return JobOutput{}, false
}
