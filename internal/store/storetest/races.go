package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// writers is how many goroutines race in each test.
const writers = 10

func testRaces(t *testing.T, o Options) {
	t.Run("CreateSameRunOneWinner", func(t *testing.T) {
		// The per-period trigger lock: ten sensor writes arrive at once and
		// each tries to start the period's run. Exactly one may, and only
		// its event and timer may exist.
		s := o.New(t)
		errs := race(t, writers, func(i int) error {
			r := newRun(ordersDay)
			r.JobRunID = fmt.Sprint("writer-", i)
			tm := fullTimer("evaluate:"+keyString(ordersDay), at(time.Minute))
			tm.Detail = detail("writer", fmt.Sprint(i))
			return s.Commit(t.Context(), store.Change{
				Runs:   []store.RunWrite{{Run: r}},
				Timers: []store.TimerWrite{{Timer: tm}},
				Events: []event.Event{newEvent(fmt.Sprint("ev-", i), event.ValidationPassed, ordersDay, at(0))},
			})
		})
		w := oneWinner(t, errs)
		if got := must(s.RunGet(t.Context(), ordersDay)).get(t); got.JobRunID != fmt.Sprint("writer-", w) || got.Version != 1 {
			t.Errorf("stored run is %q at version %d, want the winner's (writer-%d) at version 1", got.JobRunID, got.Version, w)
		}
		evs := allEvents(t, s)
		if len(evs) != 1 || evs[0].ID != fmt.Sprint("ev-", w) {
			t.Errorf("events %v, want only the winner's ev-%d", eventIDs(evs), w)
		}
		tm := must(s.TimerGet(t.Context(), "evaluate:"+keyString(ordersDay))).get(t)
		mustMatch(t, "timer detail", tm.Detail, detail("writer", fmt.Sprint(w)))
	})

	t.Run("CompareAndSwapSameVersionOneWinner", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, putRun(newRun(ordersDay), 0))
		errs := race(t, writers, func(i int) error {
			r := newRun(ordersDay)
			r.Attempt = i + 1
			return s.Commit(t.Context(), store.Change{
				Runs:   []store.RunWrite{{Run: r, ExpectVersion: 1}},
				Events: []event.Event{newEvent(fmt.Sprint("ev-", i), event.JobTriggered, ordersDay, at(0))},
			})
		})
		w := oneWinner(t, errs)
		if got := must(s.RunGet(t.Context(), ordersDay)).get(t); got.Attempt != w+1 || got.Version != 2 {
			t.Errorf("stored run has attempt %d at version %d, want the winner's %d at version 2", got.Attempt, got.Version, w+1)
		}
		if evs := allEvents(t, s); len(evs) != 1 {
			t.Errorf("events %v, want only the winner's", eventIDs(evs))
		}
	})

	t.Run("ClaimSameTimerOneWinner", func(t *testing.T) {
		// Several pollers see the same due timer; the one whose
		// conditional delete succeeds is the one that acts on it.
		s := o.New(t)
		commit(t, s, putTimer(fullTimer("sla:orders", at(0))))
		errs := race(t, writers, func(i int) error {
			return s.Commit(t.Context(), store.Change{
				TimerDeletes: []store.TimerDelete{{Key: "sla:orders", ExpectDueAt: ptr(at(0))}},
				Events:       []event.Event{newEvent(fmt.Sprint("ev-", i), event.SLABreach, ordersDay, at(0))},
			})
		})
		oneWinner(t, errs)
		_, err := s.TimerGet(t.Context(), "sla:orders")
		notFound(t, "claimed timer", err)
		if evs := allEvents(t, s); len(evs) != 1 {
			t.Errorf("events %v, want only the winner's", eventIDs(evs))
		}
	})

	t.Run("MarkSameAlertOneWinner", func(t *testing.T) {
		// "Alert once" across processes.
		s := o.New(t)
		errs := race(t, writers, func(i int) error {
			m := fullMarker(ordersDay, "alert:SLA_BREACH")
			m.Detail = detail("writer", fmt.Sprint(i))
			return s.Commit(t.Context(), putMarker(m, true))
		})
		w := oneWinner(t, errs)
		m := must(s.MarkerGet(t.Context(), ordersDay, "alert:SLA_BREACH")).get(t)
		mustMatch(t, "marker detail", m.Detail, detail("writer", fmt.Sprint(w)))
	})

	t.Run("AppendSameLedgerSeqOneWinner", func(t *testing.T) {
		// Two reruns accepted at once must not both count as rerun 1.
		s := o.New(t)
		errs := race(t, writers, func(i int) error {
			l := ledgerEntry(ordersDay, 1)
			l.Source = fmt.Sprint("writer-", i)
			return s.Commit(t.Context(), store.Change{Ledger: []store.LedgerEntry{l}})
		})
		w := oneWinner(t, errs)
		got := must(s.LedgerList(t.Context(), ordersDay)).get(t)
		if len(got) != 1 || got[0].Source != fmt.Sprint("writer-", w) {
			t.Errorf("ledger %+v, want only the winner's entry", got)
		}
	})

	t.Run("RetryingWritersLoseNoUpdate", func(t *testing.T) {
		// Each writer adds to a counter by read, modify, compare-and-swap,
		// retrying on conflict. With a correct CAS every increment lands
		// exactly once.
		s := o.New(t)
		x := minimalSensor("orders", "counter", 0)
		commit(t, s, putSensor(x, 0))
		const each = 5
		errs := race(t, writers, func(i int) error {
			for done, tries := 0, 0; done < each; tries++ {
				if tries > 2000 {
					return errors.New("gave up after 2000 conflicts")
				}
				cur, err := s.SensorGet(t.Context(), "orders", "counter")
				if err != nil {
					return err
				}
				v, _ := cur.Data.Get("count")
				n, _ := v.Int()
				next := cur
				next.Data = sensor.NewObject(map[string]sensor.Value{"count": sensor.IntValue(n + 1)})
				err = s.Commit(t.Context(), putSensor(next, cur.Version))
				switch {
				case err == nil:
					done++
				case !errors.Is(err, store.ErrConflict):
					return err
				}
			}
			return nil
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("writer %d: %v", i, err)
			}
		}
		got := must(s.SensorGet(t.Context(), "orders", "counter")).get(t)
		v, _ := got.Data.Get("count")
		if n, _ := v.Int(); n != writers*each || got.Version != writers*each+1 {
			t.Fatalf("counter %d at version %d, want %d at version %d", n, got.Version, writers*each, writers*each+1)
		}
	})

	t.Run("ConcurrentEventsGetDistinctOrderedSeqs", func(t *testing.T) {
		s := o.New(t)
		const per = 5
		errs := race(t, writers, func(i int) error {
			var evs []event.Event
			for j := range per {
				evs = append(evs, newEvent(fmt.Sprintf("w%d-%d", i, j), event.JobCompleted, ordersDay, at(0)))
			}
			return s.Commit(t.Context(), addEvents(evs...))
		})
		for i, err := range errs {
			if err != nil {
				t.Fatalf("writer %d: %v", i, err)
			}
		}
		evs := allEvents(t, s)
		if len(evs) != writers*per {
			t.Fatalf("%d events, want %d", len(evs), writers*per)
		}
		next := map[string]int{} // writer prefix → next expected index
		for i, ev := range evs {
			if ev.Seq != int64(i+1) {
				t.Fatalf("event %d of one pipeline's shard has seq %d: not 1, 2, 3 …", i, ev.Seq)
			}
			var w, j int
			fmt.Sscanf(ev.ID, "w%d-%d", &w, &j)
			p := fmt.Sprint(w)
			if j != next[p] {
				t.Fatalf("writer %d's events out of commit order: got %s, want index %d", w, ev.ID, next[p])
			}
			next[p]++
		}
	})

	t.Run("ReadersPagingBesideWritersSeeEveryEventOnce", func(t *testing.T) {
		testReadersBesideWriters(t, o)
	})
}

func eventIDs(evs []event.Event) []string {
	out := []string{}
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}
