package storetest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// testReadersBesideWriters races readers that follow the event cursor, a
// few events a page, against writers appending to many pipelines — some
// sharing a shard, some not — with times that do not follow commit order.
// When the writers are done each reader drains the log. Every reader must
// then have seen every committed event exactly once, each pipeline's in
// its commit order, whatever the interleaving: the promise alert delivery
// is built on (a skipped event is an alert never sent, a repeated one is
// sent twice).
func testReadersBesideWriters(t *testing.T, o Options) {
	const (
		nWriters = 6
		commits  = 25 // per writer
		nReaders = 4
	)
	mustBeConcurrent(t)
	s := o.New(t)
	// Pipelines "orders" and "billing" share a shard; the others spread
	// over other shards.
	pipelines := []string{"orders", "billing", ""}
	for i := 0; len(pipelines) < 8; i++ {
		pipelines = append(pipelines, fmt.Sprint("p", i))
	}
	if store.EventShard("orders") != store.EventShard("billing") {
		t.Fatal("the fixture wants orders and billing in one shard")
	}

	var (
		wg        sync.WaitGroup
		mu        sync.Mutex
		committed = map[string]bool{}
		done      = make(chan struct{})
	)
	for w := range nWriters {
		wg.Go(func() {
			for c := range commits {
				// One to three events, on the writer's own pipeline and
				// the next ones; times run backwards and jump between
				// writers, so no time order matches the commit order.
				var evs []event.Event
				for j := range c%3 + 1 {
					p := pipelines[(w+j)%len(pipelines)]
					when := at(time.Duration((nWriters-w)*1000-c) * time.Second)
					evs = append(evs, newEvent(fmt.Sprintf("w%d-c%02d-%d", w, c, j), event.JobCompleted, key(p, "daily", "2026-03-14"), when))
				}
				if err := s.Commit(t.Context(), addEvents(evs...)); err != nil {
					t.Errorf("writer %d, commit %d: %v", w, c, err)
					return
				}
				mu.Lock()
				for _, e := range evs {
					committed[e.ID] = true
				}
				mu.Unlock()
			}
		})
	}

	seen := make([][]event.Event, nReaders)
	var readers sync.WaitGroup
	for r := range nReaders {
		readers.Go(func() {
			p := store.EventListParams{Limit: r*2 + 1} // 1, 3, 5, 7
			read := func() int {
				page, err := s.EventList(t.Context(), p)
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					return 0
				}
				seen[r] = append(seen[r], page.Events...)
				p.After = page.Next
				return len(page.Events)
			}
			for {
				select {
				case <-done:
					for read() > 0 { // the final drain
					}
					return
				default:
					read()
				}
			}
		})
	}
	wg.Wait()
	close(done)
	readers.Wait()
	if t.Failed() {
		return
	}

	// Each pipeline's events in commit order, as the store keeps them (a
	// read scoped by pipeline agrees with the whole log).
	order := map[string][]string{}
	for _, e := range allEvents(t, s) {
		order[e.PipelineID] = append(order[e.PipelineID], e.ID)
	}
	for _, p := range pipelines[:2] {
		mustMatch(t, "events of "+p, eventIDs(must(s.EventList(t.Context(), store.EventListParams{PipelineID: p})).get(t).Events), order[p])
	}
	for r, evs := range seen {
		count := map[string]int{}
		byPipeline := map[string][]string{}
		for _, e := range evs {
			count[e.ID]++
			if count[e.ID] == 2 {
				t.Errorf("reader %d: %s seen twice", r, e.ID)
			}
			if !committed[e.ID] {
				t.Errorf("reader %d: %s was never committed", r, e.ID)
			}
			byPipeline[e.PipelineID] = append(byPipeline[e.PipelineID], e.ID)
		}
		missed := 0
		for id := range committed {
			if count[id] == 0 {
				missed++
				if missed <= 5 {
					t.Errorf("reader %d: %s never seen", r, id)
				}
			}
		}
		if missed > 0 {
			t.Errorf("reader %d: skipped %d of %d events", r, missed, len(committed))
		}
		for _, p := range pipelines {
			if got := byPipeline[p]; !equalStrings(got, order[p]) {
				t.Errorf("reader %d: pipeline %q's events out of commit order:\n got %v\nwant %v", r, p, got, order[p])
			}
		}
	}
	// And the writers' own order: a writer's commits to one pipeline are
	// in the order it made them.
	for _, p := range pipelines {
		last := map[byte]string{}
		for _, id := range order[p] {
			w := id[1]
			if prev, ok := last[w]; ok && prev > id {
				t.Errorf("pipeline %q: %s after %s, against writer %c's commit order", p, id, prev, w)
			}
			last[w] = id
		}
	}
}
