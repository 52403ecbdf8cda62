package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

func testRuns(t *testing.T, o Options) {
	k := key("orders", "daily", "2026-03-14")

	t.Run("VersionRule", func(t *testing.T) {
		testVersionRule(t, o, versionedKind{
			write: func(payload, expect int64) store.Change {
				r := fullRun(k)
				r.Attempt = int(payload)
				return putRun(r, expect)
			},
			read: func(t *testing.T, s store.Store) (int64, int64, error) {
				r, err := s.RunGet(t.Context(), k)
				return r.Version, int64(r.Attempt), err
			},
		})
	})

	t.Run("RoundTripsEveryField", func(t *testing.T) {
		s := o.New(t)
		want := fullRun(k)
		requireAllSet(t, "fullRun", want)
		commit(t, s, putRun(want, 0))
		want.Version = 1
		mustMatch(t, "RunGet", must(s.RunGet(t.Context(), k)).get(t), want)
	})

	t.Run("MinimalRunRoundTrips", func(t *testing.T) {
		s := o.New(t)
		want := newRun(k)
		commit(t, s, putRun(want, 0))
		want.Version = 1
		storedRun(t, s, want)
	})

	t.Run("UpdateClearsOptionalFields", func(t *testing.T) {
		// A rerun resets the failure and the job's identity; a backend that
		// merges instead of replacing would keep the old ones.
		s := o.New(t)
		r := fullRun(k)
		commit(t, s, putRun(r, 0))
		r.LastFailure, r.JobMeta, r.JobRunID = nil, nil, ""
		r.EndedAt, r.JobStartedAt, r.PollDeadline = time.Time{}, time.Time{}, time.Time{}
		r.State, r.Outcome, r.Attempt = run.Evaluating, run.OutcomeNone, 0
		commit(t, s, putRun(r, 1))
		r.Version = 2
		storedRun(t, s, r)
	})

	t.Run("EmptyFailureIsStillAFailure", func(t *testing.T) {
		s := o.New(t)
		r := newRun(k)
		r.LastFailure = &run.Failure{}
		commit(t, s, putRun(r, 0))
		if got := must(s.RunGet(t.Context(), k)).get(t); got.LastFailure == nil {
			t.Fatal("LastFailure: got nil, want a (blank) failure")
		}
	})

	t.Run("KeyHasThreeParts", func(t *testing.T) {
		// Runs differing in any one part of the key are different runs:
		// creating one must not take another's lock.
		s := o.New(t)
		keys := []run.Key{
			k,
			key("orders", "hourly", k.Period),
			key("billing", k.ScheduleID, k.Period),
			key(k.PipelineID, k.ScheduleID, "2026-03-15"),
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

// storedRun fails the test unless the store holds want, with no failure
// where want has none (a nil LastFailure is not an empty one).
func storedRun(t *testing.T, s store.Store, want run.Run) {
	t.Helper()
	got := must(s.RunGet(t.Context(), want.Key)).get(t)
	mustMatch(t, "RunGet", got, want)
	if want.LastFailure == nil && got.LastFailure != nil {
		t.Errorf("LastFailure: got %+v, want nil", *got.LastFailure)
	}
}
