package run

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/sensor"
)

func TestPause(t *testing.T) {
	now := hm(8, 0)
	running := PauseState{Paused: true, PausedAt: hm(6, 0)}
	timed := PauseState{Paused: true, Until: hm(12, 0), PausedAt: hm(6, 0)}
	resumed := PauseState{PausedAt: hm(2, 0), ResumedAt: hm(3, 0)}
	cases := []struct {
		name  string
		st    PauseState
		until time.Time
		want  string // "paused@HH:MM until HH:MM resume@HH:MM: message", "noop" or "error"
	}{
		{"a pause until resumed", PauseState{}, time.Time{}, "paused@08:00 until - resume@-: pipeline paused until resumed"},
		{"a timed pause", PauseState{}, hm(12, 0), "paused@08:00 until 12:00 resume@12:00: pipeline paused until 2026-03-10T12:00:00Z"},
		{"after an earlier pause", resumed, time.Time{}, "paused@08:00 until - resume@-: pipeline paused until resumed"},
		{"already paused until resumed", running, time.Time{}, "noop"},
		{"already paused until the same time", timed, hm(12, 0), "noop"},
		{"a new end keeps the start", timed, hm(14, 0), "paused@06:00 until 14:00 resume@14:00: pipeline paused until 2026-03-10T14:00:00Z"},
		{"no end any more keeps the start", timed, time.Time{}, "paused@06:00 until - resume@-: pipeline paused until resumed"},
		{"an end in the past", PauseState{}, hm(7, 0), "error"},
		{"an end now", PauseState{}, now, "error"},
		{"an end over a year ahead", PauseState{}, now.AddDate(1, 0, 1), "error"},
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
	now := hm(9, 0)
	if _, ok := ResumePipeline(PauseState{PausedAt: hm(6, 0), ResumedAt: hm(7, 0)}, "ops", now); ok {
		t.Error("a pipeline that is not paused was resumed")
	}
	earlier := []PauseWindow{{From: hm(1, 0), To: hm(2, 0)}}
	d, ok := ResumePipeline(PauseState{Paused: true, Until: hm(12, 0), PausedAt: hm(6, 0), Windows: earlier}, "ops", now)
	if !ok || d.State.Paused || !d.State.Until.IsZero() || d.State.PausedAt != hm(6, 0) || d.State.ResumedAt != now || d.Note.Type != event.PipelineResumed {
		t.Fatalf("resume: %v %+v %s", ok, d.State, d.Note.Type)
	}
	if want := []PauseWindow{earlier[0], {From: hm(6, 0), To: now}}; !slices.Equal(d.State.Windows, want) {
		t.Errorf("windows %+v, want %+v", d.State.Windows, want)
	}
	if len(earlier) != 1 || cap(earlier) != 1 {
		t.Error("the state's windows were modified")
	}
	if d, _ := ResumePipeline(PauseState{Paused: true, Windows: earlier}, "ops", now); !slices.Equal(d.State.Windows, earlier) {
		t.Errorf("a window kept for a pause whose start is not known: %+v", d.State.Windows)
	}
}

func TestKeepPauseWindow(t *testing.T) {
	now := hm(9, 0)
	w := PauseWindow{From: hm(8, 0), To: now}
	old := PauseWindow{From: now.Add(-PauseWindowRetention - 2*time.Hour), To: now.Add(-PauseWindowRetention - time.Hour)}
	edge := PauseWindow{From: now.Add(-PauseWindowRetention - time.Hour), To: now.Add(-PauseWindowRetention)}
	if got := KeepPauseWindow(nil, w, now); !slices.Equal(got, []PauseWindow{w}) {
		t.Errorf("first window: %+v", got)
	}
	if got := KeepPauseWindow([]PauseWindow{old, edge}, w, now); !slices.Equal(got, []PauseWindow{edge, w}) {
		t.Errorf("retention: %+v, want the window that ended exactly PauseWindowRetention ago and the new one", got)
	}
	many := make([]PauseWindow, MaxPauseWindows)
	for i := range many {
		many[i] = PauseWindow{From: hm(0, i%60), To: hm(1, i%60)}
	}
	got := KeepPauseWindow(many, w, now)
	if len(got) != MaxPauseWindows || got[0] != many[1] || got[len(got)-1] != w {
		t.Errorf("bound: %d windows, first %+v, last %+v", len(got), got[0], got[len(got)-1])
	}
}

func TestPlanResume(t *testing.T) {
	cron := mustPipeline(t, strings.Replace(basePipeline, "  trigger: {key: ready, check: exists}\n", "  cron: \"0 7 * * *\"\n", 1))
	trig := mustPipeline(t, strings.Replace(basePipeline, "trigger: {key: ready, check: exists}", "trigger: {key: ready, check: equals, field: status, value: ok}", 1))
	active := []Run{{State: Evaluating}, {State: Running}, {State: Triggering}, {State: Triggering, TriggerInFlight: true}}
	rec := func(key, status string, at time.Time) sensor.Record {
		return sensor.Record{Key: key, Data: Detail("status", status), ReceivedAt: at}
	}
	cases := []struct {
		name     string
		p        string
		pausedAt time.Time
		now      time.Time
		sensors  []sensor.Record
		want     string
	}{
		{"the held runs are re-armed", "cron", hm(8, 0), hm(9, 0), nil, "rearm [0 2]"},
		{"a cron tick in the pause starts its period", "cron", hm(6, 0), hm(9, 0), nil, "rearm [0 2] cron 2026-03-10"},
		{"a tick at the pause's start is in it", "cron", hm(7, 0), hm(9, 0), nil, "rearm [0 2] cron 2026-03-10"},
		{"a tick before the pause is not", "cron", hm(7, 1), hm(9, 0), nil, "rearm [0 2]"},
		{"trigger data in the pause, one per period", "trigger", hm(6, 0), hm(9, 0), []sensor.Record{
			rec("ready#2026-03-10", "ok", hm(7, 0)), rec("ready#2026-03-09", "ok", hm(7, 30)), rec("ready-v2#2026-03-10", "ok", hm(8, 0))},
			"rearm [0 2] data 0:2026-03-10 data 1:2026-03-09"},
		{"data before the pause, failing the condition, or not a trigger key", "trigger", hm(6, 0), hm(9, 0), []sensor.Record{
			rec("ready#2026-03-10", "ok", hm(5, 0)), rec("ready#2026-03-09", "wait", hm(7, 0)), rec("other#2026-03-08", "ok", hm(7, 0))},
			"rearm [0 2]"},
		{"a failing key of a period does not hide a passing one", "trigger", hm(6, 0), hm(9, 0), []sensor.Record{
			rec("ready#2026-03-10", "wait", hm(7, 0)), rec("ready-v2#2026-03-10", "ok", hm(8, 0))},
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
	w := PauseWindow{From: hm(7, 0), To: hm(9, 0)}
	open := PauseWindow{From: hm(7, 0)}
	for _, c := range []struct {
		w    PauseWindow
		at   time.Time
		want bool
	}{
		{w, hm(6, 59), false}, {w, hm(7, 0), true}, {w, hm(8, 59), true}, {w, hm(9, 0), false},
		{open, hm(6, 59), false}, {open, hm(7, 0), true}, {open, hm(23, 0), true},
	} {
		if got := c.w.Contains(c.at); got != c.want {
			t.Errorf("%v.Contains(%s) = %v, want %v", c.w, c.at.Format("15:04"), got, c.want)
		}
	}
}
