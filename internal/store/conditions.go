package store

import (
	"context"
	"errors"

	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/run"
)

// ConditionFactsOf reads the stored facts of one period that
// deps.ConditionHolds and the root-cause decisions judge: the pipeline's
// row (pause, first load), the period's run (also when it was created
// under the other schedule id, run.OtherSchedule) and its markers. Each is
// a read on one key or one key range, on every backend. A pipeline or run
// that does not exist is absent from the facts, not an error: a period
// with no run is a fact too.
//
// It is the one read behind every "does the condition still hold" (the
// end of a silence, the release of a root cause): no caller gathers these
// facts its own way.
func ConditionFactsOf(ctx context.Context, st Store, key run.Key) (deps.ConditionFacts, error) {
	var f deps.ConditionFacts
	switch p, err := st.PipelineGet(ctx, key.PipelineID); {
	case err == nil:
		f.Paused, f.FirstLoaded = p.Paused, p.FirstLoadedAt
	case !errors.Is(err, ErrNotFound):
		return f, err
	}
	for i, k := range []run.Key{key, run.OtherSchedule(key)} {
		if i > 0 && k == key {
			break
		}
		r, err := st.RunGet(ctx, k)
		if err == nil {
			f.Run = &r
			break
		}
		if !errors.Is(err, ErrNotFound) {
			return f, err
		}
	}
	ms, err := st.MarkerListOf(ctx, key)
	if err != nil {
		return f, err
	}
	for _, m := range ms {
		f.SetMarker(m.Kind, m.At)
	}
	return f, nil
}
