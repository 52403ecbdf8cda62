package awsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/scheduler"
	schedtypes "github.com/aws/aws-sdk-go-v2/service/scheduler/types"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
)

// SLAMonitor is the sla-monitor Lambda. It realises the engine's durable
// timers that are not a run's steps — SLA warnings and breaches, cron
// ticks, period starts, the end of a timed pause — as EventBridge
// Scheduler one-time schedules, and hands a firing back to the engine. It
// decides nothing itself.
//
//   - A control-table stream batch: a timer armed or moved gets a
//     schedule at(<due, UTC>) named from its key (ScheduleName), created,
//     or updated when it exists; a removed timer's schedule is deleted (a
//     missing one is fine). A timer already due is processed at once
//     (Scheduler would not fire a time in the past). Run steps (evaluate,
//     trigger, poll) are the orchestrator's and are left alone.
//   - A firing {"timerKey", "dueAt"}: the timer is read; if it is still
//     armed with that due time, engine.ProcessTimer processes it (the
//     same code, and the same suppression rules, as the local runtime);
//     a firing for a timer moved or gone since does nothing.
//   - A batch of the SLA DLQ (Replay): firings that failed, replayed. A
//     message is a firing Scheduler could not deliver (its body is the
//     schedule's Input) or one this function failed after Lambda's async
//     retries (an on-failure destination record, the firing in
//     "requestPayload"); each is fired again as above, so a firing whose
//     timer was processed meanwhile does nothing. A message that fails is
//     named for redelivery; the queue moves it to its final DLQ after a
//     few receives.
//
// Every schedule retries its invocation (RetryPolicy) and sends what it
// could not deliver to the SLA DLQ (DeadLetterConfig, DeadLetterARN).
//
// Schedules do not delete themselves after firing (ActionAfterCompletion
// NONE): every handler moves or removes its timer in the commit that
// processes it, and that record updates or deletes the schedule. A
// self-deleting schedule could race the update that re-arms it (a cron
// tick re-arms the same key at once).
type SLAMonitor struct {
	Engine    *engine.Engine
	Store     *ddbstore.Store
	Tables    ddbstore.Tables
	Scheduler *scheduler.Client
	Group     string // SCHEDULER_GROUP_NAME
	RoleARN   string // SCHEDULER_ROLE_ARN: what Scheduler assumes to invoke the target
	TargetARN string // SLA_MONITOR_ARN: this function
	// DeadLetterARN is the SLA DLQ (SLA_DLQ_ARN): the schedules' dead-letter
	// queue, which the sla-monitor replays. Empty: the schedules have none.
	DeadLetterARN string
	Clock         clock.Clock
	Log           *slog.Logger
}

// Firing is the Input of every schedule: which timer, and the due time
// the schedule was made for.
type Firing struct {
	TimerKey string    `json:"timerKey"`
	DueAt    time.Time `json:"dueAt"`
}

// FiringResult is the answer to a firing.
type FiringResult struct {
	Processed bool   `json:"processed"`
	Reason    string `json:"reason,omitempty"` // why not
}

// Handle is the Lambda handler; a payload with "Records" is a stream
// batch (or, when its records come from SQS, a batch of the SLA DLQ), one
// with "timerKey" a firing.
func (m *SLAMonitor) Handle(ctx context.Context, payload json.RawMessage) (any, error) {
	var shape struct {
		Records  json.RawMessage `json:"Records"`
		TimerKey *string         `json:"timerKey"`
	}
	if err := json.Unmarshal(payload, &shape); err != nil {
		return nil, fmt.Errorf("%s: payload is not a JSON object: %w", FnSLAMonitor, err)
	}
	switch {
	case shape.Records != nil && recordsFromSQS(shape.Records):
		var ev events.SQSEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, fmt.Errorf("%s: bad SQS batch: %w", FnSLAMonitor, err)
		}
		return m.Replay(ctx, ev), nil
	case shape.Records != nil:
		var ev events.DynamoDBEvent
		if err := json.Unmarshal(payload, &ev); err != nil {
			return nil, fmt.Errorf("%s: bad stream batch: %w", FnSLAMonitor, err)
		}
		return m.Batch(ctx, ev)
	case shape.TimerKey != nil:
		var f Firing
		if err := json.Unmarshal(payload, &f); err != nil || f.TimerKey == "" || f.DueAt.IsZero() {
			return nil, fmt.Errorf("%s: bad firing %s: timerKey and dueAt (RFC 3339) are required", FnSLAMonitor, payload)
		}
		return m.Fire(ctx, f)
	}
	return nil, fmt.Errorf("%s: payload is neither a stream batch (Records) nor a firing (timerKey): %.200s", FnSLAMonitor, payload)
}

// recordsFromSQS reports whether a batch's records are SQS messages (the
// SLA DLQ's mapping) rather than stream records.
func recordsFromSQS(records json.RawMessage) bool {
	var rs []struct {
		EventSource string `json:"eventSource"`
	}
	return json.Unmarshal(records, &rs) == nil && len(rs) > 0 && rs[0].EventSource == "aws:sqs"
}

// Replay fires again the firings of an SLA DLQ batch; a message that is
// no firing, or whose firing fails, is named for redelivery.
func (m *SLAMonitor) Replay(ctx context.Context, ev events.SQSEvent) events.SQSEventResponse {
	resp := events.SQSEventResponse{BatchItemFailures: []events.SQSBatchItemFailure{}}
	for _, msg := range ev.Records {
		f, err := DeadLetterFiring([]byte(msg.Body))
		if err == nil {
			var res FiringResult
			res, err = m.Fire(ctx, f)
			m.log().Info("firing replayed", "message", msg.MessageId, "key", f.TimerKey, "due", f.DueAt, "processed", res.Processed, "reason", res.Reason)
		}
		if err != nil {
			m.log().Error("firing not replayed", "message", msg.MessageId, "err", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.SQSBatchItemFailure{ItemIdentifier: msg.MessageId})
		}
	}
	return resp
}

// DeadLetterFiring is the firing of an SLA DLQ message: Scheduler's
// dead letter, whose body is the schedule's Input ({"timerKey","dueAt"}),
// or Lambda's on-failure destination record of a failed asynchronous
// invocation, which carries the invocation's payload as "requestPayload".
func DeadLetterFiring(body []byte) (Firing, error) {
	var shape struct {
		RequestPayload json.RawMessage `json:"requestPayload"`
	}
	if err := json.Unmarshal(body, &shape); err != nil {
		return Firing{}, fmt.Errorf("%s: dead letter is not a JSON object: %.200s", FnSLAMonitor, body)
	}
	if len(shape.RequestPayload) > 0 {
		body = shape.RequestPayload
	}
	var f Firing
	if err := json.Unmarshal(body, &f); err != nil || f.TimerKey == "" || f.DueAt.IsZero() {
		return Firing{}, fmt.Errorf("%s: dead letter holds no firing (timerKey and dueAt, RFC 3339): %.200s", FnSLAMonitor, body)
	}
	return f, nil
}

// Batch realises the timer records of a control-table stream batch; a
// record that fails is named for redelivery, as the router does.
func (m *SLAMonitor) Batch(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	return eachRecord(ctx, ev, m.log(), m.record), nil
}

func (m *SLAMonitor) log() *slog.Logger { return loggerOr(m.Log) }

func (m *SLAMonitor) record(ctx context.Context, rec events.DynamoDBEventRecord) error {
	role, ok := ddbstore.RoleOf(m.Tables, rec.EventSourceArn)
	if !ok || role != ddbstore.RoleControl {
		return fmt.Errorf("record from %q, which is not the control table %s", rec.EventSourceArn, m.Tables.Control)
	}
	item, err := ddbstore.DecodeLambda(role, rec)
	var ie *ddbstore.ItemError
	if errors.As(err, &ie) {
		return nil // not a timer of ours (the router reports bad items)
	}
	if err != nil {
		return err
	}
	if _, ok := item.(ddbstore.AlertConfigItem); ok {
		// The stored alert config changed (deploy-config): its windows'
		// end timers are armed, or moved, now; their records come back
		// here as timers to schedule. A failure is delivered again.
		return m.Engine.ArmMaintenance(ctx)
	}
	it, ok := item.(ddbstore.TimerItem)
	if !ok {
		return nil
	}
	if it.Removed {
		if engine.IsStepTimerKey(it.Timer.Key) {
			return nil
		}
		return m.unschedule(ctx, it.Timer.Key)
	}
	if run.IsStep(it.Timer.Kind) {
		return nil
	}
	if !it.Timer.DueAt.After(m.Clock.Now()) {
		_, err := m.Fire(ctx, Firing{TimerKey: it.Timer.Key, DueAt: it.Timer.DueAt})
		return err
	}
	return m.schedule(ctx, it.Timer)
}

// AtExpression is Scheduler's one-time expression for t, in UTC, rounded
// up to the second (a schedule must not fire before its timer is due).
func AtExpression(t time.Time) string {
	t = t.UTC()
	if r := t.Truncate(time.Second); !r.Equal(t) {
		t = r.Add(time.Second)
	}
	return "at(" + t.Format("2006-01-02T15:04:05") + ")"
}

// schedule creates the timer's schedule, or updates it when it exists.
func (m *SLAMonitor) schedule(ctx context.Context, t store.Timer) error {
	input, err := json.Marshal(Firing{TimerKey: t.Key, DueAt: t.DueAt})
	if err != nil {
		return err
	}
	name := ScheduleName(t.Key)
	target := &schedtypes.Target{Arn: aws.String(m.TargetARN), RoleArn: aws.String(m.RoleARN), Input: aws.String(string(input)),
		RetryPolicy: &schedtypes.RetryPolicy{MaximumRetryAttempts: aws.Int32(ScheduleRetryAttempts), MaximumEventAgeInSeconds: aws.Int32(ScheduleRetrySeconds)}}
	if m.DeadLetterARN != "" {
		target.DeadLetterConfig = &schedtypes.DeadLetterConfig{Arn: aws.String(m.DeadLetterARN)}
	}
	expr, window := aws.String(AtExpression(t.DueAt)), &schedtypes.FlexibleTimeWindow{Mode: schedtypes.FlexibleTimeWindowModeOff}
	desc := aws.String(truncate("interlock timer "+t.Key, 512))
	_, err = m.Scheduler.CreateSchedule(ctx, &scheduler.CreateScheduleInput{
		Name: aws.String(name), GroupName: aws.String(m.Group), ScheduleExpression: expr, ScheduleExpressionTimezone: aws.String("UTC"),
		Target: target, FlexibleTimeWindow: window, ActionAfterCompletion: schedtypes.ActionAfterCompletionNone, Description: desc,
	})
	var conflict *schedtypes.ConflictException
	if !errors.As(err, &conflict) {
		return wrapSched("create", name, err)
	}
	_, err = m.Scheduler.UpdateSchedule(ctx, &scheduler.UpdateScheduleInput{
		Name: aws.String(name), GroupName: aws.String(m.Group), ScheduleExpression: expr, ScheduleExpressionTimezone: aws.String("UTC"),
		Target: target, FlexibleTimeWindow: window, ActionAfterCompletion: schedtypes.ActionAfterCompletionNone, Description: desc,
	})
	return wrapSched("update", name, err)
}

// A schedule's retries of an invocation Lambda refused (throttled, the
// service failing): Scheduler's most, for its longest, a day. A firing is
// idempotent (Fire), so a retry never processes a timer twice; what is
// still refused after a day goes to the SLA DLQ.
const (
	ScheduleRetryAttempts = 185
	ScheduleRetrySeconds  = 86400
)

// unschedule deletes a removed timer's schedule; a missing one is fine.
func (m *SLAMonitor) unschedule(ctx context.Context, key string) error {
	name := ScheduleName(key)
	_, err := m.Scheduler.DeleteSchedule(ctx, &scheduler.DeleteScheduleInput{Name: aws.String(name), GroupName: aws.String(m.Group)})
	var missing *schedtypes.ResourceNotFoundException
	if errors.As(err, &missing) {
		return nil
	}
	return wrapSched("delete", name, err)
}

func wrapSched(op, name string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("scheduler: %s schedule %s: %w", op, name, err)
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// errEarly fails a firing that came before its timer's due time by this
// function's clock: Scheduler retries the invocation.
var errEarly = errors.New("fired before the timer is due")

// Fire processes a firing: the timer as stored now, if it is still armed
// with the firing's due time.
func (m *SLAMonitor) Fire(ctx context.Context, f Firing) (FiringResult, error) {
	t, err := m.Store.TimerGet(ctx, f.TimerKey)
	found := err == nil
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return FiringResult{}, err
	}
	switch run.DecideFiring(run.TimerAt{Kind: t.Kind, At: t.DueAt}, found, f.DueAt, m.Clock.Now()) {
	case run.FiringStale:
		return FiringResult{Reason: staleReason(t, found)}, nil
	case run.FiringEarly:
		return FiringResult{}, fmt.Errorf("timer %s: %w (%s)", t.Key, errEarly, t.DueAt.UTC().Format(time.RFC3339Nano))
	}
	if err := m.Engine.ProcessTimer(ctx, t); err != nil {
		return FiringResult{}, err
	}
	m.log().Info("timer processed", "key", t.Key, "kind", t.Kind, "due", t.DueAt)
	return FiringResult{Processed: true}, m.again(ctx, t.Key)
}

// maxAgain bounds how often one firing processes a timer its own
// processing re-armed as due.
const maxAgain = 32

// again processes the timer key again while its processing re-armed it
// already due — a backfill starting its next period at once, as the local
// timer loop would. A re-armed timer whose item did not change (the same
// due instant) writes no stream record, so nothing else would fire it
// before the watchdog's net, minutes later. Each round is a fresh
// DecideFiring on the stored timer; a conflicting firing or record is
// settled by the commits' conditions.
func (m *SLAMonitor) again(ctx context.Context, key string) error {
	for range maxAgain {
		t, err := m.Store.TimerGet(ctx, key)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if run.DecideFiring(run.TimerAt{Kind: t.Kind, At: t.DueAt}, true, t.DueAt, m.Clock.Now()) != run.FiringTake {
			return nil
		}
		if err := m.Engine.ProcessTimer(ctx, t); err != nil {
			return err
		}
		m.log().Info("timer processed again: re-armed due", "key", t.Key, "kind", t.Kind, "due", t.DueAt)
	}
	return nil
}

// staleReason says why a stale firing does nothing, for its result.
func staleReason(t store.Timer, found bool) string {
	switch {
	case !found:
		return "the timer is gone"
	case run.IsStep(t.Kind):
		return "a run step: the orchestrator's"
	}
	return "the timer moved to " + t.DueAt.UTC().Format(time.RFC3339Nano)
}

// SLAMonitorFromEnv is the sla-monitor function: the four tables,
// SCHEDULER_GROUP_NAME, SCHEDULER_ROLE_ARN, SLA_MONITOR_ARN and
// SLA_DLQ_ARN are required; EVENTS_TTL_DAYS is optional. Its engine is
// passive, like the router's.
func SLAMonitorFromEnv(ctx context.Context, env Env) (any, error) {
	const fn = FnSLAMonitor
	cfg, err := setUpTables(ctx, env, fn, EnvSchedulerGroup, EnvSchedulerRole, EnvSLAMonitorARN, EnvSLADeadLetterARN)
	if err != nil {
		return nil, err
	}
	eng, st, err := passiveEngine(ctx, cfg, env, fn)
	if err != nil {
		return nil, err
	}
	ArmMaintenance(ctx, eng, Logger())
	m := &SLAMonitor{Engine: eng, Store: st, Tables: env.Tables(), Scheduler: scheduler.NewFromConfig(cfg),
		Group: env.Get(EnvSchedulerGroup), RoleARN: env.Get(EnvSchedulerRole), TargetARN: env.Get(EnvSLAMonitorARN),
		DeadLetterARN: env.Get(EnvSLADeadLetterARN), Clock: clock.Real{}, Log: Logger()}
	return Metered(watchedMeter(env, fn, eng, m.Log), m.Handle), nil
}

// ArmMaintenance puts the end timer of each maintenance window that has
// none (engine.ArmMaintenance), at the sla-monitor's cold start: the
// timer is scheduled like any other, and its firing alerts what the
// window held back and re-arms the next end. A failure (another cold
// start armed it at the same moment) is logged: the next start tries
// again.
func ArmMaintenance(ctx context.Context, eng *engine.Engine, log *slog.Logger) {
	if err := eng.ArmMaintenance(ctx); err != nil {
		log.Warn("sla-monitor: maintenance windows' end timers not armed", "err", err)
	}
}

// The sla-monitor's own variables.
const (
	EnvSchedulerGroup = "SCHEDULER_GROUP_NAME" // the schedule group of the timers' schedules
	EnvSchedulerRole  = "SCHEDULER_ROLE_ARN"   // the role Scheduler assumes to invoke the sla-monitor
	EnvSLAMonitorARN  = "SLA_MONITOR_ARN"      // the sla-monitor's own ARN: the schedules' target
	// EnvSLADeadLetterARN is the SLA DLQ: the schedules' dead-letter queue,
	// replayed by the sla-monitor.
	EnvSLADeadLetterARN = "SLA_DLQ_ARN"
)

// passiveEngine opens the store and an engine on it that runs no timers
// of its own and makes no job calls (noJobs), on the system's clock.
func passiveEngine(ctx context.Context, cfg aws.Config, env Env, fn string) (*engine.Engine, *ddbstore.Store, error) {
	st, err := OpenStore(ctx, cfg, env, fn)
	if err != nil {
		return nil, nil, err
	}
	// The maintenance windows: the stored alert config's, read when they
	// are needed, or ALERTS_CONFIG's while none is stored. A window's end
	// timer is handled, and re-armed, by whichever function fires it.
	fallback, err := ParseAlertsConfig(env.Get(EnvAlertsConfig))
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", fn, err)
	}
	stored := &app.StoredAlertConfig{Store: st, Fallback: fallback}
	traced, tracer := app.Traced(st, pipeline.StoreDynamoDB)
	eng := engine.New(engine.Options{Store: traced, Clock: clock.Real{}, Jobs: noJobs{}, Logger: Logger(), Passive: true,
		MaintenanceFrom: stored.Maintenance, Tracer: tracer})
	if err := eng.Open(ctx); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", fn, err)
	}
	return eng, st, nil
}
