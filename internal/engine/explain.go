package engine

import (
	"context"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/needs"
)

// What `interlock explain` shows (decide.Explain decides it; its parts
// are decide's types).
type (
	// Explanation is why a period of a pipeline would or would not run,
	// right now.
	Explanation = decide.Explanation
	// RuleCheck is one rule with what it saw.
	RuleCheck = decide.RuleCheck
)

// Explain evaluates a period of a pipeline as it stands now, without
// changing anything. An empty period means the current one. Its facts
// are the named needs (decide.ExplainNeeds), read in one batch per
// round, the run's last job output's page of the event log among them.
func (e *Engine) Explain(ctx context.Context, pipelineID, period string) (Explanation, error) {
	now := e.clk.Now()
	f, err := e.loadFor(ctx, pipelineID, func(_ *facts, cfg needs.Configs) needs.Set {
		return decide.ExplainNeeds(cfg, pipelineID, period, now)
	})
	if err != nil {
		return Explanation{}, err
	}
	in := decide.ExplainIn{PipelineID: pipelineID, Period: period, Rules: e.rules, Findable: e.findable}
	var x Explanation
	err = f.decide(ctx, func() (err error) {
		x, err = decide.Explain(in, f.Facts, now)
		return err
	})
	return x, err
}
