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
	var row *Pipeline
	switch p, err := st.PipelineGet(ctx, key.PipelineID); {
	case err == nil:
		row = &p
	case !errors.Is(err, ErrNotFound):
		return deps.ConditionFacts{}, err
	}
	var found *run.Run
	for i, k := range []run.Key{key, run.OtherSchedule(key)} {
		if i > 0 && k == key {
			break
		}
		r, err := st.RunGet(ctx, k)
		if err == nil {
			found = &r
			break
		}
		if !errors.Is(err, ErrNotFound) {
			return deps.ConditionFacts{}, err
		}
	}
	ms, err := st.MarkerListOf(ctx, key)
	if err != nil {
		return deps.ConditionFacts{}, err
	}
	return ConditionFactsFrom(row, found, ms), nil
}

// ConditionFactsFrom are the condition facts of a period from its
// records as read (nil: absent): the pipeline's row, the period's run
// (its own, else the one under the other schedule id) and its markers.
func ConditionFactsFrom(row *Pipeline, r *run.Run, markers []Marker) deps.ConditionFacts {
	var f deps.ConditionFacts
	if row != nil {
		f.Paused, f.FirstLoaded = row.Paused, row.FirstLoadedAt
	}
	f.Run = r
	for _, m := range markers {
		f.SetMarker(m.Kind, m.At)
	}
	return f
}
