package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/runtime/awsrt"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/scenario"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/testenv/sfnlocal"
)

// faultPipeline is the run every fault case plays: a sensor starts it at
// 06:05 (its trigger is that the sensor exists), validation waits for
// status ready, the SLA warns at 06:30 (deadline 07:00 less the expected
// 30 minutes), the sensor says ready at 06:35, the DAG run takes 10
// minutes, and the run ends JOB_COMPLETED and SLA_MET before 07:00.
const faultPipeline = `
pipeline: {id: orders, owner: analytics}
schedule:
  trigger: {key: upstream, check: exists}
  evaluation: {window: 2h, interval: 5m}
sla: {deadline: "07:00", expectedDuration: 30m}
validation:
  rules: [{key: upstream, check: equals, field: status, value: ready}]
job: {type: airflow, config: {url: "%s", dagId: orders}, pollInterval: 2m}
`

// faultCase is a fault injected into that run, and what it must leave.
type faultCase struct {
	name string
	// arm injects the fault before the run starts, and returns the
	// timeline actions it needs; at and do are one more action.
	arm func(w *world) []action
	at  time.Duration // after 06:00
	do  func(w *world)
	// expectEnd says an execution's end that is not SUCCEEDED is the
	// fault's.
	expectEnd func(sfnlocal.Result) bool
	// happened checks the fault was injected as meant.
	happened func(t *testing.T, w *world)
	// ready is when the sensor says ready, after 06:00 (0: 35 minutes).
	ready time.Duration
	// timeout is the state machine's TimeoutSeconds (0: the module's
	// default).
	timeout time.Duration
}

// TestFaultsOnTheWiring plays one run through faults of the AWS
// deployment, each alone: a control-stream record lost, the execution
// deleted or timed out mid-run, the orchestrator throttled, the
// event-publisher crashing, Slack down, a Scheduler firing lost, the
// sla-monitor failing a firing, an execution reaching its TimeoutSeconds,
// and a sensor written at a fraction of a second. Each time the run reaches
// JOB_COMPLETED and SLA_MET with exactly one DAG run started, every event
// of the log reaches the bus, every alert reaches Slack exactly once, and
// no queue keeps anything (world.check).
func TestFaultsOnTheWiring(t *testing.T) {
	sfnlocal.Driver(t)
	t.Parallel()
	min := func(m int) time.Duration { return time.Duration(m) * time.Minute }
	stopped := func(status string) faultCase {
		return faultCase{
			// The DAG run started at 06:35 and runs until 06:45: the
			// execution is polling it.
			at: min(40), do: func(w *world) { w.stopExecution("orders", status) },
			expectEnd: func(r sfnlocal.Result) bool { return r.Status == status },
			happened: func(t *testing.T, w *world) {
				if n := w.endedWith(status); n != 1 {
					t.Errorf("%d executions ended %s, want 1", n, status)
				}
			},
		}
	}
	cases := []faultCase{
		{name: "none", happened: func(*testing.T, *world) {}},
		func() faultCase {
			c := stopped(sfnlocal.Aborted)
			c.name = "execution deleted"
			return c
		}(),
		func() faultCase {
			c := stopped(sfnlocal.TimedOut)
			c.name = "execution timed out"
			return c
		}(),
		{
			name: "stream record dropped",
			// The run's first step timer, armed when the sensor starts it:
			// the stream-router fails every batch holding its INSERT, the
			// mapping gives up after its 3 retries and sends the batch to
			// its DLQ (alarmed; the docs expect it there), and no
			// execution starts.
			arm: func(w *world) []action {
				seq := ""
				w.faults.failRecord = func(r events.DynamoDBEventRecord) bool {
					if seq == "" && isStepInsert(r) {
						seq = r.Change.SequenceNumber
					}
					return r.Change.SequenceNumber == seq
				}
				w.faults.expectDLQ = map[string]int{"router-control": 1}
				return nil
			},
			happened: func(t *testing.T, w *world) {
				if fs := w.streamDLQ["router-control"]; len(fs) != 1 || !slices.ContainsFunc(fs[0].Records, isStepInsert) || fs[0].Attempts != 1+streamRetries["router-control"] {
					t.Errorf("the router's DLQ holds %+v, want the batch of the step timer's INSERT after %d attempts", fs, 1+streamRetries["router-control"])
				}
				// The watchdog gave the run an execution, long before the
				// ready sensor would have started one.
				if at := w.firstStart(); at.IsZero() || !at.Before(time.Date(2026, 6, 1, 6, 35, 0, 0, time.UTC)) {
					t.Errorf("the first execution started at %s, want before 06:35", at)
				}
			},
		},
		{
			name: "orchestrator throttled five times",
			// From the sensor's ready on, the next five invocations are
			// refused: the evaluation's four attempts fail the execution
			// (InfraFailure), the fifth refusal meets the next one.
			at: min(35), do: func(w *world) { w.invoke.throttleNext(5) },
			expectEnd: func(r sfnlocal.Result) bool {
				return r.Status == "FAILED" && slices.Contains(r.States, "InfraFailure")
			},
			happened: func(t *testing.T, w *world) {
				if n := w.invoke.refused(); n != 5 {
					t.Errorf("%d invocations refused, want 5", n)
				}
			},
		},
		{
			name: "publisher crashing three batches in a row",
			at:   min(35), do: func(w *world) { w.faults.publisherCrashes = 3 },
			happened: func(t *testing.T, w *world) {
				if w.faults.publisherCrashed != 3 {
					t.Errorf("%d publisher invocations crashed, want 3", w.faults.publisherCrashed)
				}
			},
		},
		{
			name: "Slack 429 then 500 for ten minutes",
			// From 06:28 to 06:38, over the SLA warning at 06:30: the
			// dispatcher fails, the queue delivers it again after its
			// visibility timeout, and it is posted once Slack is back.
			arm: func(w *world) []action {
				return w.slackOutage(w.clk.Now().Add(28*time.Minute), 5*time.Minute, 5*time.Minute)
			},
			happened: func(t *testing.T, w *world) {
				if n := w.slack.Requests() - len(w.slack.Posts()); n == 0 {
					t.Error("Slack refused nothing")
				}
			},
		},
		{
			name: "Scheduler firing lost",
			// The SLA warning's schedule fires at 06:30 and its invocation
			// is lost; the watchdog's sweep takes the overdue timer.
			arm: func(w *world) []action {
				lost := false
				w.sched.Lose(func(f awsfake.Firing) bool {
					if !lost && strings.Contains(f.Input, "orders") {
						lost = true
						return true
					}
					return false
				})
				return nil
			},
			happened: func(t *testing.T, w *world) {
				for _, e := range w.events() {
					if e.Type == event.SLAWarning && !e.Time.After(time.Date(2026, 6, 1, 6, 30, 0, 0, time.UTC)) {
						t.Errorf("%s: the warning's firing was not lost", eventLine(e))
					}
				}
			},
		},
		{
			name: "sla-monitor failing a firing",
			// The SLA warning's firing at 06:30 fails, and Lambda's two
			// retries of it: the on-failure destination puts it in the
			// SLA DLQ, whose mapping replays it at once — not the sweep
			// five minutes later.
			arm: func(w *world) []action {
				w.faults.firingFailures = 1 + asyncRetries
				return nil
			},
			happened: func(t *testing.T, w *world) {
				if w.faults.firingsFailed != 1+asyncRetries {
					t.Errorf("%d firing invocations failed, want %d", w.faults.firingsFailed, 1+asyncRetries)
				}
				for _, e := range w.events() {
					if e.Type == event.SLAWarning && !e.Time.Equal(time.Date(2026, 6, 1, 6, 30, 0, 0, time.UTC)) {
						t.Errorf("%s: want at 06:30, replayed from the SLA DLQ", eventLine(e))
					}
				}
			},
		},
		{
			name: "execution about to pass its TimeoutSeconds",
			// With a 30-minute limit, the execution started at 06:05
			// would time out at 06:35 in the middle of its evaluation
			// loop; it continues as a new execution before, and none
			// times out (an execution that did would fail the case).
			timeout: 30 * time.Minute,
			happened: func(t *testing.T, w *world) {
				if n := len(w.sfn.Executions()); n < 2 {
					t.Errorf("%d executions, want a successor at least", n)
				}
				if n := w.endedWith(sfnlocal.TimedOut); n != 0 {
					t.Errorf("%d executions timed out", n)
				}
			},
		},
		{
			name: "sensor ready at a fraction of a second",
			// The DAG run starts at 06:35:00.250; its polls are due at
			// fractions of a second, which Step Functions' Waits drop.
			ready: min(35) + 250*time.Millisecond,
			happened: func(t *testing.T, w *world) {
				// The bus's times are whole seconds; the log's are not.
				page, err := w.writer.EventList(w.ctx, store.EventListParams{PipelineID: "orders", Types: []event.Type{event.ValidationPassed}})
				if err != nil || len(page.Events) != 1 || page.Events[0].Time.Nanosecond() == 0 {
					t.Errorf("validation passed %+v (%v): want once, at a fraction of a second", page.Events, err)
				}
			},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			playFault(t, c)
		})
	}
}

func playFault(t *testing.T, c faultCase) {
	start := time.Date(2026, 6, 1, 6, 0, 0, 0, time.UTC)
	w := newWorld(t, worldOptions{start: start, env: map[string]string{awsrt.EnvTriggerAllowAddresses: "127.0.0.1/32"}, sfnTimeout: c.timeout})
	air := newFakeAirflow(t, w.clk, map[string][]airflowRun{"orders": {{took: 10 * time.Minute, state: "success"}}})
	w.deploy(nil, []scenario.Doc{{File: "orders.yaml", Data: fmt.Appendf(nil, faultPipeline, air.URL)}})
	w.settle()
	w.mu.Lock()
	w.faults.expectEnd = c.expectEnd
	w.mu.Unlock()
	var armed []action
	if c.arm != nil {
		armed = c.arm(w)
	}
	ready := c.ready
	if ready == 0 {
		ready = 35 * time.Minute
	}
	status := func(s string) sensor.Object {
		return sensor.NewObject(map[string]sensor.Value{"status": sensor.StringValue(s)})
	}
	acts := []action{
		{at: start.Add(5 * time.Minute), do: func() { w.putSensor("orders", "upstream", status("pending")) }},
		{at: start.Add(ready), do: func() { w.putSensor("orders", "upstream", status("ready")) }},
	}
	if c.do != nil {
		acts = append(acts, action{at: start.Add(c.at), do: func() { c.do(w) }})
	}
	acts = append(acts, armed...)
	slices.SortStableFunc(acts, func(a, b action) int { return a.at.Compare(b.at) })
	w.play(acts, start.Add(65*time.Minute), 5*time.Minute) // past the deadline: no breach
	w.check()

	evs := w.events()
	for _, e := range evs {
		t.Logf("%s", eventLine(e))
	}
	count := func(typ event.Type) int {
		n := 0
		for _, e := range evs {
			if e.Type == typ && e.PipelineID == "orders" {
				n++
			}
		}
		return n
	}
	for _, x := range []struct {
		typ event.Type
		n   int
	}{{event.SLAWarning, 1}, {event.JobTriggered, 1}, {event.JobCompleted, 1}, {event.SLAMet, 1}, {event.SLABreach, 0}, {event.JobFailed, 0}} {
		if n := count(x.typ); n != x.n {
			t.Errorf("%d %s events on the bus, want %d", n, x.typ, x.n)
		}
	}
	if n := air.created("orders"); n != 1 {
		t.Errorf("%d DAG runs started, want 1", n)
	}
	w.checkEventsOnTheBus()
	c.happened(t, w)
}

// checkEventsOnTheBus: every event of the log reached the bus, and the
// bus has nothing the log does not.
func (w *world) checkEventsOnTheBus() {
	w.t.Helper()
	logged := map[string]bool{}
	var after store.Cursor
	for {
		page, err := w.writer.EventList(w.ctx, store.EventListParams{After: after, Limit: 500})
		if err != nil {
			w.t.Fatal(err)
		}
		for _, e := range page.Events {
			logged[e.ID] = true
		}
		if len(page.Events) == 0 {
			break
		}
		after = page.Next
	}
	onBus := map[string]bool{}
	for _, e := range w.events() {
		onBus[e.ID] = true
		if !logged[e.ID] {
			w.t.Errorf("on the bus, not in the log: %s", eventLine(e))
		}
	}
	for id := range logged {
		if !onBus[id] {
			w.t.Errorf("event %s of the log never reached the bus", id)
		}
	}
}

// firstStart is the instant the first execution was started.
func (w *world) firstStart() time.Time {
	w.mu.Lock()
	defer w.mu.Unlock()
	var first time.Time
	for _, at := range w.startedAt {
		if first.IsZero() || at.Before(first) {
			first = at
		}
	}
	return first
}

// endedWith is how many executions ended with status.
func (w *world) endedWith(status string) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, r := range w.ended {
		if r.Status == status {
			n++
		}
	}
	return n
}

// slackOutage is Slack answering 429 from `from` for throttled, then 500
// for failing, then posting again: timeline actions on the world's clock
// (the alert queue's next delivery is an instant the world visits).
func (w *world) slackOutage(from time.Time, throttled, failing time.Duration) []action {
	return []action{
		{at: from, do: func() { w.slack.SetMode(slacktest.Throttled) }},
		{at: from.Add(throttled), do: func() { w.slack.SetMode(slacktest.ServerError) }},
		{at: from.Add(throttled + failing), do: func() { w.slack.SetMode(slacktest.OK) }},
	}
}
