package engine_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/backfill"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
)

// The range reads an operator's input could make instead of the batch.

func (c *inputReads) RunList(ctx context.Context, p store.RunListParams) ([]run.Run, error) {
	return countCall(c, "RunList", func() ([]run.Run, error) { return c.Store.RunList(ctx, p) })
}

func (c *inputReads) SensorListPrefix(ctx context.Context, p store.SensorListPrefixParams) ([]store.Sensor, error) {
	return countCall(c, "SensorListPrefix", func() ([]store.Sensor, error) { return c.Store.SensorListPrefix(ctx, p) })
}

func (c *inputReads) SensorListChanged(ctx context.Context, p store.SensorListChangedParams) ([]store.Sensor, error) {
	return countCall(c, "SensorListChanged", func() ([]store.Sensor, error) { return c.Store.SensorListChanged(ctx, p) })
}

func (c *inputReads) BackfillList(ctx context.Context, pipelineID string) ([]store.Backfill, error) {
	return countCall(c, "BackfillList", func() ([]store.Backfill, error) { return c.Store.BackfillList(ctx, pipelineID) })
}

func (c *inputReads) EventList(ctx context.Context, p store.EventListParams) (store.EventPage, error) {
	return countCall(c, "EventList", func() (store.EventPage, error) { return c.Store.EventList(ctx, p) })
}

func (c *inputReads) PipelineList(ctx context.Context) ([]store.Pipeline, error) {
	return countCall(c, "PipelineList", func() ([]store.Pipeline, error) { return c.Store.PipelineList(ctx) })
}

func (c *inputReads) SilenceGet(ctx context.Context, id string) (store.Silence, error) {
	return countCall(c, "SilenceGet", func() (store.Silence, error) { return c.Store.SilenceGet(ctx, id) })
}

func (c *inputReads) BackfillGet(ctx context.Context, pipelineID, id string) (store.Backfill, error) {
	return countCall(c, "BackfillGet", func() (store.Backfill, error) { return c.Store.BackfillGet(ctx, pipelineID, id) })
}

// operatorReadsPipeline is a trigger pipeline with a validation rule, so
// a resume has trigger data to plan on and periods to start.
const operatorReadsPipeline = `
pipeline: {id: ops}
schedule:
  trigger: {key: ops-landed, check: exists}
validation:
  rules: [{key: ops-landed, check: exists}]
job: {type: glue, config: {jobName: ops}, pollInterval: 1m}
`

// TestOperatorReadsOneBatch follows an operator's inputs — pause, trigger
// data held by the pause, resume, a rerun request, an explain (its job
// output read from the event log after), a backfill's request and
// cancel, a silence's expiry and its end, a config load's cycle check, a
// sensor's deletion, a step's handoff —
// on a store that offers the batch read: each reads
// its facts through Facts, one call per round, and makes no single read
// (no point read, no list read) on the way of its decision. It logs the
// calls per input (the before/after figure of issue #27).
func TestOperatorReadsOneBatch(t *testing.T) {
	ctx := t.Context()
	h := newReadsHarness(t, configFile{"ops.yaml", operatorReadsPipeline})
	eng, st, clk := h.eng, h.st, h.clk
	// after: the single reads an input makes once its decision is
	// committed (explain's job output, read from the event log), one each.
	check := func(input string, decided bool, after ...string) {
		t.Helper()
		r := h.took(input)
		for _, call := range after {
			if r.calls[call] > 1 {
				t.Errorf("%s: %d %s calls after its decision, want one", input, r.calls[call], call)
			}
			r.single -= r.calls[call]
		}
		if decided && (r.calls["Facts"] != int(r.rounds) || r.single > 0 || r.inputs == 0 || r.redecided > 0) {
			t.Errorf("%s: read %v in %d decisions (%d made again), %d rounds; want one Facts call per round, no single read, each decision made once", input, r.calls, r.inputs, r.redecided, r.rounds)
		}
	}
	runDue := func() {
		for {
			ts, err := eng.DueTimers(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(ts) == 0 {
				return
			}
			if err := eng.ProcessTimer(ctx, ts[0]); err != nil {
				t.Fatal(err)
			}
		}
	}
	runDue()
	h.reset()

	if err := eng.Pause(ctx, "ops", time.Time{}, "op"); err != nil {
		t.Fatal(err)
	}
	check("pause", true)
	if _, err := eng.PutSensor(ctx, "ops", "ops-landed", run.Detail("rows", 1)); err != nil {
		t.Fatal(err)
	}
	check("sensor (paused)", true)
	clk.Advance(time.Minute)
	if err := eng.Resume(ctx, "ops", "op"); err != nil {
		t.Fatal(err)
	}
	check("resume", true)
	ts, err := st.Store.TimerList(ctx, store.TimerListParams{})
	if err != nil {
		t.Fatal(err)
	}
	handed := false
	for _, tm := range ts {
		if k, err := run.ParseTimerKey(tm.Key); err != nil || k.Family != run.TimerStep {
			continue
		}
		clk.Set(tm.DueAt.Add(2 * time.Hour)) // orphaned: overdue past the grace
		h.reset()
		if _, handed, err = eng.HandOff(ctx, tm, time.Hour); err != nil {
			t.Fatal(err)
		}
		check("handoff", true)
		break
	}
	if !handed {
		t.Error("no step handed off: the test's run has no step timer")
	}
	for range 5 {
		runDue()
		clk.Advance(time.Minute)
	}
	h.reset()
	res, err := eng.RequestRerun(ctx, "ops", t0.Format(time.DateOnly), "fix")
	if err != nil {
		t.Fatal(err)
	}
	check("rerun request", true)
	if _, err := eng.Explain(ctx, "ops", t0.Format(time.DateOnly)); err != nil {
		t.Fatal(err)
	}
	check("explain", true, "EventList")
	if _, err := eng.RequestBackfill(ctx, "ops", backfill.Request{From: t0.AddDate(0, 0, -3).Format(time.DateOnly), To: t0.AddDate(0, 0, -1).Format(time.DateOnly), Only: backfill.OnlyAll, MaxActive: 1}, false, "op"); err != nil {
		t.Fatal(err)
	}
	check("backfill request", true)
	ts, err = eng.DueTimers(ctx, 10)
	if err != nil {
		t.Fatal(err)
	}
	stepped := false
	for _, tm := range ts {
		if k, err := run.ParseTimerKey(tm.Key); err == nil && k.Family == run.TimerBackfill {
			if err := eng.ProcessTimer(ctx, tm); err != nil {
				t.Fatal(err)
			}
			check("backfill step", true)
			stepped = true
		}
	}
	if !stepped {
		t.Error("the backfill request armed no timer due now")
	}
	if _, err := eng.CancelBackfill(ctx, "ops", "", "op"); err != nil {
		t.Fatal(err)
	}
	check("backfill cancel", true)
	sil, err := eng.CreateSilence(ctx, engine.SilenceRequest{Matchers: silence.Matchers{Pipelines: []string{"ops"}}, Duration: time.Hour, By: "op"})
	if err != nil {
		t.Fatal(err)
	}
	h.reset() // creating reads nothing
	if _, err := eng.ExpireSilence(ctx, sil.ID, "op"); err != nil {
		t.Fatal(err)
	}
	check("silence expiry", true)
	runDue() // the silence's end timer, moved to now: its end judges the events it covered
	check("silence end", true)
	if _, err := eng.ApplyConfig(ctx, "downstream.yaml", []byte("pipeline: {id: downstream}\nvalidation:\n  rules: [{check: upstream, pipeline: ops}]\njob: {type: glue, config: {jobName: d}}\n")); err != nil {
		t.Fatal(err)
	}
	check("config load (upstream rules: the cycle check)", true)
	if err := eng.DeleteSensor(ctx, "ops", "ops-landed"); err != nil {
		t.Fatal(err)
	}
	check("delete sensor", true)
	t.Logf("store reads per operator input (rerun accepted: %v):\n%s", res.Accepted, strings.Join(h.lines, "\n"))
	if s := eng.FactsStats(); s.LateReads > 0 {
		t.Errorf("late reads: %+v", s)
	}
}
