package alert

import (
	"context"
	"errors"
	"fmt"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// Thread is the first message of a conversation a sink started: its id
// (Slack's ts) and the channel it is in (Slack's channel id, which replies
// must use).
type Thread struct {
	ID      string
	Channel string
}

// Threads remembers, durably, the thread each sink started for each
// period, so every later alert of the period (recoveries included) replies
// in it, across restarts. A sink that threads takes one; StoreThreads is
// the implementation over the store.
type Threads interface {
	// ThreadGet returns the thread sink started for key, and false when it
	// has none.
	ThreadGet(ctx context.Context, sink string, key run.Key) (Thread, bool, error)
	// ThreadPut records the thread sink started for key. The first thread
	// recorded for a key wins; a later put for the same key is ignored.
	ThreadPut(ctx context.Context, sink string, key run.Key, t Thread) error
}

// StoreThreads keeps threads as store records (store.AlertThread).
type StoreThreads struct {
	Store store.Store
	Clock clock.Clock
}

var _ Threads = StoreThreads{}

// ThreadGet implements Threads.
func (s StoreThreads) ThreadGet(ctx context.Context, sink string, key run.Key) (Thread, bool, error) {
	a, err := s.Store.AlertThreadGet(ctx, sink, key)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return Thread{}, false, nil
	case err != nil:
		return Thread{}, false, fmt.Errorf("alert: read thread of %s: %w", keyText(key), err)
	}
	return Thread{ID: a.TS, Channel: a.Channel}, true, nil
}

// ThreadPut implements Threads.
func (s StoreThreads) ThreadPut(ctx context.Context, sink string, key run.Key, t Thread) error {
	err := s.Store.Commit(ctx, store.Change{AlertThreads: []store.AlertThread{{
		Sink: sink, Key: key, TS: t.ID, Channel: t.Channel, At: s.Clock.Now(),
	}}})
	if err != nil && !errors.Is(err, store.ErrConflict) {
		return fmt.Errorf("alert: record thread of %s: %w", keyText(key), err)
	}
	return nil
}
