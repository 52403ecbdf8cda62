package awsrt

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/testenv/ddbstream"
)

// slaPipeline starts a period at 06:00 UTC (cron) and wants it done by
// 09:00, warning at 08:00; its data never comes, so its run waits.
const slaPipeline = `
pipeline: {id: sales}
schedule: {cron: "0 6 * * *"}
sla: {deadline: "09:00", expectedDuration: 1h}
validation: {rules: [{key: landed, check: exists}]}
job: {type: glue, config: {jobName: sales}}
`

const monitorARN = "arn:aws:lambda:us-east-1:123456789012:function:sla-monitor"

// monitorEnv is the sla-monitor behind the control table's stream and
// the Scheduler fake, on a virtual clock.
type monitorEnv struct {
	ddbEnv
	clk     *clock.Virtual
	sched   *awsfake.Scheduler
	monitor *SLAMonitor
	stream  *ddbstream.Mapping
	invoke  func(ctx context.Context, payload []byte) ([]byte, error)
}

func newMonitorEnv(t *testing.T, start time.Time) monitorEnv {
	t.Helper()
	env := monitorEnv{ddbEnv: newDDBEnv(t, 20*365*24*time.Hour), clk: clock.NewVirtual(start)}
	eng := engine.New(engine.Options{Store: env.store, Clock: env.clk, Jobs: noJobs{}, Passive: true})
	if err := eng.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	env.sched = awsfake.NewScheduler(t, env.clk)
	env.monitor = &SLAMonitor{Engine: eng, Store: env.store, Tables: env.tables, Clock: env.clk,
		Scheduler: scheduler.NewFromConfig(awsfake.Config(env.sched.URL)), Group: "interlock", RoleARN: "arn:aws:iam::123456789012:role/scheduler", TargetARN: monitorARN}
	env.invoke = lambda.NewHandler(env.monitor.Handle).Invoke
	env.sched.Target(monitorARN, func(ctx context.Context, input string) error {
		_, err := env.invoke(ctx, []byte(input))
		return err
	})
	arn, err := ddbstream.StreamARN(t.Context(), env.client, env.tables.Control)
	if err != nil {
		t.Fatal(err)
	}
	env.stream = ddbstream.New(ddbstream.FromDynamoDB(env.client), arn, 10, env.invoke)
	return env
}

// schedules is name → expression of the group's schedules.
func (env monitorEnv) schedules() map[string]string {
	out := map[string]string{}
	for _, s := range env.sched.Schedules() {
		out[s.Name] = s.Expression
	}
	return out
}

func (env monitorEnv) count(t *testing.T, typ event.Type) int {
	t.Helper()
	page, err := env.store.EventList(t.Context(), store.EventListParams{PipelineID: "sales", Types: []event.Type{typ}})
	if err != nil {
		t.Fatal(err)
	}
	return len(page.Events)
}

// fire plays Scheduler at the clock's time and fails on a target error.
func (env monitorEnv) fire(t *testing.T) []awsfake.Firing {
	t.Helper()
	fs := env.sched.Fire(t.Context(), env.clk.Now())
	for _, f := range fs {
		if f.Err != nil {
			t.Fatalf("firing %s: %v", f.Name, f.Err)
		}
	}
	return fs
}

// TestSLAMonitorRealisesTimersAsSchedules: a timer armed → a schedule at
// its due time; moved → the schedule updated; removed → deleted; a firing
// processes the timer once through the engine (SLA_WARNING once), and a
// second or stale firing does nothing.
func TestSLAMonitorRealisesTimersAsSchedules(t *testing.T) {
	start := time.Date(2099, 3, 7, 5, 0, 0, 0, time.UTC)
	env := newMonitorEnv(t, start)
	ctx := t.Context()
	if _, err := env.monitor.Engine.ApplyConfig(ctx, "sales.yaml", []byte(slaPipeline)); err != nil {
		t.Fatal(err)
	}
	drainAll(t, env.stream)
	cron, warn, breach := ScheduleName("cron/sales"), ScheduleName("sla-warning/sales/cron/2099-03-07"), ScheduleName("sla-breach/sales/cron/2099-03-07")
	got := env.schedules()
	if got[cron] != "at(2099-03-07T06:00:00)" {
		t.Fatalf("after the config: schedules %v, want %s at(2099-03-07T06:00:00)", got, cron)
	}

	// 06:00: the cron schedule fires; the engine starts the period, arms
	// its SLA timers and moves the cron timer to tomorrow.
	env.clk.Set(start.Add(time.Hour))
	if fs := env.fire(t); len(fs) != 1 || fs[0].Name != cron {
		t.Fatalf("at 06:00 fired %+v, want the cron schedule", fs)
	}
	drainAll(t, env.stream)
	got = env.schedules()
	if got[cron] != "at(2099-03-08T06:00:00)" || got[warn] != "at(2099-03-07T08:00:00)" || got[breach] != "at(2099-03-07T09:00:00)" {
		t.Fatalf("after the 06:00 tick: schedules %v", got)
	}
	if env.sched.Calls("UpdateSchedule") != 1 {
		t.Fatalf("the moved cron timer made %d updates, want 1", env.sched.Calls("UpdateSchedule"))
	}
	for _, s := range env.sched.Schedules() {
		if s.Timezone != "UTC" || s.TargetArn != monitorARN || s.Group != "interlock" || s.ActionAfterCompletion != "NONE" {
			t.Fatalf("schedule %+v", s)
		}
	}

	// 08:00: the warning fires once.
	env.clk.Set(start.Add(3 * time.Hour))
	if fs := env.fire(t); len(fs) != 1 || fs[0].Name != warn {
		t.Fatalf("at 08:00 fired %+v, want the warning", fs)
	}
	if n := env.count(t, event.SLAWarning); n != 1 {
		t.Fatalf("SLA_WARNING = %d, want 1", n)
	}
	// Delivered again (Scheduler's retry, or an invocation answered late):
	// the timer is gone, nothing happens.
	var input Firing
	for _, s := range env.sched.Schedules() {
		if s.Name == warn {
			if err := json.Unmarshal([]byte(s.Input), &input); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, err := env.invoke(ctx, mustJSON(t, input))
	if err != nil || !strings.Contains(string(out), `"processed":false`) {
		t.Fatalf("second firing: %s %v", out, err)
	}
	// A stale firing of the cron timer (it moved to tomorrow) does nothing.
	out, err = env.invoke(ctx, mustJSON(t, Firing{TimerKey: "cron/sales", DueAt: start.Add(time.Hour)}))
	if err != nil || !strings.Contains(string(out), `"processed":false`) {
		t.Fatalf("stale firing: %s %v", out, err)
	}
	if n := env.count(t, event.SLAWarning); n != 1 {
		t.Fatalf("SLA_WARNING = %d after the repeats, want 1", n)
	}
	// The processed warning timer is removed: so is its schedule.
	drainAll(t, env.stream)
	got = env.schedules()
	if _, ok := got[warn]; ok || got[breach] == "" || got[cron] == "" {
		t.Fatalf("after the warning: schedules %v, want the warning's deleted, the others kept", got)
	}
	// A removal delivered again finds no schedule: fine.
	if err := env.monitor.unschedule(ctx, "sla-warning/sales/cron/2099-03-07"); err != nil {
		t.Fatalf("deleting a missing schedule: %v", err)
	}
}

// TestSLAMonitorFiresEarlyAndBadPayloads: a firing before its timer is
// due is an error (Scheduler retries it); a payload of neither shape is
// refused with a clear error.
func TestSLAMonitorFiresEarlyAndBadPayloads(t *testing.T) {
	start := time.Date(2099, 3, 7, 5, 0, 0, 0, time.UTC)
	env := newMonitorEnv(t, start)
	ctx := t.Context()
	if _, err := env.monitor.Engine.ApplyConfig(ctx, "sales.yaml", []byte(slaPipeline)); err != nil {
		t.Fatal(err)
	}
	if _, err := env.invoke(ctx, mustJSON(t, Firing{TimerKey: "cron/sales", DueAt: start.Add(time.Hour)})); err == nil || !strings.Contains(err.Error(), "before the timer is due") {
		t.Fatalf("early firing: %v", err)
	}
	for _, p := range []string{`[]`, `{}`, `{"timerKey": "x"}`, `{"Records": 3}`, `nope`} {
		if _, err := env.invoke(ctx, []byte(p)); err == nil {
			t.Fatalf("payload %s: no error", p)
		}
	}
}

// TestScheduleNameAndAt: names are Scheduler's (≤ 64 of [0-9a-zA-Z-_.])
// and distinct for keys that differ only where characters were replaced
// or cut; at() rounds up to the second.
func TestScheduleNameAndAt(t *testing.T) {
	long := strings.Repeat("p", 100)
	keys := []string{"cron/a.b", "cron/a/b", "cron/a_b", "sla-warning/" + long + "/x", "sla-warning/" + long + "/y", "cron/é"}
	seen := map[string]string{}
	for _, k := range keys {
		n := ScheduleName(k)
		if len(n) > 64 || !validScheduleName(n) {
			t.Fatalf("%q → %q: not a Scheduler name", k, n)
		}
		if prev, ok := seen[n]; ok {
			t.Fatalf("%q and %q share %q", prev, k, n)
		}
		seen[n] = k
	}
	at := time.Date(2099, 3, 7, 8, 0, 0, 1, time.FixedZone("x", 3600))
	if got := AtExpression(at); got != "at(2099-03-07T07:00:01)" {
		t.Fatalf("AtExpression = %s", got)
	}
}

func validScheduleName(n string) bool {
	for _, r := range n {
		if !(r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return n != ""
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestSLAMonitorProcessesATimerAlreadyDue: a timer record read after its
// due time (the stream ran late) is processed at once — Scheduler would
// never fire a time in the past — and the timer it re-arms is scheduled.
func TestSLAMonitorProcessesATimerAlreadyDue(t *testing.T) {
	start := time.Date(2099, 3, 7, 5, 0, 0, 0, time.UTC)
	env := newMonitorEnv(t, start)
	if _, err := env.monitor.Engine.ApplyConfig(t.Context(), "sales.yaml", []byte(slaPipeline)); err != nil {
		t.Fatal(err)
	}
	env.clk.Set(start.Add(time.Hour + 30*time.Second)) // the 06:00 tick's record arrives at 06:00:30
	drainAll(t, env.stream)
	if got := env.schedules()[ScheduleName("cron/sales")]; got != "at(2099-03-08T06:00:00)" {
		t.Fatalf("cron schedule %q, want tomorrow's tick", got)
	}
	if _, err := env.store.RunGet(t.Context(), run.Key{PipelineID: "sales", ScheduleID: "cron", Period: "2099-03-07"}); err != nil {
		t.Fatalf("the tick's run: %v", err)
	}
}

// recordingClient is the SDK's HTTP client with every request body kept:
// what the sla-monitor asked of Scheduler, as sent on the wire.
type recordingClient struct {
	mu       sync.Mutex
	requests []recordedRequest
}

type recordedRequest struct {
	Method, Path string
	Body         []byte
}

func (c *recordingClient) Do(r *http.Request) (*http.Response, error) {
	var body []byte
	if r.Body != nil {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		body = b
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	c.mu.Lock()
	c.requests = append(c.requests, recordedRequest{Method: r.Method, Path: r.URL.Path, Body: body})
	c.mu.Unlock()
	return http.DefaultClient.Do(r)
}

const slaDLQ = "arn:aws:sqs:us-east-1:123456789012:interlock-sla-dlq"

// TestSLASchedulesRetryAndDeadLetter: every schedule the sla-monitor
// creates or updates retries its invocation for a day and names the SLA
// DLQ as its dead-letter queue, as sent to Scheduler.
func TestSLASchedulesRetryAndDeadLetter(t *testing.T) {
	start := time.Date(2099, 3, 7, 5, 0, 0, 0, time.UTC)
	env := newMonitorEnv(t, start)
	rec := &recordingClient{}
	cfg := awsfake.Config(env.sched.URL)
	cfg.HTTPClient = rec
	env.monitor.Scheduler = scheduler.NewFromConfig(cfg)
	env.monitor.DeadLetterARN = slaDLQ
	if _, err := env.monitor.Engine.ApplyConfig(t.Context(), "sales.yaml", []byte(slaPipeline)); err != nil {
		t.Fatal(err)
	}
	drainAll(t, env.stream)
	env.clk.Set(start.Add(time.Hour)) // the cron tick: its schedule updated, the SLA timers' created
	env.fire(t)
	drainAll(t, env.stream)

	ops := map[string]int{}
	for _, r := range rec.requests {
		op := map[string]string{http.MethodPost: "create", http.MethodPut: "update"}[r.Method]
		if op == "" || !strings.HasPrefix(r.Path, "/schedules/") {
			continue
		}
		ops[op]++
		var in struct {
			Target struct {
				RetryPolicy      *struct{ MaximumRetryAttempts, MaximumEventAgeInSeconds int }
				DeadLetterConfig *struct{ Arn string }
			}
		}
		if err := json.Unmarshal(r.Body, &in); err != nil {
			t.Fatalf("%s %s: %v", r.Method, r.Path, err)
		}
		if rp := in.Target.RetryPolicy; rp == nil || rp.MaximumRetryAttempts != 185 || rp.MaximumEventAgeInSeconds != 86400 {
			t.Errorf("%s %s: retry policy %+v, want 185 attempts over 86400 s", op, r.Path, rp)
		}
		if dl := in.Target.DeadLetterConfig; dl == nil || dl.Arn != slaDLQ {
			t.Errorf("%s %s: dead-letter config %+v, want %s", op, r.Path, dl, slaDLQ)
		}
	}
	if ops["create"] < 3 || ops["update"] < 1 {
		t.Fatalf("schedules created %d and updated %d times, want the cron's and the SLA timers' creations and the cron's update", ops["create"], ops["update"])
	}
}

// sqsBatch is the SLA DLQ's mapping's invocation: one message per body.
func sqsBatch(t *testing.T, bodies ...string) []byte {
	t.Helper()
	var ev events.SQSEvent
	for i, b := range bodies {
		ev.Records = append(ev.Records, events.SQSMessage{MessageId: fmt.Sprintf("m%d", i+1), Body: b, EventSource: "aws:sqs",
			EventSourceARN: "arn:aws:sqs:us-east-1:123456789012:interlock-sla-dlq"})
	}
	return mustJSON(t, ev)
}

// TestSLAReplaysFailedFirings: the SLA DLQ's messages, through the real
// handler — Scheduler's dead letter (the schedule's Input), Lambda's
// on-failure record of a failed async invocation (the firing in
// requestPayload) — are fired again, each timer processed once however
// often its firing comes back; a stale firing does nothing and is not a
// failure; an early one, and a message holding no firing, are named for
// redelivery (the queue moves what keeps failing to its final DLQ).
func TestSLAReplaysFailedFirings(t *testing.T) {
	start := time.Date(2099, 3, 7, 5, 0, 0, 0, time.UTC)
	env := newMonitorEnv(t, start)
	ctx := t.Context()
	if _, err := env.monitor.Engine.ApplyConfig(ctx, "sales.yaml", []byte(slaPipeline)); err != nil {
		t.Fatal(err)
	}
	drainAll(t, env.stream)
	env.clk.Set(start.Add(time.Hour))
	env.fire(t)
	drainAll(t, env.stream)
	// The warning's and the breach's firings failed (Scheduler does not
	// fire them here): they come back from the SLA DLQ.
	day := start.Truncate(24 * time.Hour)
	warning := string(mustJSON(t, Firing{TimerKey: "sla-warning/sales/cron/2099-03-07", DueAt: day.Add(8 * time.Hour)}))
	breach := string(mustJSON(t, Firing{TimerKey: "sla-breach/sales/cron/2099-03-07", DueAt: day.Add(9 * time.Hour)}))
	lambdaRecord := func(firing string) string {
		return `{"version":"1.0","timestamp":"2099-03-07T08:33:00.000Z","requestContext":{"requestId":"r1","functionArn":"` + monitorARN +
			`:$LATEST","condition":"RetriesExhausted","approximateInvokeCount":3},"requestPayload":` + firing +
			`,"responseContext":{"statusCode":200,"executedVersion":"$LATEST","functionError":"Unhandled"},"responsePayload":{"errorMessage":"throttled"}}`
	}
	stale := string(mustJSON(t, Firing{TimerKey: "cron/sales", DueAt: day.Add(6 * time.Hour)}))

	replay := func(at time.Duration, wantFailed string, wantWarnings, wantBreaches int, bodies ...string) {
		t.Helper()
		env.clk.Set(day.Add(at))
		for round := 1; round <= 2; round++ { // a batch delivered again changes nothing
			out, err := env.invoke(ctx, sqsBatch(t, bodies...))
			if err != nil {
				t.Fatalf("at %s, round %d: %v", at, round, err)
			}
			var resp events.SQSEventResponse
			if err := json.Unmarshal(out, &resp); err != nil {
				t.Fatalf("at %s, round %d: answer %s: %v", at, round, out, err)
			}
			var failed []string
			for _, f := range resp.BatchItemFailures {
				failed = append(failed, f.ItemIdentifier)
			}
			if fmt.Sprint(failed) != wantFailed {
				t.Fatalf("at %s, round %d: failures %v, want %s", at, round, failed, wantFailed)
			}
			if w, b := env.count(t, event.SLAWarning), env.count(t, event.SLABreach); w != wantWarnings || b != wantBreaches {
				t.Fatalf("at %s, round %d: SLA_WARNING %d, SLA_BREACH %d; want %d and %d", at, round, w, b, wantWarnings, wantBreaches)
			}
		}
	}
	// 08:30: the warning, as Scheduler's dead letter and as Lambda's
	// failure record, is processed once; the breach is not due yet (m3,
	// redelivered); m4 and m6 hold no firing; m5 is stale.
	replay(8*time.Hour+30*time.Minute, "[m3 m4 m6]", 1, 0, warning, lambdaRecord(warning), breach, `{"hello": 1}`, stale, `not json`)
	// 09:00: the breach comes back as Lambda's failure record.
	replay(9*time.Hour, "[]", 1, 1, lambdaRecord(breach), warning)
}

// TestDeadLetterFiring: the two dead-letter shapes, and what is neither.
func TestDeadLetterFiring(t *testing.T) {
	due := time.Date(2099, 3, 7, 8, 0, 0, 0, time.UTC)
	for body, want := range map[string]string{
		`{"timerKey":"k","dueAt":"2099-03-07T08:00:00Z"}`:                                     "k",
		`{"requestPayload":{"timerKey":"k2","dueAt":"2099-03-07T08:00:00Z"},"version":"1.0"}`: "k2",
		`{"requestPayload":{"timerKey":""}}`:                                                  "",
		`{"timerKey":"k"}`:                                                                    "",
		`[1]`:                                                                                 "",
		``:                                                                                    "",
	} {
		f, err := DeadLetterFiring([]byte(body))
		switch {
		case want == "" && err == nil:
			t.Errorf("%s: firing %+v, want an error", body, f)
		case want != "" && (err != nil || f.TimerKey != want || !f.DueAt.Equal(due)):
			t.Errorf("%s: %+v %v, want %s at %s", body, f, err, want, due)
		}
	}
}
