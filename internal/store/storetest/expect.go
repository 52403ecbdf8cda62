package storetest

import (
	"errors"
	"sync"
	"testing"

	"github.com/interlockhq/interlock/internal/store"
)

// commit applies c and fails the test if the store refuses it.
func commit(t *testing.T, s store.Store, c store.Change) {
	t.Helper()
	if err := s.Commit(t.Context(), c); err != nil {
		t.Fatalf("Commit: %v", err)
	}
}

// conflict applies c and fails the test unless the store reports
// store.ErrConflict.
func conflict(t *testing.T, s store.Store, c store.Change) {
	t.Helper()
	err := s.Commit(t.Context(), c)
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("Commit: got error %v, want store.ErrConflict", err)
	}
}

// notFound fails the test unless err is store.ErrNotFound.
func notFound(t *testing.T, what string, err error) {
	t.Helper()
	if !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("%s: got error %v, want store.ErrNotFound", what, err)
	}
}

// must pairs a read's value with its error, so a test can write
// must(s.RunGet(ctx, k)).get(t) (Go does not allow must(t, s.RunGet(…))).
func must[T any](v T, err error) result[T] { return result[T]{v, err} }

type result[T any] struct {
	v   T
	err error
}

// get fails the test on a read error and returns the value.
func (r result[T]) get(t *testing.T) T {
	t.Helper()
	if r.err != nil {
		t.Fatalf("read: %v", r.err)
	}
	return r.v
}

// race runs n writers that start at the same moment and returns each
// one's error, indexed by writer. t is the case calling it, which must be
// in a group marked concurrent (RunWithOptions runs only those under the
// race detector).
func race(t *testing.T, n int, write func(i int) error) []error {
	t.Helper()
	mustBeConcurrent(t)
	var wg sync.WaitGroup
	start := make(chan struct{})
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() {
			<-start
			errs[i] = write(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// oneWinner fails the test unless exactly one writer succeeded and every
// other got store.ErrConflict; it returns the winner.
func oneWinner(t *testing.T, errs []error) int {
	t.Helper()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both succeeded; exactly one may", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, store.ErrConflict):
			t.Fatalf("writer %d: got error %v, want store.ErrConflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatalf("no writer succeeded; exactly one must")
	}
	return winner
}

// mustBeConcurrent fails t, a case that runs callers at once, unless its
// group is marked concurrent: under the race detector RunWithOptions
// skips the others, and the detector would never watch this case.
func mustBeConcurrent(t *testing.T) {
	t.Helper()
	if !inConcurrentGroup(t.Name()) {
		t.Fatalf("storetest: %s races callers, but its group is not marked concurrent (groups in storetest.go): the race run would skip it", t.Name())
	}
}
