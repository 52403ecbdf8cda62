package pipeline

import (
	"time"

	"github.com/interlockhq/interlock/internal/duration"
)

// Retention (interlock.yaml `retention`): per-period history older than
// this is deleted by serve's background sweep (store.Store.Expire), so the
// cost of a decision and of a watchdog pass never grows with the history
// kept. What counts history, and so bounds retention from below:
//
//   - the watchdog looks back RetentionLookback over periods whose ticks,
//     deadlines or runs it judges (watchdog.Lookback), reading their runs
//     and alert-once markers: a period deleted inside that window would be
//     reported missed again;
//   - a period's SLA and trigger deadlines ("+Nd HH:MM", N up to 366)
//     fall N days after its date, and the watchdog judges them then;
//   - the bounded waits that start from a period's deadline or run —
//     evaluation window, stuck run, post-run sensor timeout (at most 7d),
//     job poll window and relative SLA (at most 24h);
//   - rerun budgets (maxManualReruns, maxDriftReruns) and the circuit
//     breaker count the ledger and the run of one period, for as long as
//     the period is kept: they have no window of their own. A period is
//     kept while its date or its last activity is within retention
//     (run.PeriodExpired), so a period written, rerun or backfilled keeps
//     its run and budgets for retention after that; once both are older it
//     is forgotten — a rerun or a late trigger sensor for it starts afresh,
//     as for a period that never ran.
//
// A period's records are in use for HistoryWindow after its date; the
// settings refuse a retention below MinRetention (the window of a pipeline
// with no "+Nd" deadline) and a pipeline whose window is longer than the
// retention is refused at its deadline field.
const (
	DefaultRetention = 90 * 24 * time.Hour
	// RetentionLookback is the watchdog's look back (watchdog.Lookback;
	// a test in the watchdog package keeps them equal).
	RetentionLookback = 48 * time.Hour
	// MinRetention is the history window of a pipeline without "+Nd"
	// deadlines.
	MinRetention = 24*time.Hour + historySlack
	// MaxRetention bounds the value to what a cutoff can be computed for.
	MaxRetention = 100 * 365 * 24 * time.Hour
)

// historySlack is what a period's window adds to its last deadline: the
// longest bounded wait that can start there (maxLongDuration), the
// watchdog's look back, and a day for the zones periods are named in (a
// date ends up to 12 hours after its end in UTC, and the sweep's cutoff
// is a UTC date: run.RetentionCutoff).
const historySlack = maxLongDuration + RetentionLookback + 24*time.Hour

// HistoryWindow is how long after the start of its period's date a
// period's records still feed p's decisions: the period's day, the later
// of its "+Nd" deadlines, and historySlack.
func (p *Pipeline) HistoryWindow() time.Duration {
	days, _ := p.lastDeadline()
	return time.Duration(days+1)*24*time.Hour + historySlack
}

// lastDeadline is N of the later "+Nd" deadline (SLA or trigger) and the
// field that sets it; 0 and "" without one.
func (p *Pipeline) lastDeadline() (days int, field string) {
	if t := p.Schedule.Trigger; t != nil && t.Deadline.Days() > 0 {
		days, field = t.Deadline.Days(), "schedule.trigger.deadline"
	}
	if p.SLA != nil && p.SLA.Deadline.Days() > days {
		days, field = p.SLA.Deadline.Days(), "sla.deadline"
	}
	return days, field
}

// retention checks interlock.yaml's retention.
func (b *builder) retention(v time.Duration) {
	if v < MinRetention || v > MaxRetention {
		b.errorf("retention", "%s is out of range (want %s to %s): the watchdog reads a period's history for %s, and waits of up to %s follow a period's day",
			duration.Format(v), duration.Format(MinRetention), duration.Format(MaxRetention), duration.Format(RetentionLookback), duration.Format(maxLongDuration))
	}
}

// withinRetention refuses a pipeline whose deadlines keep a period's
// history in use for longer than the retention keeps it.
func (b *builder) withinRetention(p *Pipeline) {
	keep := b.opt.Retention
	if keep == 0 {
		keep = DefaultRetention
	}
	days, field := p.lastDeadline()
	if w := p.HistoryWindow(); w > keep {
		b.errorf(field, "+%dd keeps a period's history in use for %s, longer than retention (%s, interlock.yaml): raise retention to at least %s or shorten the deadline",
			days, duration.Format(w), duration.Format(keep), duration.Format(w))
	}
}
