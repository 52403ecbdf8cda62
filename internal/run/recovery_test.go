package run

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
)

// inFlight is a run whose trigger call (attempt 1 of generation 0) began
// at t0, and the end of that call's lease (the step timer BeginTrigger
// sets): the call timeout of an airflow-like job (1m) plus TriggerLease.
func inFlight(t *testing.T) (Run, time.Time) {
	t.Helper()
	r, eff := BeginTrigger(Run{Key: key, State: Triggering, StateSince: t0}, airflowPipeline(t), t0)
	if !r.TriggerInFlight || eff.Next != StepTrigger {
		t.Fatalf("BeginTrigger: %+v %+v", r, eff)
	}
	return r, eff.NextAt
}

func airflowPipeline(t *testing.T) *pipeline.Pipeline {
	t.Helper()
	return mustPipeline(t, strings.Replace(basePipeline, "type: command, config: {command: /bin/true}", "type: airflow, config: {url: 'https://airflow.example.com', dagId: d}", 1))
}

func findable(lease time.Time) CallFacts {
	return CallFacts{JobType: "airflow", RunID: "p1-stream-2026-03-10-g0-a1", Findable: true, StepDue: lease}
}

func askNothing(lease time.Time) CallFacts {
	return CallFacts{JobType: "glue", RunID: "p1-stream-2026-03-10-g0-a1", StepDue: lease}
}

func (f CallFacts) with(c CallRecovery) CallFacts { f.Recovery = &c; return f }

func TestBeginTriggerLeaseIsCallTimeoutPlusTriggerLease(t *testing.T) {
	_, lease := inFlight(t)
	if want := t0.Add(time.Minute + TriggerLease); !lease.Equal(want) {
		t.Fatalf("lease ends %v, want %v", lease, want)
	}
}

func TestFoundInterrupted(t *testing.T) {
	r, lease := inFlight(t)
	restart := t0.Add(30 * time.Second) // within the lease, which ends after the lookup window would
	later2 := t0.Add(2 * time.Minute)   // within the lease, which ends before the lookup window would
	late := lease.Add(time.Hour)        // Interlock was down past the lease
	announced := CallRecovery{Generation: 0, Attempt: 1, Since: restart, GiveUpAt: lease}
	running := r
	running.State, running.TriggerInFlight = Running, false
	notInFlight := r
	notInFlight.TriggerInFlight = false
	for _, tc := range []struct {
		name       string
		r          Run
		f          CallFacts
		now        time.Time
		ok         bool
		nextAt     time.Time
		giveUp     time.Time
		msgHas     []string
		lookupFlag bool
	}{
		{"findable: look up at once, until the lease ends (later than the window)", r, findable(lease), restart, true, restart, lease, []string{"looking up the airflow job", "p1-stream-2026-03-10-g0-a1", "adopted if it started, triggered again if not"}, true},
		{"findable, the window outlasts the lease: look up until the window closes", r, findable(lease), later2, true, later2, later2.Add(LookupWindow), nil, true},
		{"findable, lease ended while down: look up for the lookup window", r, findable(lease), late, true, late, late.Add(LookupWindow), []string{"looking up the airflow job"}, true},
		{"not findable: wait for the lease, say until when", r, askNothing(lease), restart, true, lease, lease, []string{"glue jobs cannot be looked up by the identity Interlock gave them", "outcome unknown at " + lease.Format(time.RFC3339)}, false},
		{"already announced for this call: nothing", r, findable(lease).with(announced), restart, false, time.Time{}, time.Time{}, nil, false},
		{"a marker of an earlier call does not count", r, findable(lease).with(CallRecovery{Generation: 0, Attempt: 0, GiveUpAt: lease}), restart, true, restart, lease, nil, true},
		{"a marker of an earlier generation does not count", r, findable(lease).with(CallRecovery{Generation: 1, Attempt: 1, GiveUpAt: lease}), restart, true, restart, lease, nil, true},
		{"no call in flight: nothing", notInFlight, findable(lease), restart, false, time.Time{}, time.Time{}, nil, false},
		{"running: nothing", running, findable(lease), restart, false, time.Time{}, time.Time{}, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			next, eff, c, ok := FoundInterrupted(tc.r, tc.f, tc.now)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				if len(eff.Notes) != 0 || next.Version != tc.r.Version || next.UpdatedAt != tc.r.UpdatedAt {
					t.Fatalf("nothing to do, yet: %+v %+v", next, eff)
				}
				return
			}
			if !sameTypes(types(eff), []event.Type{event.TriggerOutcomeUnknown}) {
				t.Fatalf("notes %v", types(eff))
			}
			if lvl, _ := event.Lookup(event.TriggerOutcomeUnknown); lvl.Level != event.LevelWarning {
				t.Fatalf("level %s", lvl.Level)
			}
			msg := eff.Notes[0].Message
			for _, s := range tc.msgHas {
				if !strings.Contains(msg, s) {
					t.Errorf("message %q lacks %q", msg, s)
				}
			}
			if v, _ := eff.Notes[0].Detail.Get("lookup"); v.String() != map[bool]string{true: "true", false: "false"}[tc.lookupFlag] {
				t.Errorf("detail lookup = %s", v)
			}
			if eff.Next != StepTrigger || !eff.NextAt.Equal(tc.nextAt) {
				t.Errorf("next %s at %v, want trigger at %v", eff.Next, eff.NextAt, tc.nextAt)
			}
			if !c.GiveUpAt.Equal(tc.giveUp) || !c.Since.Equal(tc.now) || c.Attempt != 1 || c.Generation != 0 || c.Lookups != 0 {
				t.Errorf("recovery %+v, want give-up at %v", c, tc.giveUp)
			}
			if !c.For(next) {
				t.Error("the recovery is not the run's call's")
			}
			if next.State != Triggering || !next.TriggerInFlight || next.StateSince != tc.r.StateSince {
				t.Errorf("run %s in-flight=%v since %v", next.State, next.TriggerInFlight, next.StateSince)
			}
			if next.ExpiresAt.Before(c.GiveUpAt.Add(ttlMargin)) {
				t.Errorf("the run expires at %v, before its give-up %v plus the margin: the watchdog would time it out mid-recovery", next.ExpiresAt, c.GiveUpAt)
			}
		})
	}
}

func TestRecoverTrigger(t *testing.T) {
	p := airflowPipeline(t)
	r, lease := inFlight(t)
	since := t0.Add(2 * time.Minute)
	rec := CallRecovery{Generation: 0, Attempt: 1, Since: since, GiveUpAt: since.Add(LookupWindow)}
	waiting := CallRecovery{Generation: 0, Attempt: 1, Since: since, GiveUpAt: lease}
	soon := rec.GiveUpAt.Add(-5 * time.Second)
	found := &Lookup{Found: true, JobRunID: "dagrun-1", Meta: map[string]string{"k": "v"}}
	none := &Lookup{}
	down := &Lookup{Err: "airflow: GET /api/v1/dags: status 503"}
	for _, tc := range []struct {
		name    string
		f       CallFacts
		l       *Lookup
		now     time.Time
		action  RecoveryAction
		notes   []event.Type
		state   State
		outcome Outcome
		next    Step
		nextAt  time.Time
		lookups int // of the stored recovery; -1: none stored (the marker is removed)
	}{
		{"not findable, lease ended, never announced: outcome unknown as before", askNothing(lease), nil, lease, RecoveryGiveUp, []event.Type{event.InfraFailure}, FailedFinal, OutcomeTriggerUnknown, StepNone, time.Time{}, -1},
		{"not findable, announced, lease not ended: wait for it", askNothing(lease).with(waiting), nil, since, RecoveryWait, nil, Triggering, OutcomeNone, StepTrigger, lease, 0},
		{"not findable, announced, lease ended: outcome unknown", askNothing(lease).with(waiting), nil, lease, RecoveryGiveUp, []event.Type{event.InfraFailure}, FailedFinal, OutcomeTriggerUnknown, StepNone, time.Time{}, -1},
		{"found: adopt the job", findable(since).with(rec), found, since, RecoveryAdopt, []event.Type{event.JobTriggered}, Running, OutcomeNone, StepPoll, since.Add(time.Minute), -1},
		{"found at the lease's end, never announced: announce and adopt", findable(lease), found, lease, RecoveryAdopt, []event.Type{event.TriggerOutcomeUnknown, event.JobTriggered}, Running, OutcomeNone, StepPoll, lease.Add(time.Minute), -1},
		{"not found: the call started nothing, make it again now", findable(since).with(rec), none, since, RecoveryRetry, nil, Triggering, OutcomeNone, StepTrigger, since, -1},
		{"not found, never announced: announce and retry", findable(lease), none, lease, RecoveryRetry, []event.Type{event.TriggerOutcomeUnknown}, Triggering, OutcomeNone, StepTrigger, lease, -1},
		{"lookup failed, window open: ask again after the backoff", findable(since).with(rec), down, since, RecoveryLookAgain, nil, Triggering, OutcomeNone, StepTrigger, since.Add(LookupBackoff(1)), 1},
		{"lookup failed again: longer backoff", findable(since).with(func() CallRecovery { c := rec; c.Lookups = 2; return c }()), down, since, RecoveryLookAgain, nil, Triggering, OutcomeNone, StepTrigger, since.Add(LookupBackoff(3)), 3},
		{"lookup failed near the window's end: the last lookup at its end", findable(since).with(rec), down, soon, RecoveryLookAgain, nil, Triggering, OutcomeNone, StepTrigger, rec.GiveUpAt, 1},
		{"lookup failed at the window's end: outcome unknown", findable(since).with(rec), down, rec.GiveUpAt, RecoveryGiveUp, []event.Type{event.InfraFailure}, FailedFinal, OutcomeTriggerUnknown, StepNone, time.Time{}, -1},
		{"no lookup made: counts as a failed one", findable(since).with(rec), nil, since, RecoveryLookAgain, nil, Triggering, OutcomeNone, StepTrigger, since.Add(LookupBackoff(1)), 1},
		{"a stale marker of another call: announce anew", findable(lease).with(CallRecovery{Generation: 0, Attempt: 0, GiveUpAt: since}), down, lease, RecoveryLookAgain, []event.Type{event.TriggerOutcomeUnknown}, Triggering, OutcomeNone, StepTrigger, lease.Add(LookupBackoff(1)), 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := RecoverTrigger(r, tc.f, tc.l, p, tc.now)
			if d.Action != tc.action {
				t.Fatalf("action %s, want %s", d.Action, tc.action)
			}
			if !sameTypes(types(d.Effect), tc.notes) {
				t.Fatalf("notes %v, want %v", types(d.Effect), tc.notes)
			}
			if d.Run.State != tc.state || d.Run.Outcome != tc.outcome {
				t.Fatalf("run %s/%s, want %s/%s", d.Run.State, d.Run.Outcome, tc.state, tc.outcome)
			}
			if d.Effect.Next != tc.next || !d.Effect.NextAt.Equal(tc.nextAt) {
				t.Fatalf("next %s at %v, want %s at %v", d.Effect.Next, d.Effect.NextAt, tc.next, tc.nextAt)
			}
			switch {
			case tc.lookups < 0 && d.Recovery != nil:
				t.Fatalf("recovery kept: %+v", d.Recovery)
			case tc.lookups >= 0 && (d.Recovery == nil || d.Recovery.Lookups != tc.lookups):
				t.Fatalf("recovery %+v, want %d failed lookups", d.Recovery, tc.lookups)
			}
			if d.Recovery != nil && !d.Run.ExpiresAt.After(d.Recovery.GiveUpAt) {
				t.Fatalf("run expires at %v, before its recovery gives up at %v", d.Run.ExpiresAt, d.Recovery.GiveUpAt)
			}
			switch tc.action {
			case RecoveryAdopt:
				last := d.Effect.Notes[len(d.Effect.Notes)-1]
				if d.Run.JobRunID != "dagrun-1" || d.Run.JobMeta["k"] != "v" || d.Run.Attempt != 1 || d.Run.TriggerInFlight {
					t.Fatalf("adopted run: %+v", d.Run)
				}
				if v, _ := last.Detail.Get("adopted"); v.String() != "true" || !strings.Contains(last.Message, "dagrun-1") {
					t.Fatalf("JOB_TRIGGERED %q %v", last.Message, last.Detail)
				}
			case RecoveryRetry:
				if d.Run.TriggerInFlight || d.Run.Attempt != 0 || d.Run.JobRunID != "" {
					t.Fatalf("retry: %+v", d.Run)
				}
			case RecoveryLookAgain, RecoveryWait:
				if !d.Run.TriggerInFlight {
					t.Fatal("the call's mark was dropped while its outcome is unknown")
				}
				if d.Recovery.LastError != "" && d.Recovery.LastError != down.Err && tc.l != nil {
					t.Fatalf("last error %q", d.Recovery.LastError)
				}
			case RecoveryGiveUp:
				msg := d.Effect.Notes[len(d.Effect.Notes)-1].Message
				if !d.Effect.Ended || d.Run.TriggerInFlight || d.Run.EndedAt.IsZero() {
					t.Fatalf("give-up: %+v %+v", d.Run, d.Effect)
				}
				if !strings.Contains(msg, "request a rerun") {
					t.Fatalf("give-up message %q does not say what to do", msg)
				}
				if tc.f.Findable && (!strings.Contains(msg, "1 lookup(s) failed") || !strings.Contains(msg, down.Err)) {
					t.Fatalf("give-up message %q does not say the lookups failed and why", msg)
				}
				if !tc.f.Findable && tc.f.Recovery != nil && !strings.Contains(msg, "glue jobs cannot be looked up") {
					t.Fatalf("give-up message %q does not say why there was no lookup", msg)
				}
			}
		})
	}
}

func TestLookupBackoff(t *testing.T) {
	for k, want := range map[int]time.Duration{1: 15 * time.Second, 2: 30 * time.Second, 3: time.Minute, 4: 2 * time.Minute, 5: 2 * time.Minute, 40: 2 * time.Minute} {
		if got := LookupBackoff(k); got != want {
			t.Errorf("LookupBackoff(%d) = %s, want %s", k, got, want)
		}
	}
}

func TestCallRecoveryDetailRoundTrip(t *testing.T) {
	c := CallRecovery{Generation: 2, Attempt: 3, Since: t0, GiveUpAt: t0.Add(15 * time.Minute), Lookups: 4, LastError: "status 503"}
	got, ok := ParseCallRecovery(t0, c.Detail())
	if !ok || got != c {
		t.Fatalf("round trip: %+v %v", got, ok)
	}
	if _, ok := ParseCallRecovery(t0, Detail("generation", 1)); ok {
		t.Fatal("a partial detail parsed")
	}
	r := Run{State: Triggering, TriggerInFlight: true, Generation: 2, Attempt: 2}
	if !c.For(r) {
		t.Fatal("not the call of generation 2, attempt 3")
	}
	for _, other := range []Run{
		{State: Triggering, TriggerInFlight: true, Generation: 2, Attempt: 3},
		{State: Triggering, TriggerInFlight: true, Generation: 1, Attempt: 2},
		{State: Triggering, TriggerInFlight: false, Generation: 2, Attempt: 2},
		{State: Running, Generation: 2, Attempt: 2},
	} {
		if c.For(other) {
			t.Errorf("taken for the call of %+v", other)
		}
	}
}

func TestCallStatus(t *testing.T) {
	r, lease := inFlight(t)
	since := t0.Add(2 * time.Minute)
	at := func(t time.Time) string { return t.Format(time.RFC3339) }
	looking := CallRecovery{Attempt: 1, Since: since, GiveUpAt: since.Add(LookupWindow), Lookups: 2, LastError: "status 503"}
	waiting := CallRecovery{Attempt: 1, Since: since, GiveUpAt: lease}
	lookupDue := findable(since.Add(time.Minute)).with(looking)
	for _, tc := range []struct {
		name string
		f    CallFacts
		has  []string
	}{
		{"in flight, findable", findable(lease), []string{"in flight since " + at(t0), "by " + at(lease) + " (the end of its lease)", "the airflow job is looked up"}},
		{"in flight, not findable", askNothing(lease), []string{"in flight since " + at(t0), "by " + at(lease), "ends as outcome unknown: glue jobs cannot be looked up"}},
		{"interrupted, being looked up", lookupDue, []string{"the process stopped during the trigger call", "being looked up", "2 lookup(s) failed, the last: status 503", "next lookup at " + at(since.Add(time.Minute)), "outcome unknown at " + at(looking.GiveUpAt)}},
		{"interrupted, not findable", askNothing(lease).with(waiting), []string{"the process stopped during the trigger call", "glue jobs cannot be looked up by the identity Interlock gave them", "the run ends as outcome unknown at " + at(lease) + " unless"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := CallStatus(r, tc.f)
			for _, h := range tc.has {
				if !strings.Contains(s, h) {
					t.Errorf("%q lacks %q", s, h)
				}
			}
		})
	}
	done := r
	done.TriggerInFlight = false
	if s := CallStatus(done, findable(lease)); s != "" {
		t.Fatalf("no call in flight, yet %q", s)
	}
}

func TestRecoveryActionSettles(t *testing.T) {
	for a, want := range map[RecoveryAction]bool{RecoveryAdopt: true, RecoveryRetry: true, RecoveryGiveUp: true, RecoveryLookAgain: false, RecoveryWait: false} {
		if got := a.Settles(); got != want {
			t.Errorf("%s.Settles() = %v, want %v", a, got, want)
		}
	}
}
