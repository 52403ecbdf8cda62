package api

import (
	"context"
	"net/http"

	"github.com/interlockhq/interlock/internal/engine"
)

// explainer answers the explain route. A nil explainer makes the route
// answer 501, for an engine that cannot explain.
type explainer func(ctx context.Context, pipelineID, period string) (any, error)

// engineExplainer adapts engine.Explain to the route.
func engineExplainer(e *engine.Engine) explainer {
	return func(ctx context.Context, id, period string) (any, error) { return e.Explain(ctx, id, period) }
}

// explainPeriod says why a period (?period=, default the current one)
// would or would not run: each rule with what it saw, the run, the
// deadlines and budgets — what `interlock explain` prints.
func (s *server) explainPeriod(w http.ResponseWriter, r *http.Request) error {
	id := r.PathValue("id")
	period, err := onlyParam(r, "period")
	if err != nil {
		return err
	}
	if _, _, err := s.loaded(r.Context(), id); err != nil {
		return err
	}
	if s.explain == nil {
		return errorf(http.StatusNotImplemented, codeNotImplemented, "explain is not available in this version")
	}
	x, err := s.explain(r.Context(), id, period)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, x)
	return nil
}
