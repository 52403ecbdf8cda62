package decide

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/store"
)

// TestOutcomeWritesEachTimerOnce: an outcome that writes one timer twice, or
// writes and deletes it, holds one write — the last — under the first
// write's condition (the one about the stored timer), so its Change
// passes store.Change.Check as DynamoDB's transactions require.
func TestOutcomeWritesEachTimerOnce(t *testing.T) {
	t0 := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	stored := t0.Add(-time.Hour)
	cases := []struct {
		name       string
		do         func(b *Outcome)
		wantPut    *time.Time // the due time of the one write, nil: a delete
		wantExpect *time.Time
	}{
		{"put then put", func(b *Outcome) {
			b.PutTimer(store.Timer{Key: "k", DueAt: t0}, &stored)
			b.PutTimer(store.Timer{Key: "k", DueAt: t0.Add(time.Hour)}, nil)
		}, ptr(t0.Add(time.Hour)), &stored},
		{"unconditional put then conditional put", func(b *Outcome) {
			b.PutTimer(store.Timer{Key: "k", DueAt: t0}, nil)
			b.PutTimer(store.Timer{Key: "k", DueAt: t0.Add(time.Hour)}, ptr(t0))
		}, ptr(t0.Add(time.Hour)), nil},
		{"put then delete", func(b *Outcome) {
			b.PutTimer(store.Timer{Key: "k", DueAt: t0}, &stored)
			b.DeleteTimer("k", nil)
		}, nil, &stored},
		{"delete then put", func(b *Outcome) {
			b.DeleteTimer("k", &stored)
			b.PutTimer(store.Timer{Key: "k", DueAt: t0}, nil)
		}, ptr(t0), &stored},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := New(nil, &Facts{}, t0, Env{NewID: ids()})
			b.PutTimer(store.Timer{Key: "other", DueAt: t0}, nil)
			c.do(b)
			if err := b.C.Check(); err != nil {
				t.Fatal(err)
			}
			var expect *time.Time
			switch {
			case c.wantPut != nil:
				if len(b.C.Timers) != 2 || len(b.C.TimerDeletes) != 0 || !b.C.Timers[1].Timer.DueAt.Equal(*c.wantPut) {
					t.Fatalf("writes %+v deletes %+v, want one write due %v", b.C.Timers, b.C.TimerDeletes, *c.wantPut)
				}
				expect = b.C.Timers[1].ExpectDueAt
			default:
				if len(b.C.Timers) != 1 || len(b.C.TimerDeletes) != 1 {
					t.Fatalf("writes %+v deletes %+v, want one delete", b.C.Timers, b.C.TimerDeletes)
				}
				expect = b.C.TimerDeletes[0].ExpectDueAt
			}
			if (expect == nil) != (c.wantExpect == nil) || (expect != nil && !expect.Equal(*c.wantExpect)) {
				t.Fatalf("condition %v, want %v", expect, c.wantExpect)
			}
		})
	}
}
