package run

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

func TestConfigRefusalReported(t *testing.T) {
	same := ConfigRefusal("abc")
	other := ConfigRefusal("def")
	notAString := Detail("sha256", 7)
	empty := Detail()
	cases := []struct {
		name   string
		stored *sensor.Object
		want   bool
	}{
		{"no marker: first refusal", nil, false},
		{"the same content was reported", &same, true},
		{"other content was reported: news", &other, false},
		{"a marker without a hash", &empty, false},
		{"a hash that is not a string", &notAString, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := ConfigRefusalReported(c.stored, "abc"); got != c.want {
				t.Fatalf("ConfigRefusalReported = %v, want %v", got, c.want)
			}
		})
	}
}

func TestConfigInvalidNote(t *testing.T) {
	cases := []struct {
		name    string
		errs    []string
		running int64
		want    string
	}{
		{"a version keeps running", []string{"job.type: unknown", "sla: bad"}, 3, "p.yaml refused (2 error(s)); version 3 keeps running: job.type: unknown"},
		{"nothing runs", []string{"pipeline.id: missing"}, 0, "p.yaml refused (1 error(s)); no previous version: pipeline.id: missing"},
		{"no error text does not panic", nil, 0, "p.yaml refused (0 error(s)); no previous version: "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			n := ConfigInvalidNote("p.yaml", c.errs, c.running)
			if n.Type != event.ConfigInvalid || n.Message != c.want {
				t.Fatalf("ConfigInvalidNote = %s %q, want %q", n.Type, n.Message, c.want)
			}
			v, _ := n.Detail.Get("errors")
			if got, _ := v.Str(); got != strings.Join(c.errs, "\n") {
				t.Fatalf("errors detail = %q", got)
			}
		})
	}
}

func TestLateCallNote(t *testing.T) {
	r := Run{State: FailedFinal, Generation: 1, Attempt: 0}
	c := CallID{Generation: 1, Attempt: 1}
	sameCall := c.Detail()
	otherCall := CallID{Generation: 1, Attempt: 1, TriggerErrors: 1}.Detail()
	junk := Detail("note", "x")
	cases := []struct {
		name     string
		a        LateAnswer
		reported *sensor.Object
		ok       bool
		msg      string
	}{
		{"a started job, first report", LateAnswer{JobRunID: "j1"}, nil, true, "the trigger call returned after the run had ended (FAILED_FINAL): it started job j1 — check the job system"},
		{"a synchronous job's status", LateAnswer{JobRunID: "j1", Status: "succeeded"}, nil, true, "it started job j1, which reported succeeded"},
		{"a failed call", LateAnswer{Err: "timeout"}, nil, true, "it failed: timeout"},
		{"this call was reported: a repeated record", LateAnswer{JobRunID: "j1"}, &sameCall, false, ""},
		{"another call was reported", LateAnswer{JobRunID: "j1"}, &otherCall, true, "started job j1"},
		{"an unreadable marker", LateAnswer{JobRunID: "j1"}, &junk, true, "started job j1"},
	}
	for _, c0 := range cases {
		t.Run(c0.name, func(t *testing.T) {
			n, ok := LateCallNote(r, c, c0.a, c0.reported)
			if ok != c0.ok {
				t.Fatalf("ok = %v, want %v", ok, c0.ok)
			}
			if ok && (n.Type != event.InfraFailure || !strings.Contains(n.Message, c0.msg)) {
				t.Fatalf("note = %s %q, want it to contain %q", n.Type, n.Message, c0.msg)
			}
		})
	}
}

func TestCalendarWrites(t *testing.T) {
	d := func(s string) schedule.Date {
		x, err := schedule.ParseDate(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	holidays := schedule.Calendar{Name: "h", Dates: []schedule.Date{d("2026-12-25")}}
	more := schedule.Calendar{Name: "h", Dates: []schedule.Date{d("2026-12-25"), d("2026-12-26")}}
	weekends := schedule.Calendar{Name: "h", Days: []time.Weekday{time.Saturday}, Dates: holidays.Dates}
	stored := &StoredCalendar{Calendar: holidays}
	removed := &StoredCalendar{Calendar: holidays, Removed: true}
	cases := []struct {
		name    string
		stored  *StoredCalendar
		defined *schedule.Calendar
		want    bool
	}{
		{"new calendar", nil, &holidays, true},
		{"unchanged", stored, &holidays, false},
		{"a date added", stored, &more, true},
		{"a day added", stored, &weekends, true},
		{"its file came back", removed, &holidays, true},
		{"its file went away", stored, nil, true},
		{"marked removed already", removed, nil, false},
		{"never stored, not defined", nil, nil, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := CalendarWrites(c.stored, c.defined); got != c.want {
				t.Fatalf("CalendarWrites = %v, want %v", got, c.want)
			}
		})
	}
}
