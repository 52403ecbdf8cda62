package storetest

import (
	"errors"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// testAlerts checks the alert delivery records: each round-trips, is read
// by its key within one sink (another sink's record of the same key is
// another record), and keeps its write rule (a cursor or a thread that
// must be new conflicts with an existing one; the rest replace).
func testAlerts(t *testing.T, o Options) {
	cursor := func(sink string, c store.Cursor) store.DeliveryCursor {
		return store.DeliveryCursor{Sink: sink, Cursor: c, At: at(time.Minute).In(elsewhere), DeliveredAt: at(50 * time.Second),
			Failing: store.SinkFailing{Since: at(55 * time.Second), Attempts: 3, Error: "slack: HTTP 500 — retry ✓"}}
	}
	dead := func(sink, id string, when time.Time) store.DeadLetter {
		return store.DeadLetter{Sink: sink, EventID: id, Type: event.SLABreach, Key: ordersDay, EventTime: at(-time.Hour),
			Attempts: 8, Error: "HTTP 503 \"unavailable\"\n", At: when}
	}
	thread := func(sink, ts string) store.AlertThread {
		return store.AlertThread{Sink: sink, Key: ordersDay, TS: ts, Channel: "C123", At: at(0)}
	}
	sent := func(sink, id string) store.AlertSent {
		return store.AlertSent{Sink: sink, Key: ordersDay, Type: event.SLAWarning, Hash: "9f86d081", EventID: id, At: at(time.Second)}
	}
	alerted := func(sink, id string) store.AlertAlerted {
		return store.AlertAlerted{Sink: sink, Key: ordersDay, EventID: id, Type: event.SLABreach, At: at(2 * time.Second)}
	}

	t.Run("RoundTripEveryField", func(t *testing.T) {
		s := o.New(t)
		c, d, th, se, al := cursor("slack", store.Cursor{3: 7, 15: 1 << 40}), dead("slack", "ev-1", at(time.Hour)), thread("slack", "1700000000.000100"), sent("slack", "ev-2"), alerted("slack", "ev-3")
		for what, v := range map[string]any{"cursor": c, "dead letter": d, "thread": th, "sent": se, "alerted": al} {
			requireAllSet(t, what, v)
		}
		commit(t, s, store.Change{
			DeliveryCursors: []store.DeliveryCursorWrite{{Cursor: c}},
			DeadLetters:     []store.DeadLetter{d},
			AlertThreads:    []store.AlertThread{th},
			AlertsSent:      []store.AlertSent{se},
			AlertsAlerted:   []store.AlertAlerted{al},
		})
		mustMatch(t, "DeliveryCursorGet", must(s.DeliveryCursorGet(t.Context(), "slack")).get(t), c)
		mustMatch(t, "DeliveryCursorList", must(s.DeliveryCursorList(t.Context())).get(t), []store.DeliveryCursor{c})
		mustMatch(t, "DeadLetterList", must(s.DeadLetterList(t.Context(), "slack")).get(t), []store.DeadLetter{d})
		mustMatch(t, "AlertThreadGet", must(s.AlertThreadGet(t.Context(), "slack", ordersDay)).get(t), th)
		mustMatch(t, "AlertSentGet", must(s.AlertSentGet(t.Context(), "slack", ordersDay, se.Type, se.Hash)).get(t), se)
		mustMatch(t, "AlertAlertedGet", must(s.AlertAlertedGet(t.Context(), "slack", ordersDay)).get(t), al)
	})

	t.Run("ReadsAreScopedBySinkAndKey", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{
			DeliveryCursors: []store.DeliveryCursorWrite{{Cursor: cursor("slack", store.Cursor{1})}, {Cursor: cursor("file", store.Cursor{2})}},
			DeadLetters:     []store.DeadLetter{dead("slack", "ev-1", at(0)), dead("file", "ev-1", at(0))},
			AlertThreads:    []store.AlertThread{thread("slack", "ts-slack")},
			AlertsSent:      []store.AlertSent{sent("slack", "ev-slack"), sent("file", "ev-file")},
			AlertsAlerted:   []store.AlertAlerted{alerted("file", "ev-file")},
		})
		if got := must(s.DeliveryCursorGet(t.Context(), "file")).get(t).Cursor; got != (store.Cursor{2}) {
			t.Errorf("file's cursor %v, want its own", got)
		}
		if got := must(s.AlertSentGet(t.Context(), "file", ordersDay, event.SLAWarning, "9f86d081")).get(t).EventID; got != "ev-file" {
			t.Errorf("file's sent record names %s, want its own", got)
		}
		if got := must(s.DeadLetterList(t.Context(), "file")).get(t); len(got) != 1 || got[0].Sink != "file" {
			t.Errorf("file's dead letters %+v, want its own one", got)
		}
		mustMatch(t, "sinks with a cursor", sinks(must(s.DeliveryCursorList(t.Context())).get(t)), []string{"file", "slack"})
		other := key("orders", "daily", "2026-03-15")
		for what, err := range map[string]error{
			"cursor of an unknown sink":      second(s.DeliveryCursorGet(t.Context(), "webhook")),
			"thread of another sink":         second(s.AlertThreadGet(t.Context(), "file", ordersDay)),
			"thread of another period":       second(s.AlertThreadGet(t.Context(), "slack", other)),
			"sent record of another type":    second(s.AlertSentGet(t.Context(), "slack", ordersDay, event.SLABreach, "9f86d081")),
			"sent record of another message": second(s.AlertSentGet(t.Context(), "slack", ordersDay, event.SLAWarning, "00000000")),
			"alerted record of another sink": second(s.AlertAlertedGet(t.Context(), "slack", ordersDay)),
		} {
			notFound(t, what, err)
		}
		if got := must(s.DeadLetterList(t.Context(), "webhook")).get(t); len(got) != 0 {
			t.Errorf("dead letters of an unknown sink: %+v", got)
		}
	})

	t.Run("WriteRules", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, store.Change{DeliveryCursors: []store.DeliveryCursorWrite{{Cursor: cursor("slack", store.Cursor{1}), IfAbsent: true}},
			AlertThreads: []store.AlertThread{thread("slack", "first")}})
		// A second start of the sink, a second thread of the period: both
		// lose to the record there.
		conflict(t, s, store.Change{DeliveryCursors: []store.DeliveryCursorWrite{{Cursor: cursor("slack", store.Cursor{9}), IfAbsent: true}}})
		conflict(t, s, store.Change{AlertThreads: []store.AlertThread{thread("slack", "second")}})
		if got := must(s.AlertThreadGet(t.Context(), "slack", ordersDay)).get(t).TS; got != "first" {
			t.Errorf("thread %q, want the first one", got)
		}
		// Without IfAbsent a cursor moves; sent, alerted and dead letters
		// are replaced.
		commit(t, s, store.Change{
			DeliveryCursors: []store.DeliveryCursorWrite{{Cursor: cursor("slack", store.Cursor{5, 6})}},
			AlertsSent:      []store.AlertSent{sent("slack", "old")},
			AlertsAlerted:   []store.AlertAlerted{alerted("slack", "old")},
			DeadLetters:     []store.DeadLetter{dead("slack", "ev-1", at(0))},
		})
		again := dead("slack", "ev-1", at(time.Hour))
		again.Attempts = 1
		commit(t, s, store.Change{
			AlertsSent:    []store.AlertSent{sent("slack", "new")},
			AlertsAlerted: []store.AlertAlerted{alerted("slack", "new")},
			DeadLetters:   []store.DeadLetter{again},
		})
		if got := must(s.DeliveryCursorGet(t.Context(), "slack")).get(t).Cursor; got != (store.Cursor{5, 6}) {
			t.Errorf("cursor %v, want the moved one", got)
		}
		if got := must(s.AlertSentGet(t.Context(), "slack", ordersDay, event.SLAWarning, "9f86d081")).get(t).EventID; got != "new" {
			t.Errorf("sent record names %s, want the last one", got)
		}
		if got := must(s.AlertAlertedGet(t.Context(), "slack", ordersDay)).get(t).EventID; got != "new" {
			t.Errorf("alerted record names %s, want the last one", got)
		}
		mustMatch(t, "DeadLetterList", must(s.DeadLetterList(t.Context(), "slack")).get(t), []store.DeadLetter{again})
	})

	t.Run("DeadLettersOldestFirst", func(t *testing.T) {
		s := o.New(t)
		late, early, tie := dead("slack", "a-late", at(2*time.Hour)), dead("slack", "z-early", at(time.Hour)), dead("slack", "b-tie", at(2*time.Hour))
		tie.EventTime = at(-2 * time.Hour) // an earlier event breaks the tie of At
		commit(t, s, store.Change{DeadLetters: []store.DeadLetter{late, early, tie}})
		got := must(s.DeadLetterList(t.Context(), "slack")).get(t)
		var ids []string
		for _, d := range got {
			ids = append(ids, d.EventID)
		}
		mustMatch(t, "dead letter order", ids, []string{"z-early", "b-tie", "a-late"})
	})

	t.Run("FailedCommitWritesNoAlertRecord", func(t *testing.T) {
		// A delivery's records go with its cursor or not at all.
		s := o.New(t)
		commit(t, s, putRun(newRun(ordersDay), 0))
		conflict(t, s, store.Change{
			Runs:            []store.RunWrite{{Run: newRun(ordersDay)}}, // the run exists: the condition fails
			DeliveryCursors: []store.DeliveryCursorWrite{{Cursor: cursor("slack", store.Cursor{1})}},
			DeadLetters:     []store.DeadLetter{dead("slack", "ev-1", at(0))},
			AlertThreads:    []store.AlertThread{thread("slack", "ts")},
			AlertsSent:      []store.AlertSent{sent("slack", "ev")},
			AlertsAlerted:   []store.AlertAlerted{alerted("slack", "ev")},
		})
		if got := must(s.DeliveryCursorList(t.Context())).get(t); len(got) != 0 {
			t.Errorf("cursors after the failed commit: %+v", got)
		}
		if got := must(s.DeadLetterList(t.Context(), "slack")).get(t); len(got) != 0 {
			t.Errorf("dead letters after the failed commit: %+v", got)
		}
		notFound(t, "thread", second(s.AlertThreadGet(t.Context(), "slack", ordersDay)))
		notFound(t, "sent record", second(s.AlertSentGet(t.Context(), "slack", ordersDay, event.SLAWarning, "9f86d081")))
		notFound(t, "alerted record", second(s.AlertAlertedGet(t.Context(), "slack", ordersDay)))
	})

	t.Run("EachRecordOncePerChange", func(t *testing.T) {
		for name, c := range map[string]store.Change{
			"cursor":      {DeliveryCursors: []store.DeliveryCursorWrite{{Cursor: cursor("slack", store.Cursor{1})}, {Cursor: cursor("slack", store.Cursor{2})}}},
			"dead letter": {DeadLetters: []store.DeadLetter{dead("slack", "ev", at(0)), dead("slack", "ev", at(1))}},
			"thread":      {AlertThreads: []store.AlertThread{thread("slack", "a"), thread("slack", "b")}},
			"sent":        {AlertsSent: []store.AlertSent{sent("slack", "a"), sent("slack", "b")}},
			"alerted":     {AlertsAlerted: []store.AlertAlerted{alerted("slack", "a"), alerted("slack", "b")}},
		} {
			s := o.New(t)
			if err := s.Commit(t.Context(), c); !errors.Is(err, store.ErrInvalidChange) {
				t.Errorf("%s twice in one Change: %v, want store.ErrInvalidChange", name, err)
			}
		}
	})

	t.Run("ExpireByAtButNeverACursor", func(t *testing.T) {
		s := o.New(t)
		old, recent := at(-100*24*time.Hour), at(0)
		oldThread, oldSent, oldAlerted := thread("slack", "old"), sent("slack", "old"), alerted("slack", "old")
		oldThread.At, oldSent.At, oldAlerted.At = old, old, old
		newThread := thread("file", "new")
		commit(t, s, store.Change{
			DeliveryCursors: []store.DeliveryCursorWrite{{Cursor: store.DeliveryCursor{Sink: "slack", Cursor: store.Cursor{1}, At: old}}},
			DeadLetters:     []store.DeadLetter{dead("slack", "old", old), dead("slack", "new", recent)},
			AlertThreads:    []store.AlertThread{oldThread, newThread},
			AlertsSent:      []store.AlertSent{oldSent},
			AlertsAlerted:   []store.AlertAlerted{oldAlerted},
		})
		if o.TTL != nil {
			// The records expire by their own time-to-live: each at its At
			// plus the retention, the cursor never.
			c := ttlCheck{o.TTL}
			c.protected(t, s, Record{Kind: "delivery cursor", Sink: "slack"})
			for _, r := range []Record{{Kind: "alert thread", Sink: "slack", Key: ordersDay}, {Kind: "alert thread", Sink: "file", Key: ordersDay},
				{Kind: "alert sent", Sink: "slack", Key: ordersDay, Type: event.SLAWarning, Name: "9f86d081"}, {Kind: "alert alerted", Sink: "slack", Key: ordersDay},
				{Kind: "dead letter", Sink: "slack", Name: "old"}, {Kind: "dead letter", Sink: "slack", Name: "new"}} {
				when := old
				if r.Sink == "file" || r.Name == "new" {
					when = recent
				}
				c.expiresLike(t, s, r, ofTime(when))
			}
			return
		}
		for {
			res := must(s.Expire(t.Context(), store.ExpireParams{Before: at(-90 * 24 * time.Hour), Limit: 2})).get(t)
			if !res.More {
				break
			}
		}
		must(s.DeliveryCursorGet(t.Context(), "slack")).get(t)
		notFound(t, "old thread", second(s.AlertThreadGet(t.Context(), "slack", ordersDay)))
		notFound(t, "old sent record", second(s.AlertSentGet(t.Context(), "slack", ordersDay, event.SLAWarning, "9f86d081")))
		notFound(t, "old alerted record", second(s.AlertAlertedGet(t.Context(), "slack", ordersDay)))
		must(s.AlertThreadGet(t.Context(), "file", ordersDay)).get(t)
		if got := must(s.DeadLetterList(t.Context(), "slack")).get(t); len(got) != 1 || got[0].EventID != "new" {
			t.Errorf("dead letters after expiry: %+v, want the recent one", got)
		}
	})
}

func sinks(cs []store.DeliveryCursor) []string {
	out := []string{}
	for _, c := range cs {
		out = append(out, c.Sink)
	}
	return out
}

// second returns a read's error.
func second[T any](_ T, err error) error { return err }
