package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// testReopen checks that what a store acknowledged is what a restarted
// process finds, and that the store's counters (versions, event shard counters)
// carry on from where they were instead of starting over.
func testReopen(t *testing.T, o Options) {
	if o.Reopen == nil {
		t.Skip("the backend has no Reopen hook (in-memory)")
	}

	t.Run("KeepsEverything", func(t *testing.T) {
		s := o.New(t)
		seedAtomic(t, s)
		commit(t, s, atomicChange())
		before := takeSnapshot(t, s, atomicPipelines, atomicPeriods)
		s = o.Reopen(t, s)
		mustMatch(t, "reopened store", takeSnapshot(t, s, atomicPipelines, atomicPeriods), before)
	})

	t.Run("CountersCarryOn", func(t *testing.T) {
		s := o.New(t)
		seedAtomic(t, s)
		last := must(s.EventList(t.Context(), store.EventListParams{})).get(t).Next
		s = o.Reopen(t, s)

		// The trigger lock survives: the seeded run still exists.
		conflict(t, s, putRun(newRun(k12), 0))
		// Versions continue.
		commit(t, s, putRun(newRun(k12), 1))
		if v := must(s.RunGet(t.Context(), k12)).get(t).Version; v != 2 {
			t.Fatalf("run version after reopen and update: %d, want 2", v)
		}
		// The event log continues after the last sequence number: a sink's
		// cursor from before the restart still sees the new event.
		commit(t, s, addEvents(newEvent("after-reopen", event.JobTriggered, k12, at(time.Hour))))
		got := must(s.EventList(t.Context(), store.EventListParams{After: last})).get(t).Events
		mustMatch(t, "events after the old cursor", eventIDs(got), []string{"after-reopen"})
		if want := last[got[0].Shard] + 1; got[0].Seq != want {
			t.Fatalf("after-reopen at seq %d of its shard, want %d: the shard's counter started over", got[0].Seq, want)
		}
	})

	t.Run("ReopenTwiceAndWrite", func(t *testing.T) {
		s := o.New(t)
		s = o.Reopen(t, s) // an empty store reopens empty
		if n := len(must(s.PipelineList(t.Context())).get(t)); n != 0 {
			t.Fatalf("reopened empty store lists %d pipelines", n)
		}
		commit(t, s, createPipeline(fullPipeline("orders")))
		s = o.Reopen(t, s)
		want := fullPipeline("orders")
		want.Version = 1
		mustMatch(t, "PipelineGet", must(s.PipelineGet(t.Context(), "orders")).get(t), want)
	})
}
