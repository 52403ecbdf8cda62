package deps

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// mapUpstreams answers RootCause from maps; a key it was not given has no
// facts (no run), and reads are counted.
type mapUpstreams struct {
	pipes map[string]*pipeline.Pipeline
	facts map[run.Key]ConditionFacts
	reads int
	fail  bool
}

func (m *mapUpstreams) Pipeline(id string) (*pipeline.Pipeline, error) { return m.pipes[id], nil }
func (m *mapUpstreams) Facts(k run.Key) (ConditionFacts, error) {
	m.reads++
	if m.fail {
		return ConditionFacts{}, errors.New("store down")
	}
	return m.facts[k], nil
}

// chain: a (cron 06:00, no SLA) -> b (SLA 10:00) -> c (SLA 11:00), and h
// hourly feeding d with hours: all.
func rootChain(t *testing.T) map[string]*pipeline.Pipeline {
	doc := func(id, rest string) *pipeline.Pipeline {
		return runtest.Pipeline(t, fmt.Sprintf("pipeline: {id: %s}\njob: {type: glue, config: {jobName: j}}\n%s", id, rest))
	}
	return map[string]*pipeline.Pipeline{
		"a": doc("a", "schedule: {cron: \"0 6 * * *\"}\n"),
		"b": doc("b", "schedule: {trigger: {key: ready, check: exists}}\nvalidation: {rules: [{check: upstream, pipeline: a}]}\nsla: {deadline: \"10:00\", expectedDuration: 1h}\n"),
		"c": doc("c", "schedule: {trigger: {key: ready, check: exists}}\nvalidation: {rules: [{check: upstream, pipeline: b}]}\nsla: {deadline: \"11:00\"}\n"),
		"h": doc("h", "schedule: {cron: \"0 * * * *\"}\n"),
		"d": doc("d", "schedule: {trigger: {key: ready, check: exists}}\nvalidation: {rules: [{check: upstream, pipeline: h, hours: all}]}\n"),
		"x": doc("x", "schedule: {trigger: {key: ready, check: exists}}\nvalidation: {rules: [{check: upstream, pipeline: gone}]}\n"),
	}
}

func TestRootCause(t *testing.T) {
	pipes := rootChain(t)
	ka := run.Key{PipelineID: "a", ScheduleID: "cron", Period: runtest.Day.String()}
	kb := run.Key{PipelineID: "b", ScheduleID: "stream", Period: runtest.Day.String()}
	facts := func(k run.Key, st run.State) ConditionFacts {
		return ConditionFacts{Run: &run.Run{Key: k, State: st}, FirstLoaded: runtest.HM(0, 0)}
	}
	hour := func(h int) run.Key {
		return run.Key{PipelineID: "h", ScheduleID: "cron", Period: schedule.HourlyPeriod(runtest.Day.Date, h).String()}
	}
	allHoursOK := map[run.Key]ConditionFacts{}
	for h := range 24 {
		allHoursOK[hour(h)] = facts(hour(h), run.Completed)
	}
	withHour := func(h int, f ConditionFacts) map[run.Key]ConditionFacts {
		out := map[run.Key]ConditionFacts{}
		for k, v := range allHoursOK {
			out[k] = v
		}
		out[hour(h)] = f
		return out
	}
	cases := []struct {
		name  string
		down  string
		facts map[run.Key]ConditionFacts
		now   time.Time
		want  *BlockedBy
	}{
		{name: "direct upstream failed", down: "b", facts: map[run.Key]ConditionFacts{ka: facts(ka, run.FailedFinal)}, now: runtest.HM(9, 0),
			want: &BlockedBy{PipelineID: "a", ScheduleID: "cron", Date: runtest.Day.String(), Reason: BlockFailed}},
		{name: "root two levels up", down: "c", facts: map[run.Key]ConditionFacts{ka: facts(ka, run.FailedFinal)}, now: runtest.HM(11, 0),
			want: &BlockedBy{PipelineID: "a", ScheduleID: "cron", Date: runtest.Day.String(), Reason: BlockFailed}},
		{name: "middle late, root succeeded: the middle is the root", down: "c", facts: map[run.Key]ConditionFacts{ka: facts(ka, run.Completed), kb: {FirstLoaded: runtest.HM(0, 0)}}, now: runtest.HM(10, 30),
			want: &BlockedBy{PipelineID: "b", ScheduleID: "stream", Date: runtest.Day.String(), Reason: BlockLate}},
		{name: "middle at risk is late", down: "c", facts: map[run.Key]ConditionFacts{ka: facts(ka, run.Completed), kb: {FirstLoaded: runtest.HM(0, 0)}}, now: runtest.HM(9, 30),
			want: &BlockedBy{PipelineID: "b", ScheduleID: "stream", Date: runtest.Day.String(), Reason: BlockLate}},
		{name: "middle failed, root succeeded", down: "c", facts: map[run.Key]ConditionFacts{ka: facts(ka, run.Completed), kb: facts(kb, run.FailedFinal)}, now: runtest.HM(11, 0),
			want: &BlockedBy{PipelineID: "b", ScheduleID: "stream", Date: runtest.Day.String(), Reason: BlockFailed}},
		{name: "middle waiting before its SLA, root succeeded: none", down: "c", facts: map[run.Key]ConditionFacts{ka: facts(ka, run.Completed), kb: {FirstLoaded: runtest.HM(0, 0)}}, now: runtest.HM(8, 0)},
		{name: "upstream running, nothing late: none", down: "b", facts: map[run.Key]ConditionFacts{ka: facts(ka, run.Running)}, now: runtest.HM(9, 0)},
		{name: "upstream no run, no SLA, not missed: none", down: "b", now: runtest.HM(9, 0)},
		{name: "upstream schedule missed", down: "b", facts: map[run.Key]ConditionFacts{ka: {Missed: true}}, now: runtest.HM(9, 0),
			want: &BlockedBy{PipelineID: "a", ScheduleID: "cron", Date: runtest.Day.String(), Reason: BlockLate}},
		{name: "upstream missed then recovered: none", down: "b", facts: map[run.Key]ConditionFacts{ka: {Missed: true, Recovered: true, Run: &run.Run{Key: ka, State: run.Running}}}, now: runtest.HM(9, 0)},
		{name: "middle succeeded, its upstream failed since (a rerun): none", down: "c", facts: map[run.Key]ConditionFacts{ka: facts(ka, run.FailedFinal), kb: facts(kb, run.Completed)}, now: runtest.HM(11, 0)},
		{name: "all succeeded: none", down: "c", facts: map[run.Key]ConditionFacts{ka: facts(ka, run.Completed), kb: facts(kb, run.Completed)}, now: runtest.HM(12, 0)},
		{name: "failed run under the other schedule id names its key", down: "b",
			facts: map[run.Key]ConditionFacts{ka: facts(run.Key{PipelineID: "a", ScheduleID: "stream", Period: runtest.Day.String()}, run.FailedFinal)}, now: runtest.HM(9, 0),
			want: &BlockedBy{PipelineID: "a", ScheduleID: "stream", Date: runtest.Day.String(), Reason: BlockFailed}},
		{name: "hours: all, one hour failed", down: "d", facts: withHour(7, facts(hour(7), run.FailedFinal)), now: runtest.HM(9, 0),
			want: &BlockedBy{PipelineID: "h", ScheduleID: "cron", Date: schedule.HourlyPeriod(runtest.Day.Date, 7).String(), Reason: BlockFailed}},
		{name: "hours: all succeeded", down: "d", facts: allHoursOK, now: runtest.HM(9, 0)},
		{name: "unknown upstream: none", down: "x", now: runtest.HM(9, 0)},
		{name: "a pipeline without upstreams: none", down: "a", facts: map[run.Key]ConditionFacts{}, now: runtest.HM(9, 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ups := &mapUpstreams{pipes: pipes, facts: c.facts}
			got, ok, err := RootCause(ups, pipes[c.down], runtest.Day, c.now)
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case c.want == nil && ok:
				t.Errorf("blocked by %+v, want none", got)
			case c.want != nil && !ok:
				t.Errorf("not blocked, want %+v", *c.want)
			case c.want != nil && got != *c.want:
				t.Errorf("blocked by %+v, want %+v", got, *c.want)
			}
		})
	}
	t.Run("a read error is returned", func(t *testing.T) {
		if _, _, err := RootCause(&mapUpstreams{pipes: pipes, fail: true}, pipes["b"], runtest.Day, runtest.HM(9, 0)); err == nil {
			t.Error("no error")
		}
	})
}

// A cycle that slipped past config validation does not loop: the walk
// stops at MaxRootDepth.
func TestRootCauseBoundedOnACycle(t *testing.T) {
	p := runtest.Pipeline(t, "pipeline: {id: self}\njob: {type: glue, config: {jobName: j}}\nschedule: {trigger: {key: ready, check: exists}}\nvalidation: {rules: [{check: upstream, pipeline: other}]}\n")
	q := runtest.Pipeline(t, "pipeline: {id: other}\njob: {type: glue, config: {jobName: j}}\nschedule: {trigger: {key: ready, check: exists}}\nvalidation: {rules: [{check: upstream, pipeline: self}]}\n")
	ups := &mapUpstreams{pipes: map[string]*pipeline.Pipeline{"self": p, "other": q}}
	if _, ok, err := RootCause(ups, p, runtest.Day, runtest.HM(9, 0)); ok || err != nil {
		t.Fatalf("ok %v err %v", ok, err)
	}
	if ups.reads > MaxRootDepth {
		t.Errorf("%d reads, want at most %d", ups.reads, MaxRootDepth)
	}
}

func TestBlockedRoundTrips(t *testing.T) {
	b := BlockedBy{PipelineID: "a", ScheduleID: "cron", Date: "2026-03-10", Reason: BlockLate}
	e := event.Event{ID: "e1", Type: event.SLABreach, PipelineID: "b", ScheduleID: "stream", Date: "2026-03-10", Message: "late",
		Detail: WithDetail(run.Detail("deadline", "10:00"), DetailBlockedBy, b.Value())}
	got, ok := BlockedByOf(e)
	if !ok || got != b {
		t.Fatalf("BlockedByOf = %+v, %v", got, ok)
	}
	if _, ok := BlockedByOf(event.Event{Detail: run.Detail(DetailBlockedBy, "a")}); ok {
		t.Error("a blockedBy that is not an object is not a root")
	}
	if _, ok := BlockedByOf(event.Event{}); ok {
		t.Error("no detail, no root")
	}
	p := runtest.Pipeline(t, runtest.DailySLA) // expectedDuration 1h
	c := BlockedOf(p, e)
	kind := run.BlockedMarker(c.Down, c.Type).String()
	back, ok := BlockedFromMarker(kind, c.MarkerDetail())
	if !ok || back.Down != c.Down || back.Type != c.Type || back.EventID != "e1" || back.Message != "late" || back.Grace != time.Hour || !back.Detail.Equal(e.Detail) {
		t.Errorf("round trip: %+v, want %+v", back, c)
	}
	if _, ok := BlockedFromMarker(run.MarkerSLABreach, c.MarkerDetail()); ok {
		t.Error("a marker of another kind read as blocked")
	}
	if _, ok := BlockedFromMarker(kind, run.Detail("type", "SLA_BREACH")); ok {
		t.Error("a marker naming no downstream read as blocked")
	}
	if g := BlockedOf(nil, e).Grace; g != 0 {
		t.Errorf("grace of a removed pipeline %s, want 0", g)
	}
}

func TestBlockedDetail(t *testing.T) {
	b := BlockedBy{PipelineID: "a", ScheduleID: "cron", Date: "2026-03-10", Reason: BlockLate}
	d := BlockedDetail(run.Detail("deadline", "10:00", DetailReleased, true), b)
	if _, ok := d.Get(DetailReleased); ok {
		t.Error("a blocked event is not released")
	}
	if got, ok := BlockedByOf(event.Event{Detail: d}); !ok || got != b {
		t.Errorf("blockedBy %+v", got)
	}
	if v, _ := d.Get("deadline"); !v.Equal(sensor.StringValue("10:00")) {
		t.Errorf("own detail lost: %v", d)
	}
}

func TestReleaseAt(t *testing.T) {
	at := runtest.HM(11, 0)
	cases := []struct {
		name   string
		cs     []BlockedCondition
		want   time.Time
		wantOK bool
	}{
		{"none blocked: no release", nil, time.Time{}, false},
		{"no grace", []BlockedCondition{{}}, at, true},
		{"one grace", []BlockedCondition{{Grace: 30 * time.Minute}}, runtest.HM(11, 30), true},
		{"the longest grace", []BlockedCondition{{Grace: time.Hour}, {Grace: 30 * time.Minute}}, runtest.HM(12, 0), true},
	}
	for _, c := range cases {
		got, ok := ReleaseAt(at, c.cs)
		if ok != c.wantOK || !got.Equal(c.want) {
			t.Errorf("%s: ReleaseAt = %s, %v; want %s, %v", c.name, got, ok, c.want, c.wantOK)
		}
	}
}

func TestRelease(t *testing.T) {
	p := runtest.Pipeline(t, runtest.DailySLA)
	root := run.Key{PipelineID: "a", ScheduleID: "cron", Period: runtest.Day.String()}
	b := BlockedBy{PipelineID: "a", ScheduleID: "cron", Date: runtest.Day.String(), Reason: BlockFailed}
	c := BlockedCondition{Down: run.Key{PipelineID: "p1", ScheduleID: "stream", Period: runtest.Day.String()}, Type: event.SLABreach, EventID: "e1", Message: "SLA passed",
		Detail: WithDetail(run.Detail("deadline", "10:00"), DetailBlockedBy, b.Value())}
	t.Run("still holds: alerted again, released, without blockedBy", func(t *testing.T) {
		n, ok := Release(p, c, root, ConditionFacts{}, runtest.HM(12, 0))
		if !ok || n.Type != event.SLABreach {
			t.Fatalf("type %s", n.Type)
		}
		if _, ok := BlockedByOf(event.Event{Detail: n.Detail}); ok {
			t.Error("the released alert is still blocked")
		}
		if v, _ := n.Detail.Get(DetailReleased); !v.Equal(sensor.BoolValue(true)) {
			t.Errorf("released = %v", v)
		}
		if v, _ := n.Detail.Get("deadline"); !v.Equal(sensor.StringValue("10:00")) {
			t.Errorf("the blocked event's detail is lost: %v", n.Detail)
		}
	})
	t.Run("cleared: resolved, naming its root", func(t *testing.T) {
		n, ok := Release(p, c, root, ConditionFacts{Run: &run.Run{State: run.Completed}}, runtest.HM(12, 0))
		if !ok || n.Type != event.RootCauseResolved {
			t.Fatalf("type %s", n.Type)
		}
		got, ok := BlockedByOf(event.Event{Detail: n.Detail})
		if !ok || got != b {
			t.Errorf("resolve names %+v, want %+v", got, b)
		}
		if v, _ := n.Detail.Get("type"); !v.Equal(sensor.StringValue("SLA_BREACH")) {
			t.Errorf("type detail %v", v)
		}
	})
	t.Run("a removed downstream is resolved", func(t *testing.T) {
		if n, ok := Release(nil, c, root, ConditionFacts{}, runtest.HM(12, 0)); !ok || n.Type != event.RootCauseResolved {
			t.Errorf("type %s", n.Type)
		}
	})
}

// TestReleaseOfAWarning: a blocked warning is never released as a
// warning at or after its breach time (the on-call was paged "10:00 is
// due" at 11:35 beside the breach): with its breach reported it is told
// (nothing sent: the breach is released on its own); without, it is
// released as the breach.
func TestReleaseOfAWarning(t *testing.T) {
	p := runtest.Pipeline(t, runtest.DailySLA)
	root := run.Key{PipelineID: "a", ScheduleID: "cron", Period: runtest.Day.String()}
	breachAt := time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)
	c := BlockedCondition{Down: run.Key{PipelineID: "p1", ScheduleID: "stream", Period: runtest.Day.String()}, Type: event.SLAWarning, EventID: "w1",
		Message: "SLA deadline 10:00 is due", Detail: run.Detail("deadline", "10:00", "breachAt", breachAt)}
	if n, ok := Release(p, c, root, ConditionFacts{}, runtest.HM(9, 45)); !ok || n.Type != event.SLAWarning {
		t.Errorf("before the breach time: %v %s, want the warning", ok, n.Type)
	}
	var breached ConditionFacts
	breached.Marks.Set(run.MarkerSLABreach, breachAt)
	if n, ok := Release(p, c, root, breached, runtest.HM(11, 35)); ok {
		t.Errorf("with the breach reported: %s %q, want nothing", n.Type, n.Message)
	}
	n, ok := Release(p, c, root, ConditionFacts{}, runtest.HM(11, 35))
	if !ok || n.Type != event.SLABreach || !strings.Contains(n.Message, "passed") || strings.Contains(n.Message, "is due") {
		t.Errorf("past the breach time, no breach reported: %v %s %q, want the breach", ok, n.Type, n.Message)
	}
}

func TestUpstreamStanding(t *testing.T) {
	p := runtest.Pipeline(t, runtest.DailySLA)
	dry := runtest.Pipeline(t, runtest.DailySLA+"dryRun: true\n")
	cases := []struct {
		name string
		p    *pipeline.Pipeline
		f    ConditionFacts
		now  time.Time
		want BlockReason
	}{
		{name: "failed", p: p, f: ConditionFacts{Run: dayRun(run.FailedFinal, runtest.HM(7, 0))}, now: runtest.HM(8, 0), want: BlockFailed},
		{name: "succeeded", p: p, f: ConditionFacts{Run: dayRun(run.Completed, runtest.HM(7, 0))}, now: runtest.HM(11, 0)},
		{name: "breached", p: p, f: ConditionFacts{FirstLoaded: runtest.HM(0, 0)}, now: runtest.HM(10, 0), want: BlockLate},
		{name: "at risk", p: p, f: ConditionFacts{FirstLoaded: runtest.HM(0, 0)}, now: runtest.HM(9, 0), want: BlockLate},
		{name: "before the warning", p: p, f: ConditionFacts{FirstLoaded: runtest.HM(0, 0)}, now: runtest.HM(8, 59)},
		{name: "missed", p: p, f: ConditionFacts{Missed: true, FirstLoaded: runtest.HM(0, 0)}, now: runtest.HM(8, 0), want: BlockLate},
		{name: "missed and recovered", p: p, f: ConditionFacts{Missed: true, Recovered: true, FirstLoaded: runtest.HM(0, 0)}, now: runtest.HM(8, 0)},
		{name: "dry-run is never late", p: dry, f: ConditionFacts{FirstLoaded: runtest.HM(0, 0)}, now: runtest.HM(11, 0)},
		{name: "no config", f: ConditionFacts{Run: dayRun(run.FailedFinal, runtest.HM(7, 0))}, now: runtest.HM(8, 0)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := UpstreamStanding(c.p, runtest.Day, c.f, c.now); got != c.want {
				t.Errorf("UpstreamStanding = %q, want %q", got, c.want)
			}
		})
	}
}

// TestReleaseWaits: a blocked condition is judged only once its
// downstream period had its chance — no run still going, unless a pause
// holds it; a downstream without sla.expectedDuration gets the default
// grace.
func TestReleaseWaits(t *testing.T) {
	for _, c := range []struct {
		name string
		f    ConditionFacts
		want bool
	}{
		{"no run", ConditionFacts{}, false},
		{"evaluating", ConditionFacts{Run: &run.Run{State: run.Evaluating}}, true},
		{"running", ConditionFacts{Run: &run.Run{State: run.Running}}, true},
		{"completed", ConditionFacts{Run: &run.Run{State: run.Completed}}, false},
		{"failed", ConditionFacts{Run: &run.Run{State: run.FailedFinal}}, false},
		{"evaluating, paused", ConditionFacts{Run: &run.Run{State: run.Evaluating}, Paused: true}, false},
	} {
		if got := ReleaseWaits(c.f); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	noDuration := runtest.Pipeline(t, "pipeline: {id: d}\nschedule: {trigger: {key: k, check: exists}}\nsla: {deadline: \"10:00\"}\njob: {type: glue, config: {jobName: d}}\n")
	if g := BlockedOf(noDuration, event.Event{Type: event.SLABreach, PipelineID: "d", Date: "2026-03-10"}).Grace; g != DefaultReleaseGrace {
		t.Errorf("grace without expectedDuration: %s, want %s", g, DefaultReleaseGrace)
	}
	now := runtest.HM(12, 0)
	if at := ReleaseAgainAt(BlockedCondition{Grace: time.Hour}, now); !at.Equal(now.Add(time.Hour)) {
		t.Errorf("judged again at %s, want after its grace", at)
	}
	if at := ReleaseAgainAt(BlockedCondition{}, now); !at.Equal(now.Add(DefaultReleaseGrace)) {
		t.Errorf("judged again at %s, want after the default grace", at)
	}
}

// TestReleaseHeld: a release lets go every held condition whose
// downstream run has ended (or is held by a pause), each with what
// Release sends, and fires again at the earliest grace of those that wait.
func TestReleaseHeld(t *testing.T) {
	p := runtest.Pipeline(t, runtest.DailySLA)
	root := run.Key{PipelineID: "a", ScheduleID: "cron", Period: runtest.Day.String()}
	now := runtest.HM(12, 0)
	down := run.Key{PipelineID: "p1", ScheduleID: "stream", Period: runtest.Day.String()}
	breach := BlockedCondition{Down: down, Type: event.SLABreach, EventID: "e1", Message: "SLA passed"}
	breachAt := time.Date(2026, 3, 10, 10, 0, 0, 0, time.UTC)
	warning := BlockedCondition{Down: down, Type: event.SLAWarning, EventID: "w1", Message: "SLA deadline 10:00 is due",
		Detail: run.Detail("deadline", "10:00", "breachAt", breachAt)}
	var breached ConditionFacts
	breached.Marks.Set(run.MarkerSLABreach, breachAt)
	going := ConditionFacts{Run: &run.Run{State: run.Running}}
	paused := ConditionFacts{Run: &run.Run{State: run.Running}, Paused: true}
	long, short := breach, breach
	long.Grace, short.Grace = time.Hour, 20*time.Minute
	type rel struct {
		index int
		note  event.Type // "-": nothing sent
	}
	cases := []struct {
		name  string
		held  []HeldCondition
		want  []rel
		again time.Time
	}{
		{"nothing held", nil, nil, time.Time{}},
		{"still holds: alerted again", []HeldCondition{{breach, p, ConditionFacts{}}}, []rel{{0, event.SLABreach}}, time.Time{}},
		{"cleared: resolved", []HeldCondition{{breach, p, ConditionFacts{Run: &run.Run{State: run.Completed}}}}, []rel{{0, event.RootCauseResolved}}, time.Time{}},
		{"told: let go, nothing sent", []HeldCondition{{warning, p, breached}}, []rel{{0, "-"}}, time.Time{}},
		{"a run still going waits for the earliest grace, at least the default", []HeldCondition{{long, p, going}, {breach, p, ConditionFacts{}}, {short, p, going}},
			[]rel{{1, event.SLABreach}}, now.Add(20 * time.Minute)},
		{"a grace below the default waits the default", []HeldCondition{{breach, p, going}}, nil, now.Add(DefaultReleaseGrace)},
		{"a run held by a pause does not wait", []HeldCondition{{breach, p, paused}}, []rel{{0, event.SLABreach}}, time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := ReleaseHeld(root, c.held, now)
			var got []rel
			for _, r := range d.Released {
				x := rel{index: r.Index, note: "-"}
				if r.Note != nil {
					x.note = r.Note.Type
				}
				got = append(got, x)
			}
			if !slices.Equal(got, c.want) || !d.Again.Equal(c.again) {
				t.Fatalf("ReleaseHeld = %v, again %s; want %v, again %s", got, d.Again, c.want, c.again)
			}
		})
	}
}

func TestSeeksRoot(t *testing.T) {
	blocked := WithDetail(sensor.Object{}, DetailBlockedBy, BlockedBy{PipelineID: "a", ScheduleID: "cron", Date: runtest.Day.String(), Reason: BlockFailed}.Value())
	day := runtest.Day.String()
	cases := []struct {
		name string
		e    event.Event
		want bool
	}{
		{"a problem about a period", event.Event{Type: event.SLABreach, Date: day}, true},
		{"about no period", event.Event{Type: event.SLABreach}, false},
		{"not a problem", event.Event{Type: event.JobCompleted, Date: day}, false},
		{"blocked already", event.Event{Type: event.SLABreach, Date: day, Detail: blocked}, false},
	}
	for _, c := range cases {
		if got := SeeksRoot(c.e); got != c.want {
			t.Errorf("%s: SeeksRoot = %v, want %v", c.name, got, c.want)
		}
	}
}
