package api_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
	"github.com/interlockhq/interlock/internal/store"
)

// endingStore is a store that reads the end of its event log directly,
// as the DynamoDB store does from its shards' counters; it counts the
// log reads that start at the log's beginning.
type endingStore struct {
	store.Store
	fromStart atomic.Int32
}

func (s *endingStore) EventList(ctx context.Context, p store.EventListParams) (store.EventPage, error) {
	if p.After == (store.Cursor{}) {
		s.fromStart.Add(1)
	}
	return s.Store.EventList(ctx, p)
}

// EventLogEnd reads the log forward on the store beneath (uncounted).
func (s *endingStore) EventLogEnd(ctx context.Context) (store.Cursor, error) {
	var end store.Cursor
	for {
		page, err := s.Store.EventList(ctx, store.EventListParams{After: end, Limit: 1000})
		if err != nil {
			return end, err
		}
		end = page.Next
		if len(page.Events) < 1000 {
			return end, nil
		}
	}
}

// TestStreamStartsAtTheLogEndTheStoreReads: on a store that reads its
// log's end directly (an AWS deployment's tables, which no sink of this
// process follows), a live tail starts there — it never reads the log
// forward from its start — and shows what is committed after.
func TestStreamStartsAtTheLogEndTheStoreReads(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	want[sensorWritten](t, f.do(t, "PUT", "/v1/pipelines/orders/sensors/orders-landed", writerSecret, `{}`), http.StatusOK)
	st := &endingStore{Store: f.st}
	eng := engine.New(engine.Options{Store: st, Clock: f.clk, Jobs: noJobs{}, Passive: true})
	h, err := api.New(api.Options{Engine: eng, Tokens: testTokens(), Streams: timedStreams(20*time.Millisecond, time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)

	s := openStream(t, srv, "/v1/events/stream?pipeline=nightly", nil)
	s.caughtUp(t) // nothing old
	if n := st.fromStart.Load(); n != 0 {
		t.Fatalf("the stream read the log from its start %d time(s): want its end from the store", n)
	}
	pauseNightlyLive(t, f, s)
}
