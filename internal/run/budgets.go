package run

import "github.com/interlockhq/interlock/internal/pipeline"

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
