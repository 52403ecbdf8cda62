package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

func testRuns(t *testing.T, o Options) {
	testVersionRule(t, o, versionedKind{
		write: func(payload, expect int64) store.Change {
			r := fullRun(ordersDay)
			r.Attempt = int(payload)
			return putRun(r, expect)
		},
		read: func(t *testing.T, s store.Store) (int64, int64, error) {
			r, err := s.RunGet(t.Context(), ordersDay)
			return r.Version, int64(r.Attempt), err
		},
	})

	testRoundTrip(t, o, "fullRun", fullRun(ordersDay), func(r run.Run) store.Change { return putRun(r, 0) },
		func(t *testing.T, s store.Store) (run.Run, error) { return s.RunGet(t.Context(), ordersDay) }, func(r *run.Run) { r.Version = 1 })

	t.Run("MinimalRunRoundTrips", func(t *testing.T) {
		putStored(t, o.New(t), newRun(ordersDay), 0)
	})

	t.Run("UpdateClearsOptionalFields", func(t *testing.T) {
		// A rerun resets the failure and the job's identity; a backend that
		// merges instead of replacing would keep the old ones.
		s := o.New(t)
		r := fullRun(ordersDay)
		commit(t, s, putRun(r, 0))
		r.LastFailure, r.JobMeta, r.JobRunID = nil, nil, ""
		r.EndedAt, r.JobStartedAt, r.PollDeadline = time.Time{}, time.Time{}, time.Time{}
		r.State, r.Outcome, r.Attempt = run.Evaluating, run.OutcomeNone, 0
		putStored(t, s, r, 1)
	})

	t.Run("EmptyFailureIsStillAFailure", func(t *testing.T) {
		s := o.New(t)
		r := newRun(ordersDay)
		r.LastFailure = &run.Failure{}
		commit(t, s, putRun(r, 0))
		if got := must(s.RunGet(t.Context(), ordersDay)).get(t); got.LastFailure == nil {
			t.Fatal("LastFailure: got nil, want a (blank) failure")
		}
	})

	t.Run("KeyHasThreeParts", func(t *testing.T) {
		// Runs differing in any one part of the key are different runs:
		// creating one must not take another's lock.
		s := o.New(t)
		keys := []run.Key{
			ordersDay,
			key("orders", "hourly", ordersDay.Period),
			key("billing", ordersDay.ScheduleID, ordersDay.Period),
			key(ordersDay.PipelineID, ordersDay.ScheduleID, "2026-03-15"),
		}
		for i, kk := range keys {
			r := newRun(kk)
			r.Attempt = i
			commit(t, s, putRun(r, 0))
		}
		for i, kk := range keys {
			if got := must(s.RunGet(t.Context(), kk)).get(t); got.Attempt != i || got.Key != kk {
				t.Errorf("RunGet(%v): got key %v attempt %d, want attempt %d", kk, got.Key, got.Attempt, i)
			}
		}
	})
}

// putStored commits r over version expect and fails the test unless the
// store then holds r at version expect+1, with no failure where r has
// none (a nil LastFailure is not an empty one).
func putStored(t *testing.T, s store.Store, r run.Run, expect int64) {
	t.Helper()
	commit(t, s, putRun(r, expect))
	r.Version = expect + 1
	got := must(s.RunGet(t.Context(), r.Key)).get(t)
	mustMatch(t, "RunGet", got, r)
	if r.LastFailure == nil && got.LastFailure != nil {
		t.Errorf("LastFailure: got %+v, want nil", *got.LastFailure)
	}
}
