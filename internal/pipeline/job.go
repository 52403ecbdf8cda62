package pipeline

import (
	"time"

	"github.com/interlockhq/interlock/internal/confdec"
)

// Job budget bounds and defaults (reference §1.6 plus product §3a).
const (
	defaultPollInterval = 60 * time.Second
	minPollInterval     = time.Second
	defaultPollWindow   = time.Hour
	minPollWindow       = time.Minute
	maxPollWindow       = 24 * time.Hour
	minStuckAfter       = time.Minute
)

func jobTypeNames() []string {
	names := make([]string, 0, len(jobSchemas))
	for _, t := range JobTypes() {
		names = append(names, string(t))
	}
	return names
}

func (b *builder) job(raw *rawJob) Job {
	j := Job{
		MaxRetries:      b.intBudget("job.maxRetries", raw.MaxRetries, 0, 0, 10),
		MaxCodeRetries:  b.intBudget("job.maxCodeRetries", raw.MaxCodeRetries, 1, 0, 3),
		MaxDriftReruns:  b.intBudget("job.maxDriftReruns", raw.MaxDriftReruns, 1, 0, 5),
		MaxManualReruns: b.intBudget("job.maxManualReruns", raw.MaxManualReruns, 1, 0, 5),
		TriggerRetries:  b.intBudget("job.triggerRetries", raw.TriggerRetries, 3, 0, 10),
		PollInterval:    defaultPollInterval,
		PollWindow:      defaultPollWindow,
	}
	t := JobType(raw.Type)
	if _, known := jobSchemas[t]; known {
		j.Type = t
		j.Config = decodeJobConfig(b.d, raw.Config, b.at("job.config"), t, b.opt.envAllow())
	} else if raw.Type != "" {
		b.errorf("job.type", "%s", confdec.Unknown("job type", raw.Type, jobTypeNames()))
	}

	switch {
	case raw.PollWindow != nil && raw.JobPollWindowSeconds != nil:
		b.errorf("job.jobPollWindowSeconds", "set either job.pollWindow or job.jobPollWindowSeconds, not both")
	case raw.PollWindow != nil:
		j.PollWindow = *raw.PollWindow
		b.durationIn("job.pollWindow", j.PollWindow, minPollWindow, maxPollWindow)
	case raw.JobPollWindowSeconds != nil && *raw.JobPollWindowSeconds != 0:
		// The reference's field; 0 keeps the default, as there.
		secs := b.intBudget("job.jobPollWindowSeconds", raw.JobPollWindowSeconds, 0, 60, 86400)
		j.PollWindow = time.Duration(secs) * time.Second
	}
	if raw.PollInterval != nil {
		j.PollInterval = *raw.PollInterval
		b.durationIn("job.pollInterval", j.PollInterval, minPollInterval, maxPollWindow)
		if j.PollInterval > j.PollWindow && j.PollInterval <= maxPollWindow {
			b.errorf("job.pollInterval", "%s is longer than the poll window %s", j.PollInterval, j.PollWindow)
		}
	}
	if raw.StuckAfter != nil {
		b.durationIn("job.stuckAfter", *raw.StuckAfter, minStuckAfter, maxLongDuration)
		v := *raw.StuckAfter
		j.StuckAfter = &v
	}
	return j
}
