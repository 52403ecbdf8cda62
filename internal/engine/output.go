package engine

import (
	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/run"
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
