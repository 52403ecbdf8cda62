package decide

import (
	"slices"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/store"
)

func TestStep(t *testing.T) {
	now := runtest.T0
	due := now.Add(-time.Minute)
	p := runtest.Pipeline(t, triggerDoc)
	key := run.Key{PipelineID: "p1", ScheduleID: p.ScheduleID(), Period: "2026-03-10"}
	stepTimer := func(kind run.Step, since time.Time) store.Timer {
		return store.Timer{Key: StepTimerKey(key), Kind: string(kind), Run: key, DueAt: due,
			Detail: run.StampStep(nil, false, due, since).Detail()}
	}
	evaluating := run.Run{Key: key, State: run.Evaluating, Version: 2, EvalStartedAt: now.Add(-10 * time.Minute)}
	running := run.Run{Key: key, State: run.Running, Version: 3, JobRunID: "j1"}
	landed := store.Sensor{PipelineID: "p1", Key: "landed", ChangedAt: now.Add(-time.Hour)}
	for _, c := range []struct {
		name    string
		in      StepIn
		timer   *store.Timer
		runs    []run.Run
		sensors []store.Sensor
		want    func(t *testing.T, o *Outcome, s StepTaken)
	}{
		{name: "a due evaluation whose rules pass triggers", in: StepIn{Step: run.StepEvaluate}, timer: ptr(stepTimer(run.StepEvaluate, due)),
			runs: []run.Run{evaluating}, sensors: []store.Sensor{landed}, want: func(t *testing.T, o *Outcome, s StepTaken) {
				if !s.Due || len(o.C.Runs) != 1 || o.C.Runs[0].Run.State != run.Triggering || o.C.Runs[0].ExpectVersion != 2 {
					t.Fatalf("taken %+v runs %+v, want the run triggering on version 2", s, o.C.Runs)
				}
				if !slices.ContainsFunc(o.C.Timers, func(w store.TimerWrite) bool {
					return w.Timer.Key == StepTimerKey(key) && w.Timer.Kind == string(run.StepTrigger) && w.ExpectDueAt.Equal(due)
				}) {
					t.Fatalf("timers %+v, want the trigger step on the evaluation's due time", o.C.Timers)
				}
			}},
		{name: "a step of another due time is not taken", in: StepIn{Step: run.StepEvaluate, Due: due.Add(-time.Hour)}, timer: ptr(stepTimer(run.StepEvaluate, due)),
			runs: []run.Run{evaluating}, want: func(t *testing.T, o *Outcome, s StepTaken) {
				if s.Due || o != nil {
					t.Fatalf("taken %+v, want not due", s)
				}
			}},
		{name: "a caller the run was handed away from is superseded", in: StepIn{Step: run.StepEvaluate, Since: due.Add(-time.Hour)}, timer: ptr(stepTimer(run.StepEvaluate, due)),
			runs: []run.Run{evaluating}, want: func(t *testing.T, o *Outcome, s StepTaken) {
				if !s.Superseded {
					t.Fatalf("taken %+v, want superseded", s)
				}
			}},
		{name: "no step timer: nothing", in: StepIn{Step: run.StepEvaluate}, runs: []run.Run{evaluating}, want: func(t *testing.T, o *Outcome, s StepTaken) {
			if s.Due || s.Timer != nil {
				t.Fatalf("taken %+v, want nothing", s)
			}
		}},
		{name: "a run that is gone drops its step", in: StepIn{Step: run.StepEvaluate}, timer: ptr(stepTimer(run.StepEvaluate, due)), want: func(t *testing.T, o *Outcome, s StepTaken) {
			if !s.Due || len(o.C.TimerDeletes) != 1 || len(o.C.Runs) != 0 {
				t.Fatalf("taken %+v outcome %+v, want the step timer dropped", s, o.C)
			}
		}},
		{name: "a due poll is the engine's to make", in: StepIn{Step: run.StepPoll}, timer: ptr(stepTimer(run.StepPoll, due)), runs: []run.Run{running},
			want: func(t *testing.T, o *Outcome, s StepTaken) {
				if !s.Poll || !s.NoCommit || !o.C.Empty() || s.Run == nil || s.Run.JobRunID != "j1" {
					t.Fatalf("taken %+v outcome %+v, want a poll to make and nothing to commit", s, o.C)
				}
			}},
		{name: "a poll's answer about another job commits nothing", in: StepIn{Step: run.StepPoll, Poll: &PollAnswer{JobRunID: "j0",
			JobAnswer: JobAnswer{Report: run.JobReport{Known: true, Status: run.JobStatusSucceeded}}}}, timer: ptr(stepTimer(run.StepPoll, due)), runs: []run.Run{running},
			want: func(t *testing.T, o *Outcome, s StepTaken) {
				if !s.NoCommit || !o.C.Empty() {
					t.Fatalf("taken %+v outcome %+v, want nothing to commit", s, o.C)
				}
			}},
		{name: "a poll's success completes the run", in: StepIn{Step: run.StepPoll, Poll: &PollAnswer{JobRunID: "j1",
			JobAnswer: JobAnswer{Report: run.JobReport{Known: true, Status: run.JobStatusSucceeded}, Output: "done"}}}, timer: ptr(stepTimer(run.StepPoll, due)), runs: []run.Run{running},
			want: func(t *testing.T, o *Outcome, s StepTaken) {
				if len(o.C.Runs) != 1 || o.C.Runs[0].Run.State != run.Completed {
					t.Fatalf("runs %+v, want the run completed", o.C.Runs)
				}
				if !slices.ContainsFunc(o.C.Events, func(e event.Event) bool { _, ok := e.Detail.Get(run.DetailOutput); return ok }) {
					t.Fatalf("events %v, want the job's output on its end", types(o.C.Events))
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, triggerDoc)
			w.runs, w.sensors = c.runs, c.sensors
			if c.timer != nil {
				w.timers = []store.Timer{*c.timer}
			}
			in := c.in
			in.Run, in.NewID = key, ids()
			f := w.facts(needs.Set{})
			for range 4 {
				var n needs.Set
				if in.Poll != nil {
					n = needs.Poll(p, key, in.Poll.Report)
				} else {
					n = needs.Step(in.Step, p, w.configs, f.ReadRuns, key)
				}
				f = w.facts(n)
			}
			var o *Outcome
			var s StepTaken
			if err := w.decide(t, f, func(f *Facts) (err error) {
				o, s, err = Step(in, f, now)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			c.want(t, o, s)
		})
	}
}

func TestAnswer(t *testing.T) {
	now := runtest.T0
	p := runtest.Pipeline(t, triggerDoc)
	key := run.Key{PipelineID: "p1", ScheduleID: p.ScheduleID(), Period: "2026-03-10"}
	inflight := run.Run{Key: key, State: run.Triggering, Version: 4, TriggerInFlight: true}
	call := inflight.Call()
	ended := run.Run{Key: key, State: run.FailedFinal, Version: 5}
	for _, c := range []struct {
		name string
		runs []run.Run
		in   AnswerIn
		want func(t *testing.T, o *Outcome, a Answered)
	}{
		{name: "the job started: the run runs it", runs: []run.Run{inflight}, in: AnswerIn{JobRunID: "j1"}, want: func(t *testing.T, o *Outcome, a Answered) {
			if a != (Answered{}) || len(o.C.Runs) != 1 || o.C.Runs[0].Run.State != run.Running || o.C.Runs[0].Run.JobRunID != "j1" {
				t.Fatalf("answered %+v runs %+v, want the run running j1", a, o.C.Runs)
			}
		}},
		{name: "the run is gone", in: AnswerIn{JobRunID: "j1"}, want: func(t *testing.T, o *Outcome, a Answered) {
			if !a.Gone || !o.C.Empty() || len(o.Logs) != 1 {
				t.Fatalf("answered %+v outcome %+v logs %v, want gone, logged", a, o.C, o.Logs)
			}
		}},
		{name: "an answer after the run moved on is reported once", runs: []run.Run{ended}, in: AnswerIn{JobRunID: "j1"}, want: func(t *testing.T, o *Outcome, a Answered) {
			if !a.Late || len(o.C.Events) != 1 || len(o.C.Markers) != 1 || o.C.Markers[0].Marker.Kind != run.MarkerLateCall {
				t.Fatalf("answered %+v outcome %+v, want one report and its marker", a, o.C)
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, triggerDoc)
			w.runs = c.runs
			in := c.in
			in.Run, in.Call, in.NewID = key, call, ids()
			f := w.facts(needs.Set{})
			for range 4 {
				f = w.facts(needs.Answer(p, f.ReadRuns, key, call, nil))
			}
			var o *Outcome
			var a Answered
			if err := w.decide(t, f, func(f *Facts) (err error) {
				o, a, err = Answer(in, f, now)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			c.want(t, o, a)
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestDueTimer(t *testing.T) {
	now := runtest.T0
	key := run.PipelineTimer(run.TimerCron, "c1").String()
	stored := store.Timer{Key: key, Kind: string(run.TimerCron), DueAt: now.Add(-time.Minute)}
	for _, c := range []struct {
		name   string
		stored *store.Timer
		t      store.Timer
		want   *time.Time
	}{
		{"due as announced", &stored, stored, &stored.DueAt},
		{"gone: processed", nil, stored, nil},
		{"moved since it was announced: processed", ptr(store.Timer{Key: key, Kind: stored.Kind, DueAt: now.Add(time.Hour)}), stored, nil},
		{"another kind under the key", ptr(store.Timer{Key: key, Kind: string(run.TimerPeriod), DueAt: stored.DueAt}), stored, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := &Facts{Asked: needs.Set{Timers: []string{key}}, Timers: map[string]store.Timer{}}
			if c.stored != nil {
				f.Timers[key] = *c.stored
			}
			got, err := DueTimer(f, c.t, now)
			if err != nil || (got == nil) != (c.want == nil) || (got != nil && !got.DueAt.Equal(*c.want)) {
				t.Fatalf("DueTimer = %+v, %v; want due at %v", got, err, c.want)
			}
		})
	}
	if _, err := DueTimer(&Facts{}, stored, now); err == nil {
		t.Fatal("a timer not loaded: want it missing")
	}
}
