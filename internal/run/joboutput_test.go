package run

import (
	"testing"

	"github.com/interlockhq/interlock/internal/event"
)

func TestWithJobOutput(t *testing.T) {
	eff := Effect{Notes: []Note{
		{Type: event.JobFailed, Detail: Detail("category", "PERMANENT")},
		{Type: event.RetryExhausted, Detail: Detail("retries", 0)},
		{Type: event.JobCompleted},
	}}
	eff = WithJobOutput(eff, "wrote 42 rows")
	for i, want := range []string{"wrote 42 rows", "", "wrote 42 rows"} {
		if got, _ := eff.Notes[i].Detail.Str(DetailOutput); got != want {
			t.Errorf("note %d (%s): output %q, want %q", i, eff.Notes[i].Type, got, want)
		}
	}
	if c, _ := eff.Notes[0].Detail.Str("category"); c != "PERMANENT" {
		t.Errorf("the detail lost its fields: %v", eff.Notes[0].Detail.Keys())
	}
	if e := WithJobOutput(Effect{Notes: []Note{{Type: event.JobCompleted, Detail: Detail("attempt", 1)}}}, ""); e.Notes[0].Detail.Len() != 1 {
		t.Error("an empty output added a field")
	}
}

func TestLastJobOutput(t *testing.T) {
	ev := func(typ event.Type, sched, output string, attempt int) event.Event {
		d := Detail("attempt", attempt)
		if output != "" {
			d = Detail("attempt", attempt, DetailOutput, output)
		}
		return event.Event{Type: typ, ScheduleID: sched, Detail: d}
	}
	cases := []struct {
		name    string
		evs     []event.Event
		want    string // "": none
		attempt int
	}{
		{"none", nil, "", 0},
		{"the last job's", []event.Event{ev(event.JobFailed, "cron", "first", 1), ev(event.JobCompleted, "cron", "second", 2)}, "second", 2},
		{"the last job printed nothing: an older attempt's is not shown", []event.Event{ev(event.JobFailed, "cron", "first", 1), ev(event.JobFailed, "cron", "", 2)}, "", 0},
		{"another schedule's run is not this one's", []event.Event{ev(event.JobFailed, "cron", "mine", 1), ev(event.JobCompleted, "stream", "theirs", 1)}, "mine", 1},
		{"an event that ends no job is not the last job", []event.Event{ev(event.JobFailed, "cron", "mine", 3), ev(event.RetryExhausted, "cron", "", 0)}, "mine", 3},
	}
	for _, c := range cases {
		o, ok := LastJobOutput(c.evs, "cron")
		if ok != (c.want != "") || o.Output != c.want || o.Attempt != c.attempt {
			t.Errorf("%s: LastJobOutput = %q attempt %d (%v), want %q attempt %d", c.name, o.Output, o.Attempt, ok, c.want, c.attempt)
		}
	}
}
