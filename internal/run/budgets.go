package run

import (
	"slices"

	"github.com/interlockhq/interlock/internal/pipeline"
)

// Budget is one of a period's budgets and how much of it its ledger has
// used, as `interlock explain` shows it.
type Budget struct {
	Name string
	Used int
	Max  int
}

// Budgets are a period's budgets given its ledger reasons, each counted
// and bounded by the functions the decisions call (RetriesUsed and
// RetryBudget for JobFailed, RerunBudget for DecideRerun), so what
// explain shows is what a failure or a rerun would be judged on.
func Budgets(p *pipeline.Pipeline, ledger []string) []Budget {
	retries := RetriesUsed(ledger)
	drift, driftUsed := RerunBudget(ReasonDrift, ledger, p)
	manual, manualUsed := RerunBudget(ReasonManual, ledger, p)
	return []Budget{
		{Name: "maxRetries (job failures)", Used: retries, Max: RetryBudget(Transient, p)},
		{Name: "maxCodeRetries (PERMANENT failures)", Used: retries, Max: RetryBudget(Permanent, p)},
		{Name: "maxDriftReruns (drift and late data)", Used: driftUsed, Max: drift},
		{Name: "maxManualReruns (reason manual)", Used: manualUsed, Max: manual},
	}
}

// The settings that bound a period's budgets, as ReasonBudget names them.
const (
	SettingMaxRetries      = "maxRetries"
	SettingMaxCodeRetries  = "maxCodeRetries"
	SettingMaxDriftReruns  = "maxDriftReruns"
	SettingMaxManualReruns = "maxManualReruns"
)

// ReasonBudget is one budget of a period as the dashboard shows it: the
// setting that bounds it ("" for none), the rerun reason it counts (a
// manual reason; "" otherwise), how much the ledger used and the bound.
// Unbudgeted counts reruns no budget bounds (a backfill's).
type ReasonBudget struct {
	Setting    string
	Reason     string
	Used, Max  int
	Unbudgeted bool
}

// Left is what is left of b (never below zero).
func (b ReasonBudget) Left() int { return max(0, b.Max-b.Used) }

// BudgetsByReason are a period's budgets given its ledger reasons, every
// rerun reason on the budget the decisions count it on: automatic retries
// on one count bounded by maxRetries and, after a PERMANENT failure,
// maxCodeRetries (RetriesUsed, RetryBudget); drift and late data sharing
// maxDriftReruns; every other reason counted on its own against
// maxManualReruns (RerunBudget), in the order first used, or one unused
// manual budget when none was; backfill reruns on no budget, listed only
// when there were some.
func BudgetsByReason(p *pipeline.Pipeline, ledger []string) []ReasonBudget {
	retries := RetriesUsed(ledger)
	drift, driftUsed := RerunBudget(ReasonDrift, ledger, p)
	out := []ReasonBudget{
		{Setting: SettingMaxRetries, Used: retries, Max: RetryBudget(Transient, p)},
		{Setting: SettingMaxCodeRetries, Used: retries, Max: RetryBudget(Permanent, p)},
		{Setting: SettingMaxDriftReruns, Used: driftUsed, Max: drift},
	}
	var manual []string
	backfills := 0
	for _, r := range ledger {
		switch {
		case r == LedgerJobRetry || IsDriftReason(r):
		case r == ReasonBackfill:
			backfills++
		case !slices.Contains(manual, r):
			manual = append(manual, r)
		}
	}
	if len(manual) == 0 {
		out = append(out, ReasonBudget{Setting: SettingMaxManualReruns, Max: p.Job.MaxManualReruns})
	}
	for _, reason := range manual {
		budget, used := RerunBudget(reason, ledger, p)
		out = append(out, ReasonBudget{Setting: SettingMaxManualReruns, Reason: reason, Used: used, Max: budget})
	}
	if backfills > 0 {
		out = append(out, ReasonBudget{Reason: ReasonBackfill, Used: backfills, Unbudgeted: true})
	}
	return out
}
