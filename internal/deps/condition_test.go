package deps

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/sla"
)

const conditionPipeline = `
pipeline: {id: p1}
schedule:
  trigger: {key: ready, check: exists}
sla: {deadline: "10:00", expectedDuration: 1h}
job: {type: glue, config: {jobName: j}}
postRun:
  rules:
    - {key: quality, check: exists}
`

func TestOpensCondition(t *testing.T) {
	opens := map[event.Type]bool{
		event.SLAWarning: true, event.SLABreach: true, event.RelativeSLAWarning: true, event.RelativeSLABreach: true,
		event.ValidationExhausted: true, event.JobFailed: true, event.RetryExhausted: true, event.JobPollExhausted: true,
		event.SensorDeadlineExpired: true, event.SFNTimeout: true, event.RunStuck: true,
		event.ScheduleMissed: true, event.IrregularScheduleMissed: true, event.PostRunSensorMissing: true,
	}
	for _, typ := range event.Types() {
		if got := OpensCondition(typ); got != opens[typ] {
			t.Errorf("OpensCondition(%s) = %v, want %v", typ, got, opens[typ])
		}
	}
}

func TestConditionHolds(t *testing.T) {
	p := runtest.Pipeline(t, conditionPipeline)
	noPostRun := runtest.Pipeline(t, runtest.DailySLA)
	now := runtest.HM(12, 0)
	r := func(st run.State, gen int) *run.Run {
		x := dayRun(st, time.Time{})
		x.Generation = gen
		if st.Terminal() {
			x.EndedAt = runtest.HM(9, 0)
		}
		return x
	}
	stuck := func(st run.State, gen int) event.Event {
		return event.Event{Type: event.RunStuck, Detail: run.Detail("state", string(st), "generation", gen)}
	}
	ev := func(t event.Type) event.Event { return event.Event{Type: t} }
	untilSuccess := []event.Type{event.SLAWarning, event.SLABreach, event.RelativeSLAWarning, event.RelativeSLABreach,
		event.ValidationExhausted, event.JobFailed, event.RetryExhausted, event.JobPollExhausted, event.SFNTimeout, event.SensorDeadlineExpired}
	type tc struct {
		name string
		e    event.Event
		f    ConditionFacts
		noPR bool // the pipeline without post-run rules
		want bool
	}
	var cases []tc
	for _, typ := range untilSuccess {
		cases = append(cases,
			tc{name: string(typ) + " no run holds", e: ev(typ), want: true},
			tc{name: string(typ) + " running holds", e: ev(typ), f: ConditionFacts{Run: r(run.Running, 0)}, want: true},
			tc{name: string(typ) + " failed holds", e: ev(typ), f: ConditionFacts{Run: r(run.FailedFinal, 0)}, want: true},
			tc{name: string(typ) + " succeeded clears", e: ev(typ), f: ConditionFacts{Run: r(run.Completed, 0)}},
			tc{name: string(typ) + " recovered is no success", e: ev(typ), f: ConditionFacts{Run: r(run.Evaluating, 1), Recovered: true}, want: true},
		)
	}
	cases = append(cases,
		tc{name: "stuck: same run same state holds", e: stuck(run.Running, 1), f: ConditionFacts{Run: r(run.Running, 1)}, want: true},
		tc{name: "stuck: run moved on", e: stuck(run.Triggering, 1), f: ConditionFacts{Run: r(run.Running, 1)}},
		tc{name: "stuck: rerun is another run", e: stuck(run.Running, 1), f: ConditionFacts{Run: r(run.Running, 2)}},
		tc{name: "stuck: run ended", e: stuck(run.Running, 1), f: ConditionFacts{Run: r(run.FailedFinal, 1)}},
		tc{name: "stuck: no run", e: stuck(run.Running, 1)},
		tc{name: "stuck: event without detail", e: ev(event.RunStuck), f: ConditionFacts{Run: r(run.Running, 0)}},

		tc{name: "schedule missed: no run holds", e: ev(event.ScheduleMissed), want: true},
		tc{name: "schedule missed: recovered clears", e: ev(event.ScheduleMissed), f: ConditionFacts{Run: r(run.Running, 0), Recovered: true}},
		tc{name: "schedule missed: failed run not yet recovered holds", e: ev(event.ScheduleMissed), f: ConditionFacts{Run: r(run.FailedFinal, 0)}, want: true},
		tc{name: "schedule missed: succeeded clears", e: ev(event.ScheduleMissed), f: ConditionFacts{Run: r(run.Completed, 0)}},
		tc{name: "irregular missed: no run holds", e: ev(event.IrregularScheduleMissed), want: true},
		tc{name: "irregular missed: recovered clears", e: ev(event.IrregularScheduleMissed), f: ConditionFacts{Recovered: true}},

		tc{name: "post-run missing: nothing arrived holds", e: ev(event.PostRunSensorMissing), f: ConditionFacts{Run: r(run.Completed, 0)}, want: true},
		tc{name: "post-run missing: arrived after success clears", e: ev(event.PostRunSensorMissing), f: ConditionFacts{Run: r(run.Completed, 0), PostRunArrived: runtest.HM(9, 1)}},
		tc{name: "post-run missing: arrived before this success holds", e: ev(event.PostRunSensorMissing), f: ConditionFacts{Run: r(run.Completed, 0), PostRunArrived: runtest.HM(8, 0)}, want: true},
		tc{name: "post-run missing: arrived at the success instant holds", e: ev(event.PostRunSensorMissing), f: ConditionFacts{Run: r(run.Completed, 0), PostRunArrived: runtest.HM(9, 0)}, want: true},
		tc{name: "post-run missing: reopened by a rerun", e: ev(event.PostRunSensorMissing), f: ConditionFacts{Run: r(run.Evaluating, 1)}},
		tc{name: "post-run missing: post-run rules removed", noPR: true, e: ev(event.PostRunSensorMissing), f: ConditionFacts{Run: r(run.Completed, 0)}},

		tc{name: "an all-clear holds nothing", e: ev(event.SLAMet)},
		tc{name: "an info event holds nothing", e: ev(event.JobCompleted)},
	)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pp := p
			if c.noPR {
				pp = noPostRun
			}
			if got := ConditionHolds(pp, c.e, c.f, now); got != c.want {
				t.Errorf("ConditionHolds = %v, want %v", got, c.want)
			}
		})
	}
	t.Run("removed pipeline", func(t *testing.T) {
		if ConditionHolds(nil, ev(event.SLABreach), ConditionFacts{}, now) {
			t.Error("a pipeline no longer configured holds no condition")
		}
	})
}

func TestConditionFactsSetMarker(t *testing.T) {
	var f ConditionFacts
	f.SetMarker(run.MarkerRecovered, runtest.HM(1, 0))
	f.SetMarker(run.MarkerPostRunArrived, runtest.HM(2, 0))
	f.SetMarker(run.MarkerSLABreach, runtest.HM(3, 0))
	f.SetMarker(run.MarkerFirstArrival, runtest.HM(4, 0))
	f.SetMarker(run.MarkerRunStuck, runtest.HM(5, 0))
	if !f.Recovered || !f.PostRunArrived.Equal(runtest.HM(2, 0)) || !f.Marks.Breach || !f.Marks.FirstArrival.Equal(runtest.HM(4, 0)) || f.Marks.Warning {
		t.Errorf("facts = %+v", f)
	}
	b := ConditionFacts{Paused: true, FirstLoaded: runtest.HM(0, 1), Run: dayRun(run.Running, time.Time{}), Marks: sla.Marks{Breach: true}}.Board()
	if !b.Paused || !b.FirstLoaded.Equal(runtest.HM(0, 1)) || b.Run == nil || !b.Marks.Breach {
		t.Errorf("board facts = %+v", b)
	}
}
