package run

import (
	"testing"
	"time"
)

func TestStampStep(t *testing.T) {
	since, now := hm(8, 0), hm(9, 0).Add(250*time.Millisecond)
	stored := &StoredStep{At: hm(9, 5), Stamp: StepStamp{Since: since}}
	cases := []struct {
		name   string
		prev   *StoredStep
		inStep bool
		due    time.Time
		want   StepStamp
	}{
		{"armed: no stored timer", nil, false, hm(9, 0), StepStamp{Since: now}},
		{"armed by a step that found none", nil, true, hm(9, 0), StepStamp{Since: now}},
		{"a step's own move, later", stored, true, hm(9, 10), StepStamp{Since: since}},
		{"a step's own move, earlier (trigger now)", stored, true, hm(9, 0), StepStamp{Since: since}},
		{"outside a step, earlier: handoff", stored, false, hm(9, 0), StepStamp{Since: now, Handoff: true}},
		{"outside a step, a nanosecond earlier: handoff", stored, false, hm(9, 5).Add(-time.Nanosecond), StepStamp{Since: now, Handoff: true}},
		{"outside a step, the same due time", stored, false, hm(9, 5), StepStamp{Since: since}},
		{"outside a step, later: the holder wakes in time", stored, false, hm(9, 30), StepStamp{Since: since}},
		{"outside a step, a stored handoff not yet taken stays with its waiter", &StoredStep{At: hm(9, 5), Stamp: StepStamp{Since: since, Handoff: true}}, false, hm(9, 6), StepStamp{Since: since}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := StampStep(c.prev, c.inStep, c.due, now)
			if !got.Since.Equal(c.want.Since) || got.Handoff != c.want.Handoff {
				t.Fatalf("StampStep = %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestSuperseded(t *testing.T) {
	s := hm(9, 0)
	cases := []struct {
		name   string
		held   time.Time
		stored StepStamp
		want   bool
	}{
		{"the holder", s, StepStamp{Since: s}, false},
		{"a waiter from before the handoff", s.Add(-time.Nanosecond), StepStamp{Since: s, Handoff: true}, true},
		{"a waiter newer than the stored stamp (read before its own write)", s.Add(time.Second), StepStamp{Since: s}, false},
		{"no stamp named: the local runtime", time.Time{}, StepStamp{Since: s}, false},
		{"a timer from before stamps", s, StepStamp{}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Superseded(c.held, c.stored); got != c.want {
				t.Fatalf("Superseded = %v, want %v", got, c.want)
			}
		})
	}
}

func TestStampDetailRoundTrip(t *testing.T) {
	for _, s := range []StepStamp{{}, {Since: hm(9, 0).Add(123456789)}, {Since: hm(9, 0), Handoff: true}} {
		got := StampOf(s.Detail())
		if !got.Since.Equal(s.Since) || got.Handoff != s.Handoff {
			t.Errorf("StampOf(%+v.Detail()) = %+v", s, got)
		}
	}
	if s := StampOf(Detail("since", "not a time", "handoff", "yes")); !s.Since.IsZero() || s.Handoff {
		t.Errorf("an unreadable stamp: %+v, want the zero stamp", s)
	}
}

func TestOrphaned(t *testing.T) {
	now, grace := hm(10, 0), 5*time.Minute
	cases := []struct {
		name string
		t    TimerAt
		want bool
	}{
		{"a step overdue by the grace", TimerAt{"evaluate", hm(9, 55)}, true},
		{"a step overdue by hours (the execution timed out)", TimerAt{"poll", hm(6, 0)}, true},
		{"a trigger step overdue (a lease ended with no execution)", TimerAt{"trigger", hm(9, 50)}, true},
		{"a step just due: its execution takes it", TimerAt{"trigger", hm(9, 59)}, false},
		{"a step a second inside the grace", TimerAt{"evaluate", hm(9, 55).Add(time.Second)}, false},
		{"a step not yet due", TimerAt{"poll", hm(10, 30)}, false},
		{"not a step: the sweep's", TimerAt{"sla-breach", hm(6, 0)}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Orphaned(c.t, now, grace); got != c.want {
				t.Fatalf("Orphaned = %v, want %v", got, c.want)
			}
		})
	}
}

func TestHandsOff(t *testing.T) {
	now, grace := hm(10, 0), 5*time.Minute
	cases := []struct {
		name    string
		stored  TimerAt
		learned time.Time
		want    bool
	}{
		{"the timer learned of, orphaned", TimerAt{"poll", hm(9, 0)}, hm(9, 0), true},
		{"the timer moved since (taken and re-armed)", TimerAt{"poll", hm(9, 1)}, hm(9, 0), false},
		{"the timer learned of, not orphaned yet", TimerAt{"poll", hm(9, 58)}, hm(9, 58), false},
		{"not a step", TimerAt{"sla-breach", hm(9, 0)}, hm(9, 0), false},
	}
	for _, c := range cases {
		if got := HandsOff(c.stored, c.learned, now, grace); got != c.want {
			t.Errorf("%s: HandsOff = %v, want %v", c.name, got, c.want)
		}
	}
}
