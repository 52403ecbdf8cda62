package run

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/sensor"
)

const postRunPipeline = runtest.PostRun

func TestPeriodStart(t *testing.T) {
	live := mustPipeline(t, basePipeline)
	dry := mustPipeline(t, "dryRun: true\n"+basePipeline)
	excluded := mustPipeline(t, strings.Replace(basePipeline, "check: exists}\n", "check: exists}\n  exclude: {dates: [\"2026-03-10\"]}\n", 1))
	excludedDry := mustPipeline(t, "dryRun: true\n"+strings.Replace(basePipeline, "check: exists}\n", "check: exists}\n  exclude: {dates: [\"2026-03-10\"]}\n", 1))
	r := &Run{State: Completed}
	cases := []struct {
		name     string
		excluded bool
		dry      bool
		paused   bool
		existing *Run
		want     StartAction
	}{
		{"a new run", false, false, false, nil, StartRun},
		{"a run exists", false, false, false, r, StartExists},
		{"paused", false, false, true, nil, StartHeld},
		{"paused with a run", false, false, true, r, StartHeld},
		{"dry-run", false, true, false, r, StartDryRun},
		{"dry-run and paused", false, true, true, nil, StartDryRun},
		{"excluded", true, false, true, r, StartExcluded},
		{"excluded dry-run", true, true, false, nil, StartExcluded},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := live
			switch {
			case c.excluded && c.dry:
				p = excludedDry
			case c.excluded:
				p = excluded
			case c.dry:
				p = dry
			}
			if got := PeriodStart(p, day, c.paused, c.existing); got != c.want {
				t.Fatalf("PeriodStart = %v, want %v", got, c.want)
			}
		})
	}
	if _, ok := ExcludedStart(excluded, day, CauseCron, true); ok {
		t.Error("an excluded period reported twice")
	}
	note, ok := ExcludedStart(excluded, day, CauseCron, false)
	if !ok || note.Type != event.PipelineExcluded || note.Message != "cron for 2026-03-10 suppressed: 2026-03-10 (Tuesday) is excluded by date (exclude.dates)" {
		t.Errorf("ExcludedStart = %v %q", ok, note.Message)
	}
}

func TestOnTriggerData(t *testing.T) {
	live := mustPipeline(t, basePipeline)
	dry := mustPipeline(t, "dryRun: true\n"+basePipeline)
	excluded := mustPipeline(t, strings.Replace(basePipeline, "check: exists}\n", "check: exists}\n  exclude: {dates: [\"2026-03-10\"]}\n", 1))
	cases := []struct {
		name      string
		p         string
		paused    bool
		state     State // "" = no run
		wantFirst bool
		want      TriggerAction
	}{
		{"no run: start", "live", false, "", true, TriggerStart},
		{"no run, paused: start (PeriodStart holds it)", "live", true, "", true, TriggerStart},
		{"waiting run: evaluate", "live", false, Evaluating, true, TriggerEvaluate},
		{"waiting run, paused: recorded only", "live", true, Evaluating, true, TriggerNothing},
		{"succeeded: late data", "live", false, Completed, true, TriggerLateData},
		{"succeeded, paused: recorded only", "live", true, Completed, true, TriggerNothing},
		{"running: nothing", "live", false, Running, true, TriggerNothing},
		{"failed: nothing", "live", false, FailedFinal, true, TriggerNothing},
		{"dry-run: no first arrival", "dry", false, "", false, TriggerStart},
		{"excluded: no first arrival", "excluded", false, "", false, TriggerStart},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := map[string]*pipeline.Pipeline{"live": live, "dry": dry, "excluded": excluded}[c.p]
			var existing *Run
			if c.state != "" {
				existing = &Run{State: c.state}
			}
			first, act := OnTriggerData(p, day, c.paused, existing)
			if first != c.wantFirst || act != c.want {
				t.Fatalf("OnTriggerData = %v, %v; want %v, %v", first, act, c.wantFirst, c.want)
			}
		})
	}
}

func TestRouteSensorAndHeld(t *testing.T) {
	p := mustPipeline(t, postRunPipeline)
	for key, want := range map[string]string{"ready": "trigger", "ready#2026-03-10": "trigger", "counts": "post-run counts", "counts-v2": "post-run counts", "other": "rules"} {
		route, rk := RouteSensor(p, key)
		got := map[SensorRoute]string{SensorForTrigger: "trigger", SensorForPostRun: "post-run", SensorForRules: "rules"}[route]
		if rk != "" {
			got += " " + rk
		}
		if got != want {
			t.Errorf("RouteSensor(%q) = %q, want %q", key, got, want)
		}
	}
	for _, c := range []struct {
		r            Run
		held, onData bool
	}{
		{Run{State: Evaluating}, true, true},
		{Run{State: Triggering}, true, false},
		{Run{State: Triggering, TriggerInFlight: true}, false, false},
		{Run{State: Running}, false, false},
		{Run{State: Completed}, false, false},
	} {
		if got := HeldByPause(c.r); got != c.held {
			t.Errorf("HeldByPause(%s, inflight %v) = %v", c.r.State, c.r.TriggerInFlight, got)
		}
		if got := EvaluatesOnData(c.r, false); got != c.onData {
			t.Errorf("EvaluatesOnData(%s) = %v", c.r.State, got)
		}
		if EvaluatesOnData(c.r, true) {
			t.Errorf("EvaluatesOnData(%s) while paused", c.r.State)
		}
	}
}

func TestTriggerCheck(t *testing.T) {
	p := mustPipeline(t, strings.Replace(basePipeline, "trigger: {key: ready, check: exists}", "trigger: {key: ready, check: equals, field: status, value: ok}", 1))
	for _, c := range []struct {
		key, status string
		want        bool
	}{{"ready", "ok", true}, {"ready#2026-03-10", "ok", true}, {"ready", "wait", false}} {
		rec := sensor.Record{Key: c.key, Data: Detail("status", c.status), ReceivedAt: t0}
		if got := TriggerCheck(p, rec, t0, rule.Options{}).Passed; got != c.want {
			t.Errorf("TriggerCheck(%s %s) = %v", c.key, c.status, got)
		}
	}
}

func TestPostRunData(t *testing.T) {
	p := mustPipeline(t, postRunPipeline)
	base := Detail("count", 100)
	cases := []struct {
		name  string
		state State // "" = no run
		base  *sensor.Object
		count int
		want  string // notes, then flags
	}{
		{"no run", "", &base, 500, ""},
		{"failed run", FailedFinal, &base, 500, ""},
		{"running, drift: informational", Running, &base, 500, "POST_RUN_DRIFT_INFLIGHT"},
		{"running, no drift", Running, &base, 105, ""},
		{"running, no baseline", Running, nil, 500, ""},
		{"completed, drift: rerun", Completed, &base, 500, "POST_RUN_DRIFT arrived rerun"},
		{"completed, drift to zero", Completed, &base, 0, "POST_RUN_DRIFT arrived rerun"},
		{"completed, within the threshold: judge", Completed, &base, 110, "arrived judge"},
		{"completed, no baseline: judge", Completed, nil, 500, "arrived judge"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var r *Run
			if c.state != "" {
				r = &Run{State: c.state}
			}
			d := PostRunData(p, r, c.base, "counts", Detail("count", c.count))
			var got []string
			for _, n := range d.Notes {
				got = append(got, string(n.Type))
			}
			if d.MarkArrived {
				got = append(got, "arrived")
			}
			if d.Rerun {
				got = append(got, "rerun")
			}
			if d.JudgeRules {
				got = append(got, "judge")
			}
			if s := strings.Join(got, " "); s != c.want {
				t.Fatalf("got %q, want %q", s, c.want)
			}
		})
	}
	out := rule.EvaluateAll(rule.All, p.PostRun.Rules, rule.SensorMap{}, t0, rule.Options{})
	if n := PostRunVerdict(out, "counts"); n.Type != event.PostRunFailed || !strings.Contains(fmt.Sprint(n.Detail), "counts: ") {
		t.Errorf("verdict on a missing sensor: %v %v", n.Type, n.Detail)
	}
	out = rule.EvaluateAll(rule.All, p.PostRun.Rules, rule.SensorMap{"counts": {Key: "counts", Data: base, ReceivedAt: t0}}, t0, rule.Options{})
	if n := PostRunVerdict(out, "counts"); n.Type != event.PostRunPassed {
		t.Errorf("verdict with the sensor: %v", n.Type)
	}
}

func TestPeriodTriggerSensor(t *testing.T) {
	p := mustPipeline(t, basePipeline)
	rec := func(key string, at time.Time) sensor.Record {
		return sensor.Record{Key: key, Data: Detail("n", 1), ReceivedAt: at}
	}
	cases := []struct {
		name   string
		stored []sensor.Record
		want   string // the key picked, "" for none
	}{
		{"none stored", nil, ""},
		{"the period's only trigger sensor", []sensor.Record{rec("other#2026-03-10", hm(9, 0)), rec("ready#2026-03-10", hm(7, 0))}, "ready#2026-03-10"},
		{"the newest of the period's", []sensor.Record{rec("ready#2026-03-10", hm(7, 0)), rec("ready-v2#2026-03-10", hm(8, 0)), rec("ready-v3#2026-03-10", hm(6, 0))}, "ready-v2#2026-03-10"},
		{"another period's is not it", []sensor.Record{rec("ready#2026-03-09", hm(9, 0)), rec("ready#2026-03-10", hm(7, 0))}, "ready#2026-03-10"},
		{"only other periods'", []sensor.Record{rec("ready#2026-03-09", hm(9, 0))}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := ""
			if i, ok := PeriodTriggerSensor(p, day, c.stored); ok {
				got = c.stored[i].Key
			}
			if got != c.want {
				t.Fatalf("PeriodTriggerSensor = %q, want %q", got, c.want)
			}
		})
	}
}

func TestRerunNotesAndSensorChangedAt(t *testing.T) {
	live, dry := mustPipeline(t, basePipeline), mustPipeline(t, "dryRun: true\n"+basePipeline)
	for _, c := range []struct {
		name     string
		dry      bool
		accepted bool
		want     string
		verdict  RerunVerdict
	}{
		{"accepted: reopen", false, true, "reopen", RerunVerdict{Accepted: true}},
		{"refused", false, false, "RERUN_REJECTED", RerunVerdict{Refusal: "rerun rejected (reason: manual): budget"}},
		{"dry-run, accepted", true, true, "DRY_RUN_WOULD_RERUN", RerunVerdict{Accepted: true}},
		{"dry-run, refused", true, false, "DRY_RUN_RERUN_REJECTED", RerunVerdict{Refusal: "dry-run: rerun would be rejected: budget"}},
	} {
		p := live
		if c.dry {
			p = dry
		}
		d := RerunDecision{Accepted: c.accepted}
		if !c.accepted {
			d.Label = "budget"
		}
		notes, reopen, v := RerunNotes(p, "manual", d)
		got := ""
		for _, n := range notes {
			got += string(n.Type)
		}
		if reopen {
			got += "reopen"
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
		// The requester is told what the event says, typed.
		if v != c.verdict {
			t.Errorf("%s: verdict %+v, want %+v", c.name, v, c.verdict)
		}
	}
	if got := SensorChangedAt(true, hm(7, 0), hm(8, 0)); !got.Equal(hm(8, 0)) {
		t.Errorf("new data changed at %v", got)
	}
	if got := SensorChangedAt(false, hm(7, 0), hm(8, 0)); !got.Equal(hm(7, 0)) {
		t.Errorf("a re-write changed at %v", got)
	}
}

func TestCheckRerunReason(t *testing.T) {
	for _, c := range []struct {
		reason, want string
		refused      bool
	}{
		{"", ReasonManual, false},
		{"manual", "manual", false},
		{"hotfix", "hotfix", false},
		{ReasonDrift, ReasonDrift, false},
		{LedgerJobRetry, "", true},
		{ReasonBackfill, "", true},
	} {
		got, err := CheckRerunReason(c.reason)
		if (err != nil) != c.refused || got != c.want {
			t.Errorf("CheckRerunReason(%q) = %q, %v; want %q, refused %v", c.reason, got, err, c.want, c.refused)
		}
	}
}
