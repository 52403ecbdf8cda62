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
