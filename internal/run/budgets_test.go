package run

import (
	"slices"
	"testing"

	"github.com/interlockhq/interlock/internal/pipeline"
)

func TestBudgets(t *testing.T) {
	p := &pipeline.Pipeline{Job: pipeline.Job{MaxRetries: 4, MaxCodeRetries: 2, MaxDriftReruns: 3, MaxManualReruns: 5}}
	cases := []struct {
		name   string
		ledger []string
		used   []int // retries, code retries, drift, manual
	}{
		{"nothing used", nil, []int{0, 0, 0, 0}},
		{"retries count on both retry budgets", []string{LedgerJobRetry, LedgerJobRetry}, []int{2, 2, 0, 0}},
		{"drift and late data share one budget", []string{ReasonDrift, ReasonLateData, ReasonDrift}, []int{0, 0, 3, 0}},
		{"manual counts its own reason only", []string{ReasonManual, "hotfix", ReasonManual, ReasonBackfill}, []int{0, 0, 0, 2}},
		{"all at once", []string{LedgerJobRetry, ReasonDrift, ReasonManual}, []int{1, 1, 1, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			bs := Budgets(p, c.ledger)
			var used, max []int
			for _, b := range bs {
				used, max = append(used, b.Used), append(max, b.Max)
			}
			if !slices.Equal(used, c.used) || !slices.Equal(max, []int{4, 2, 3, 5}) {
				t.Fatalf("Budgets = %+v; want used %v of [4 2 3 5]", bs, c.used)
			}
		})
	}
}

func TestBudgetsByReason(t *testing.T) {
	p := &pipeline.Pipeline{Job: pipeline.Job{MaxRetries: 4, MaxCodeRetries: 2, MaxDriftReruns: 3, MaxManualReruns: 1}}
	head := func(retries, drift int) []ReasonBudget {
		return []ReasonBudget{
			{Setting: SettingMaxRetries, Used: retries, Max: 4},
			{Setting: SettingMaxCodeRetries, Used: retries, Max: 2},
			{Setting: SettingMaxDriftReruns, Used: drift, Max: 3},
		}
	}
	unusedManual := ReasonBudget{Setting: SettingMaxManualReruns, Max: 1}
	cases := []struct {
		name   string
		ledger []string
		want   []ReasonBudget
	}{
		{"nothing used: one unused manual budget, no backfill line", nil, append(head(0, 0), unusedManual)},
		{"retries and drift are not manual reasons", []string{LedgerJobRetry, ReasonDrift, ReasonLateData}, append(head(1, 2), unusedManual)},
		{"each manual reason on its own, in the order first used", []string{"hotfix", ReasonManual, "hotfix"}, append(head(0, 0),
			ReasonBudget{Setting: SettingMaxManualReruns, Reason: "hotfix", Used: 2, Max: 1},
			ReasonBudget{Setting: SettingMaxManualReruns, Reason: ReasonManual, Used: 1, Max: 1})},
		{"backfill reruns counted on no budget", []string{ReasonBackfill, ReasonBackfill}, append(head(0, 0), unusedManual,
			ReasonBudget{Reason: ReasonBackfill, Used: 2, Unbudgeted: true})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := BudgetsByReason(p, c.ledger); !slices.Equal(got, c.want) {
				t.Fatalf("BudgetsByReason(%q)\n got %+v\nwant %+v", c.ledger, got, c.want)
			}
		})
	}
	if l := (ReasonBudget{Used: 3, Max: 1}).Left(); l != 0 {
		t.Errorf("Left of an overdrawn budget = %d, want 0", l)
	}
	if l := (ReasonBudget{Used: 1, Max: 3}).Left(); l != 2 {
		t.Errorf("Left = %d, want 2", l)
	}
}
