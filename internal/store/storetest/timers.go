package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/store"
)

func testTimers(t *testing.T, o Options) {
	testRoundTrip(t, o, "fullTimer", fullTimer("evaluate:orders", at(time.Minute).In(elsewhere)), putTimer,
		func(t *testing.T, s store.Store) (store.Timer, error) {
			return s.TimerGet(t.Context(), "evaluate:orders")
		}, nil)

	t.Run("GetMissingIsNotFound", func(t *testing.T) {
		s := o.New(t)
		_, err := s.TimerGet(t.Context(), "nope")
		notFound(t, "TimerGet", err)
	})

	t.Run("PutReplacesByKey", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, putTimer(fullTimer("sla:orders", at(time.Hour))))
		moved := fullTimer("sla:orders", at(2*time.Hour))
		moved.Kind, moved.Detail = "sla-breach", detail("moved", "yes")
		commit(t, s, putTimer(moved))
		mustMatch(t, "TimerGet", must(s.TimerGet(t.Context(), "sla:orders")).get(t), moved)
		if n := len(must(s.TimerListDue(t.Context(), farFuture, 0)).get(t)); n != 1 {
			t.Fatalf("%d timers after replacing one, want 1", n)
		}
	})

	// The due-list fixture: two timers share a due time to check the tie
	// order, and keys are written in an order unlike the expected one.
	seed := []store.Timer{
		fullTimer("b", at(time.Minute)),
		fullTimer("e", at(time.Hour)),
		fullTimer("a", at(time.Minute)),
		fullTimer("d", at(2*time.Minute)),
		fullTimer("c", at(0)),
	}
	load := func(t *testing.T) store.Store { return seeded(t, o, timerWrites(seed)) }
	due := []struct {
		name  string
		now   time.Time
		limit int
		want  []string
	}{
		{"DueIncludesNowExactly", at(time.Minute), 0, []string{"c", "a", "b"}},
		{"DueOneNanosecondBefore", at(time.Minute - time.Nanosecond), 0, []string{"c"}},
		{"NothingDueYet", at(-time.Nanosecond), 0, []string{}},
		{"AllDueInTheFarFuture", farFuture, 0, []string{"c", "a", "b", "d", "e"}},
		{"NowInAnotherZoneIsTheSameInstant", at(time.Minute).In(elsewhere), 0, []string{"c", "a", "b"}},
		{"LimitKeepsTheEarliest", at(time.Hour), 2, []string{"c", "a"}},
		{"LimitLargerThanDue", at(2 * time.Minute), 10, []string{"c", "a", "b", "d"}},
		{"LimitZeroMeansNoLimit", at(time.Hour), 0, []string{"c", "a", "b", "d", "e"}},
	}
	for _, tc := range due {
		t.Run("ListDue/"+tc.name, func(t *testing.T) {
			s := load(t)
			mustMatch(t, "TimerListDue", idsOf(must(s.TimerListDue(t.Context(), tc.now, tc.limit)).get(t), timerKey), tc.want)
		})
	}

	t.Run("ListDueIsDrivenOnlyByNow", func(t *testing.T) {
		// The same store asked about different instants, in any order,
		// answers for each instant: nothing is remembered between calls.
		s := load(t)
		for _, tc := range []struct {
			now  time.Time
			want int
		}{{farFuture, 5}, {at(0), 1}, {at(time.Hour), 5}, {at(-time.Hour), 0}, {at(time.Minute), 3}} {
			if got := len(must(s.TimerListDue(t.Context(), tc.now, 0)).get(t)); got != tc.want {
				t.Errorf("TimerListDue(%s): %d timers, want %d", tc.now.Format(time.RFC3339Nano), got, tc.want)
			}
		}
	})

	t.Run("ListDueReturnsWholeRecords", func(t *testing.T) {
		s := load(t)
		got := must(s.TimerListDue(t.Context(), at(0), 0)).get(t)
		mustMatch(t, "TimerListDue", got, []store.Timer{seed[4]})
	})

	t.Run("NextIsEarliestThenByKey", func(t *testing.T) {
		s := o.New(t)
		_, err := s.TimerNext(t.Context())
		notFound(t, "TimerNext on an empty store", err)
		commit(t, s, store.Change{Timers: []store.TimerWrite{
			{Timer: fullTimer("z", at(time.Hour))},
			{Timer: fullTimer("y", at(time.Minute))},
			{Timer: fullTimer("x", at(time.Minute))},
		}})
		mustMatch(t, "TimerNext", must(s.TimerNext(t.Context())).get(t), fullTimer("x", at(time.Minute)))
		commit(t, s, store.Change{TimerDeletes: []store.TimerDelete{{Key: "x"}, {Key: "y"}}})
		mustMatch(t, "TimerNext", must(s.TimerNext(t.Context())).get(t), fullTimer("z", at(time.Hour)))
		commit(t, s, store.Change{TimerDeletes: []store.TimerDelete{{Key: "z"}}})
		_, err = s.TimerNext(t.Context())
		notFound(t, "TimerNext after deleting all", err)
	})

	// Conditions on due time: whoever processed a firing states the due
	// time it saw; if the timer was moved or removed since, it lost.
	conds := []struct {
		name   string
		change store.Change
		ok     bool
		want   *store.Timer // stored afterwards; nil: absent
	}{
		{"WriteWithMatchingDueAtReplaces",
			store.Change{Timers: []store.TimerWrite{{Timer: fullTimer("t", at(time.Hour)), ExpectDueAt: ptr(at(0))}}},
			true, ptr(fullTimer("t", at(time.Hour)))},
		{"WriteMatchesTheInstantInAnyZone",
			store.Change{Timers: []store.TimerWrite{{Timer: fullTimer("t", at(time.Hour)), ExpectDueAt: ptr(at(0).In(elsewhere))}}},
			true, ptr(fullTimer("t", at(time.Hour)))},
		{"WriteWithDueAtOffByANanosecondConflicts",
			store.Change{Timers: []store.TimerWrite{{Timer: fullTimer("t", at(time.Hour)), ExpectDueAt: ptr(at(time.Nanosecond))}}},
			false, ptr(fullTimer("t", at(0)))},
		{"WriteOfMissingWithDueAtConflicts",
			store.Change{Timers: []store.TimerWrite{{Timer: fullTimer("ghost", at(time.Hour)), ExpectDueAt: ptr(at(0))}}},
			false, ptr(fullTimer("t", at(0)))},
		{"DeleteWithMatchingDueAtRemoves",
			store.Change{TimerDeletes: []store.TimerDelete{{Key: "t", ExpectDueAt: ptr(at(0))}}},
			true, nil},
		{"DeleteWithOtherDueAtConflicts",
			store.Change{TimerDeletes: []store.TimerDelete{{Key: "t", ExpectDueAt: ptr(at(-time.Nanosecond))}}},
			false, ptr(fullTimer("t", at(0)))},
		{"DeleteOfMissingWithDueAtConflicts",
			store.Change{TimerDeletes: []store.TimerDelete{{Key: "ghost", ExpectDueAt: ptr(at(0))}}},
			false, ptr(fullTimer("t", at(0)))},
		{"DeleteOfMissingWithoutDueAtIsFine",
			store.Change{TimerDeletes: []store.TimerDelete{{Key: "ghost"}}},
			true, ptr(fullTimer("t", at(0)))},
		{"DeleteWithoutDueAtRemoves",
			store.Change{TimerDeletes: []store.TimerDelete{{Key: "t"}}},
			true, nil},
	}
	for _, tc := range conds {
		t.Run("Condition/"+tc.name, func(t *testing.T) {
			s := o.New(t)
			commit(t, s, putTimer(fullTimer("t", at(0))))
			if tc.ok {
				commit(t, s, tc.change)
			} else {
				conflict(t, s, tc.change)
			}
			got, err := s.TimerGet(t.Context(), "t")
			if tc.want == nil {
				notFound(t, "TimerGet(t)", err)
				return
			}
			if err != nil {
				t.Fatalf("TimerGet(t): %v", err)
			}
			mustMatch(t, "TimerGet(t)", got, *tc.want)
			_, err = s.TimerGet(t.Context(), "ghost")
			notFound(t, "TimerGet(ghost)", err)
		})
	}
}
