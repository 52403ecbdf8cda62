package watchdog

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
)

func TestChecksOrder(t *testing.T) {
	var names []string
	for _, c := range Checks() {
		names = append(names, c.Name)
		if c.Run == nil || len(c.Needs) == 0 {
			t.Errorf("check %s: Run or Needs missing", c.Name)
		}
	}
	want := []string{"stale-runs", "stuck-runs", "missed-schedules", "missed-inclusion-dates", "trigger-reconciliation",
		"sla-scheduling", "trigger-deadlines", "post-run-sensors", "relative-sla"}
	if !slices.Equal(names, want) {
		t.Errorf("Checks() = %v, want %v", names, want)
	}
}

// everyCheckFires is a snapshot on which each check finds something, one
// pipeline per check.
func everyCheckFires(t *testing.T) *Snapshot {
	t.Helper()
	now := at(t, "2026-03-10T12:00:00Z")
	trig := "schedule: {trigger: {key: up, check: equals, field: status, value: ready}}\n"
	ps := []Pipeline{
		loaded(parse(t, "pipeline: {id: a-stale}\n"+trig+job)),
		loaded(parse(t, "pipeline: {id: b-stuck}\n"+trig+job)),
		loaded(parse(t, "pipeline: {id: c-cron}\nschedule: {cron: \"0 6 * * *\"}\n"+job)),
		loaded(parse(t, "pipeline: {id: d-include}\nschedule: {trigger: {key: up, check: exists}, include: {dates: [2026-03-10]}, time: \"09:00\"}\n"+job)),
		loaded(parse(t, "pipeline: {id: e-recover}\n"+trig+job)),
		loaded(parse(t, "pipeline: {id: f-sla}\n"+trig+"sla: {deadline: \"18:00\"}\n"+job)),
		loaded(parse(t, "pipeline: {id: g-deadline}\nschedule: {trigger: {key: up, check: exists, deadline: \"10:00\"}}\n"+job)),
		loaded(parse(t, "pipeline: {id: h-postrun}\n"+trig+"postRun: {rules: [{key: audit, check: exists}]}\n"+job)),
		loaded(parse(t, "pipeline: {id: i-relative}\n"+trig+"sla: {maxDuration: 1h}\n"+job)),
	}
	s := snap(now, ps...)
	s.addRun(run.Run{Key: key("a-stale", "stream", "2026-03-10"), Version: 3, State: run.Running, StateSince: now.Add(-10 * time.Minute), ExpiresAt: now.Add(-time.Minute)})
	s.addRun(run.Run{Key: key("b-stuck", "stream", "2026-03-10"), State: run.Running, StateSince: now.Add(-time.Hour), ExpiresAt: now.Add(time.Hour)})
	s.addRun(run.Run{Key: key("c-cron", "cron", "2026-03-09"), State: run.Completed})
	s.addSensor("e-recover", "up", now.Add(-10*time.Minute), map[string]sensor.Value{"status": str("ready")})
	s.addRun(run.Run{Key: key("g-deadline", "stream", "2026-03-09"), State: run.Completed})
	s.addRun(run.Run{Key: key("h-postrun", "stream", "2026-03-10"), State: run.Completed, Outcome: run.OutcomeSucceeded, EndedAt: now.Add(-3 * time.Hour)})
	s.addMarker(key("i-relative", "stream", "2026-03-10"), run.MarkerFirstArrival, now.Add(-2*time.Hour))
	return s
}

func TestPassRunsEveryCheckInOrderAndRepeatsNothing(t *testing.T) {
	s := everyCheckFires(t)
	res := Pass(s)
	if res.Degraded() || res.Err != nil {
		t.Fatalf("degraded: %v %v", res.Failed, res.Err)
	}
	expect(t, res.Findings,
		"SFN_TIMEOUT a-stale/stream/2026-03-10",
		"RUN_STUCK b-stuck/stream/2026-03-10",
		"SCHEDULE_MISSED c-cron/cron/2026-03-10",
		"IRREGULAR_SCHEDULE_MISSED d-include/stream/2026-03-10",
		"TRIGGER_RECOVERED e-recover/stream/2026-03-10",
		"(arm-sla) f-sla/stream/2026-03-10",
		"SENSOR_DEADLINE_EXPIRED g-deadline/stream/2026-03-10",
		"POST_RUN_SENSOR_MISSING h-postrun/stream/2026-03-10",
		"RELATIVE_SLA_BREACH i-relative/stream/2026-03-10",
	)
	order := map[string]int{}
	for i, c := range Checks() {
		order[c.Name] = i
	}
	for i := 1; i < len(res.Findings); i++ {
		if order[res.Findings[i].Check] < order[res.Findings[i-1].Check] {
			t.Errorf("finding %d (%s) after %s: out of check order", i, res.Findings[i].Check, res.Findings[i-1].Check)
		}
	}

	// The runtime applies the findings (markers with their events); the
	// next passes are silent.
	applyFindings(s, res.Findings)
	s.Now = s.Now.Add(5 * time.Minute)
	if again := Pass(s); len(again.Findings) > 0 || again.Degraded() {
		t.Fatalf("second pass: %v (failed %v)", got(again.Findings), again.Failed)
	}

	// The missed cron run shows up late: recovered once.
	s.addRun(run.Run{Key: key("c-cron", "cron", "2026-03-10"), State: run.Evaluating, StateSince: s.Now, ExpiresAt: s.Now.Add(time.Hour)})
	res = Pass(s)
	expect(t, res.Findings, "SCHEDULE_RECOVERED c-cron/cron/2026-03-10")
	applyFindings(s, res.Findings)
	if again := Pass(s); len(again.Findings) > 0 {
		t.Fatalf("after recovery: %v", got(again.Findings))
	}
}

func TestPassDegraded(t *testing.T) {
	cases := []struct {
		unavailable string
		failed      []string
	}{
		{"sensors: connection reset", []string{"missed-inclusion-dates", "trigger-reconciliation", "trigger-deadlines", "post-run-sensors"}},
		{"active runs", []string{"stale-runs", "stuck-runs"}},
		{"timers: boom", []string{"sla-scheduling"}},
		{"markers: boom", []string{"stuck-runs", "missed-schedules", "missed-inclusion-dates", "trigger-reconciliation", "sla-scheduling", "trigger-deadlines", "post-run-sensors", "relative-sla"}},
		{"runs: boom", []string{"missed-schedules", "missed-inclusion-dates", "trigger-reconciliation", "sla-scheduling", "trigger-deadlines", "post-run-sensors", "relative-sla"}},
	}
	for _, c := range cases {
		t.Run(c.unavailable, func(t *testing.T) {
			s := everyCheckFires(t)
			s.Unavailable = []string{c.unavailable}
			res := Pass(s)
			if !slices.Equal(res.Failed, c.failed) {
				t.Errorf("Failed = %v, want %v", res.Failed, c.failed)
			}
			if !res.Degraded() || res.Err == nil || !strings.Contains(res.Err.Error(), c.unavailable) {
				t.Errorf("Err = %v, want it to name %q", res.Err, c.unavailable)
			}
			if want := "watchdog checks failed: " + strings.Join(c.failed, ", "); DegradedMessage(res) != want {
				t.Errorf("DegradedMessage = %q, want %q", DegradedMessage(res), want)
			}
			// The other checks still report.
			if len(res.Findings) != 9-len(c.failed) {
				t.Errorf("findings = %v, want one from each of the %d checks that ran", got(res.Findings), 9-len(c.failed))
			}
			for _, f := range res.Findings {
				if slices.Contains(c.failed, f.Check) {
					t.Errorf("finding from failed check %s: %v", f.Check, f.Key)
				}
			}
		})
	}
}

func TestPassSurvivesPanicsAndErrors(t *testing.T) {
	s := snap(at(t, "2026-03-10T12:00:00Z"))
	one := func(name string) Check {
		return Check{Name: name, Run: func(*Snapshot) ([]Finding, error) {
			return []Finding{{Key: key(name, "stream", "2026-03-10"), Event: "RUN_STUCK"}}, nil
		}}
	}
	checks := []Check{
		one("first"),
		{Name: "panics", Run: func(*Snapshot) ([]Finding, error) {
			var p *Pipeline
			_ = p.P.ID // nil dereference
			return nil, nil
		}},
		{Name: "errs", Run: func(*Snapshot) ([]Finding, error) {
			return []Finding{{Key: key("partial", "stream", "2026-03-10")}}, errors.New("store timeout")
		}},
		one("last"),
	}
	res := runChecks(s, checks)
	if !slices.Equal(res.Failed, []string{"panics", "errs"}) {
		t.Errorf("Failed = %v, want [panics errs]", res.Failed)
	}
	expect(t, res.Findings, "RUN_STUCK first/stream/2026-03-10", "RUN_STUCK last/stream/2026-03-10")
	if res.Findings[0].Check != "first" {
		t.Errorf("Pass did not name the finding's check: %q", res.Findings[0].Check)
	}
	if msg := res.Err.Error(); !strings.Contains(msg, "panics: panic") || !strings.Contains(msg, "errs: store timeout") {
		t.Errorf("Err = %q", msg)
	}
	if DegradedMessage(res) != "watchdog checks failed: panics, errs" {
		t.Errorf("DegradedMessage = %q", DegradedMessage(res))
	}
}

func TestPassHealthy(t *testing.T) {
	res := Pass(snap(at(t, "2026-03-10T12:00:00Z"), Pipeline{}, loaded(parse(t, "pipeline: {id: p}\nschedule: {trigger: {key: up, check: exists}}\n"+job))))
	if res.Degraded() || len(res.Findings) > 0 || res.Err != nil || DegradedMessage(res) != "" {
		t.Errorf("Pass = %+v, want nothing (a pipeline without config is skipped)", res)
	}
}

func TestPassNilSnapshot(t *testing.T) {
	res := Pass(nil)
	if len(res.Failed) != len(Checks()) {
		t.Errorf("Failed = %v, want every check", res.Failed)
	}
}

// A pass groups the snapshot's markers and sensors once for all its
// checks, on a copy: the caller's snapshot keeps no index, and the next
// pass (which may see other markers) derives its own.
func TestPassDerivesItsIndexOnce(t *testing.T) {
	now := at(t, "2026-03-02T12:00:00Z")
	s := snap(now).addMarker(key("a", "daily", "2026-03-01"), run.MarkerScheduleMissed, now).
		addMarker(key("a", "daily", "2026-03-02"), run.MarkerFirstArrival, now).
		addMarker(key("a", "daily", "2026-03-02"), "some-other-kind", now)
	var seen []*Snapshot
	probe := newCheck("probe", func(s *Snapshot) ([]Finding, error) {
		seen = append(seen, s)
		first, again := s.markersOf(run.MarkerScheduleMissed), s.markersOf(run.MarkerScheduleMissed)
		if len(first["a"]) != len(seen) || len(s.markersOf(run.MarkerFirstArrival)["a"]) != 1 || len(s.markersOf("some-other-kind")["a"]) != 1 {
			t.Errorf("pass %d: markers by kind: %v", len(seen), s.idx.grouped)
		}
		if &first["a"][0] != &again["a"][0] {
			t.Error("a pass grouped the markers again for a second check")
		}
		return nil, nil
	}, DataMarkers)
	runChecks(s, []Check{probe})
	s.addMarker(key("a", "daily", "2026-03-02"), run.MarkerScheduleMissed, now)
	runChecks(s, []Check{probe})
	if s.idx != nil || len(seen) != 2 || seen[0].idx == seen[1].idx {
		t.Fatalf("the caller's snapshot holds an index (%v), or two passes shared one", s.idx)
	}
}

// A pass's checks only read the snapshot: they run at once (each waits
// here for the other to start), and their findings still come out in
// check order, whichever finishes first.
func TestPassRunsChecksAtOnce(t *testing.T) {
	s := snap(at(t, "2026-03-10T12:00:00Z"))
	started := [2]chan struct{}{make(chan struct{}), make(chan struct{})}
	secondDone := make(chan struct{})
	meet := func(i int) Check {
		name := []string{"first", "second"}[i]
		return Check{Name: name, Run: func(*Snapshot) ([]Finding, error) {
			close(started[i])
			select {
			case <-started[1-i]:
			case <-time.After(time.Minute):
				return nil, errors.New("the other check did not start: checks ran one by one")
			}
			if i == 0 {
				<-secondDone // the first check finishes last
			} else {
				defer close(secondDone)
			}
			return []Finding{{Key: key(name, "stream", "2026-03-10"), Event: "RUN_STUCK"}}, nil
		}}
	}
	res := runChecks(s, []Check{meet(0), meet(1)})
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	expect(t, res.Findings, "RUN_STUCK first/stream/2026-03-10", "RUN_STUCK second/stream/2026-03-10")
}
