package pause

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/sensor"
)

func TestPause(t *testing.T) {
	now := runtest.HM(8, 0)
	running := State{Paused: true, PausedAt: runtest.HM(6, 0)}
	timed := State{Paused: true, Until: runtest.HM(12, 0), PausedAt: runtest.HM(6, 0)}
	resumed := State{PausedAt: runtest.HM(2, 0), ResumedAt: runtest.HM(3, 0)}
	cases := []struct {
		name  string
		st    State
		until time.Time
		want  string // "paused@HH:MM until HH:MM resume@HH:MM: message", "noop" or "error"
	}{
		{"a pause until resumed", State{}, time.Time{}, "paused@08:00 until - resume@-: pipeline paused until resumed"},
		{"a timed pause", State{}, runtest.HM(12, 0), "paused@08:00 until 12:00 resume@12:00: pipeline paused until 2026-03-10T12:00:00Z"},
		{"after an earlier pause", resumed, time.Time{}, "paused@08:00 until - resume@-: pipeline paused until resumed"},
		{"already paused until resumed", running, time.Time{}, "noop"},
		{"already paused until the same time", timed, runtest.HM(12, 0), "noop"},
		{"a new end keeps the start", timed, runtest.HM(14, 0), "paused@06:00 until 14:00 resume@14:00: pipeline paused until 2026-03-10T14:00:00Z"},
		{"no end any more keeps the start", timed, time.Time{}, "paused@06:00 until - resume@-: pipeline paused until resumed"},
		{"an end in the past", State{}, runtest.HM(7, 0), "error"},
		{"an end now", State{}, now, "error"},
		{"an end over a year ahead", State{}, now.AddDate(1, 0, 1), "error"},
	}
	clock := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.UTC().Format("15:04")
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d, ok, err := Pause(c.st, c.until, "ops", now)
			got := "noop"
			switch {
			case err != nil:
				got = "error"
			case ok:
				if !d.State.Paused || !d.State.ResumedAt.IsZero() || d.Note.Type != event.PipelinePaused {
					t.Errorf("state %+v, note %s", d.State, d.Note.Type)
				}
				got = fmt.Sprintf("paused@%s until %s resume@%s: %s", clock(d.State.PausedAt), clock(d.State.Until), clock(d.ResumeAt), d.Note.Message)
			}
			if got != c.want {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestResumePipeline(t *testing.T) {
	now := runtest.HM(9, 0)
	if _, ok := Resume(State{PausedAt: runtest.HM(6, 0), ResumedAt: runtest.HM(7, 0)}, "ops", now); ok {
		t.Error("a pipeline that is not paused was resumed")
	}
	earlier := []Window{{From: runtest.HM(1, 0), To: runtest.HM(2, 0)}}
	d, ok := Resume(State{Paused: true, Until: runtest.HM(12, 0), PausedAt: runtest.HM(6, 0), Windows: earlier}, "ops", now)
	if !ok || d.State.Paused || !d.State.Until.IsZero() || d.State.PausedAt != runtest.HM(6, 0) || d.State.ResumedAt != now || d.Note.Type != event.PipelineResumed {
		t.Fatalf("resume: %v %+v %s", ok, d.State, d.Note.Type)
	}
	if want := []Window{earlier[0], {From: runtest.HM(6, 0), To: now}}; !slices.Equal(d.State.Windows, want) {
		t.Errorf("windows %+v, want %+v", d.State.Windows, want)
	}
	if len(earlier) != 1 || cap(earlier) != 1 {
		t.Error("the state's windows were modified")
	}
	if d, _ := Resume(State{Paused: true, Windows: earlier}, "ops", now); !slices.Equal(d.State.Windows, earlier) {
		t.Errorf("a window kept for a pause whose start is not known: %+v", d.State.Windows)
	}
}

func TestKeepPauseWindow(t *testing.T) {
	now := runtest.HM(9, 0)
	w := Window{From: runtest.HM(8, 0), To: now}
	old := Window{From: now.Add(-WindowRetention - 2*time.Hour), To: now.Add(-WindowRetention - time.Hour)}
	edge := Window{From: now.Add(-WindowRetention - time.Hour), To: now.Add(-WindowRetention)}
	if got := KeepWindow(nil, w, now); !slices.Equal(got, []Window{w}) {
		t.Errorf("first window: %+v", got)
	}
	if got := KeepWindow([]Window{old, edge}, w, now); !slices.Equal(got, []Window{edge, w}) {
		t.Errorf("retention: %+v, want the window that ended exactly WindowRetention ago and the new one", got)
	}
	many := make([]Window, MaxWindows)
	for i := range many {
		many[i] = Window{From: runtest.HM(0, i%60), To: runtest.HM(1, i%60)}
	}
	got := KeepWindow(many, w, now)
	if len(got) != MaxWindows || got[0] != many[1] || got[len(got)-1] != w {
		t.Errorf("bound: %d windows, first %+v, last %+v", len(got), got[0], got[len(got)-1])
	}
}

func TestPlanResume(t *testing.T) {
	cron := runtest.Pipeline(t, strings.Replace(runtest.Base, "  trigger: {key: ready, check: exists}\n", "  cron: \"0 7 * * *\"\n", 1))
	trig := runtest.Pipeline(t, strings.Replace(runtest.Base, "trigger: {key: ready, check: exists}", "trigger: {key: ready, check: equals, field: status, value: ok}", 1))
	active := []run.Run{{State: run.Evaluating}, {State: run.Running}, {State: run.Triggering}, {State: run.Triggering, TriggerInFlight: true}}
	rec := func(key, status string, at time.Time) sensor.Record {
		return sensor.Record{Key: key, Data: run.Detail("status", status), ReceivedAt: at}
	}
	cases := []struct {
		name     string
		p        string
		pausedAt time.Time
		now      time.Time
		sensors  []sensor.Record
		want     string
	}{
		{"the held runs are re-armed", "cron", runtest.HM(8, 0), runtest.HM(9, 0), nil, "rearm [0 2]"},
		{"a cron tick in the pause starts its period", "cron", runtest.HM(6, 0), runtest.HM(9, 0), nil, "rearm [0 2] cron 2026-03-10"},
		{"a tick at the pause's start is in it", "cron", runtest.HM(7, 0), runtest.HM(9, 0), nil, "rearm [0 2] cron 2026-03-10"},
		{"a tick before the pause is not", "cron", runtest.HM(7, 1), runtest.HM(9, 0), nil, "rearm [0 2]"},
		{"trigger data in the pause, one per period", "trigger", runtest.HM(6, 0), runtest.HM(9, 0), []sensor.Record{
			rec("ready#2026-03-10", "ok", runtest.HM(7, 0)), rec("ready#2026-03-09", "ok", runtest.HM(7, 30)), rec("ready-v2#2026-03-10", "ok", runtest.HM(8, 0))},
			"rearm [0 2] data 0:2026-03-10 data 1:2026-03-09"},
		{"data before the pause, failing the condition, or not a trigger key", "trigger", runtest.HM(6, 0), runtest.HM(9, 0), []sensor.Record{
			rec("ready#2026-03-10", "ok", runtest.HM(5, 0)), rec("ready#2026-03-09", "wait", runtest.HM(7, 0)), rec("other#2026-03-08", "ok", runtest.HM(7, 0))},
			"rearm [0 2]"},
		{"a failing key of a period does not hide a passing one", "trigger", runtest.HM(6, 0), runtest.HM(9, 0), []sensor.Record{
			rec("ready#2026-03-10", "wait", runtest.HM(7, 0)), rec("ready-v2#2026-03-10", "ok", runtest.HM(8, 0))},
			"rearm [0 2] data 1:2026-03-10"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := cron
			if c.p == "trigger" {
				p = trig
			}
			if got := PlanResume(p, c.pausedAt, c.now, active, c.sensors, rule.Options{}).String(); got != c.want {
				t.Fatalf("got  %q\nwant %q", got, c.want)
			}
		})
	}
}

func TestPauseWindowContains(t *testing.T) {
	w := Window{From: runtest.HM(7, 0), To: runtest.HM(9, 0)}
	open := Window{From: runtest.HM(7, 0)}
	for _, c := range []struct {
		w    Window
		at   time.Time
		want bool
	}{
		{w, runtest.HM(6, 59), false}, {w, runtest.HM(7, 0), true}, {w, runtest.HM(8, 59), true}, {w, runtest.HM(9, 0), false},
		{open, runtest.HM(6, 59), false}, {open, runtest.HM(7, 0), true}, {open, runtest.HM(23, 0), true},
	} {
		if got := c.w.Contains(c.at); got != c.want {
			t.Errorf("%v.Contains(%s) = %v, want %v", c.w, c.at.Format("15:04"), got, c.want)
		}
	}
}
