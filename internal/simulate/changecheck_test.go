package simulate_test

import (
	"context"
	"sync"
	"testing"

	"github.com/interlockhq/interlock/internal/store"
)

// checkedStore is the real store with every Change the engine commits
// checked first against the rule every backend enforces (store.Change.Check:
// each record touched at most once, at most store.MaxChangeRecords
// records). The SQLite store refuses an invalid Change too, but the engine
// may retry, log or drop a refused commit without a scenario noticing; this
// fails the scenario on the spot, naming the Change. It runs under the
// whole scenario corpus, so the corpus shows the engine never builds an
// invalid Change.
type checkedStore struct {
	store.Store
	t       *testing.T
	largest *largestChange
}

func (s checkedStore) Commit(ctx context.Context, c store.Change) error {
	if err := c.Check(); err != nil {
		s.t.Errorf("the engine built an invalid Change: %v", err)
	}
	s.largest.note(c.Records(), s.t.Name())
	return s.Store.Commit(ctx, c)
}

// largestChange remembers the largest Change committed in a corpus.
type largestChange struct {
	mu       sync.Mutex
	records  int
	scenario string
}

func (l *largestChange) note(n int, scenario string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n > l.records {
		l.records, l.scenario = n, scenario
	}
}

// checkedOpener opens the scenario's store (openSQLite) behind checkedStore.
func checkedOpener(t *testing.T, largest *largestChange) func(context.Context, string) (store.Store, error) {
	return func(ctx context.Context, path string) (store.Store, error) {
		st, err := openSQLite(ctx, path)
		if err != nil {
			return nil, err
		}
		return checkedStore{Store: st, t: t, largest: largest}, nil
	}
}
