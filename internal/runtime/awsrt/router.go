package awsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
	"github.com/interlockhq/interlock/internal/trigger"
)

// Router is the stream-router Lambda: it hands the items other systems
// write into the control and job-log tables to the engine, one stream
// record at a time, and decides nothing itself.
//
//   - a sensor item (SENSOR#<key>, written by anyone): its current content
//     goes through engine.PutSensor — the same decision as a sensor PUT on
//     a local serve (start a period's run, evaluate a waiting one, late
//     data, post-run drift, the circuit breaker); a removed item removes
//     the sensor;
//   - a config item: the engine's parse cache forgets it (decisions read
//     the stored version anyway);
//   - a rerun request: engine.RequestRerunOnce, keyed by the stream
//     record's sequence number;
//   - a job-log record: engine.ReportJob (completion, retries), once per
//     record;
//   - a run's step timer armed (its record inserted: a run started,
//     reopened, resumed): a Step Functions execution that takes the run's
//     steps (Executions, ExecutionStarter); a step timer moved or removed
//     is the running execution's own doing;
//   - everything else (the store's own runs, other timers, markers,
//     events): nothing.
//
// An item that cannot be what its key says (a sensor that is not an
// object, an unknown pipeline, a job-log key without a period) is
// reported once (SENSOR_REJECTED, JOB_REPORT_REJECTED, RERUN_REJECTED)
// and the record succeeds: it can never become valid, and a failed record
// would hold its stream shard back. Only a failure that may pass on retry
// (the store unreachable, throttled) fails the record, and only that
// record and those after it are delivered again (partial batch response):
// each decision is idempotent, so a redelivered record decides nothing
// twice.
type Router struct {
	Engine *engine.Engine
	Store  *ddbstore.Store
	Tables ddbstore.Tables
	Log    *slog.Logger
	// Executions starts the executions of armed step timers; nil: none
	// (a router without a state machine, in tests).
	Executions *ExecutionStarter
	// Meter counts the engine's events (RouterFromEnv watches the engine
	// with it); Metered(Meter, Handle) flushes it per invocation.
	Meter *Meter
}

// Handle is the Lambda handler for a batch of DynamoDB stream records.
func (rt *Router) Handle(ctx context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	return eachRecord(ctx, ev, rt.log(), rt.record), nil
}

// eachRecord hands a stream batch's records to handle in order and names
// each that failed for redelivery (partial batch response, by sequence
// number: what the platform expects); the others are done.
func eachRecord(ctx context.Context, ev events.DynamoDBEvent, log *slog.Logger, handle func(context.Context, events.DynamoDBEventRecord) error) events.DynamoDBEventResponse {
	var resp events.DynamoDBEventResponse
	for _, rec := range ev.Records {
		if err := handle(ctx, rec); err != nil {
			log.Error("stream record failed; it will be delivered again", "event_id", rec.EventID, "sequence", rec.Change.SequenceNumber, "err", err)
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: rec.Change.SequenceNumber})
		}
	}
	return resp
}

func (rt *Router) log() *slog.Logger { return loggerOr(rt.Log) }

// loggerOr is l, or the default logger when l is nil.
func loggerOr(l *slog.Logger) *slog.Logger {
	if l != nil {
		return l
	}
	return slog.Default()
}

// record handles one stream record; an error means "deliver it again".
func (rt *Router) record(ctx context.Context, rec events.DynamoDBEventRecord) error {
	role, ok := ddbstore.RoleOf(rt.Tables, rec.EventSourceArn)
	if !ok {
		return fmt.Errorf("record from %q, which is none of this deployment's tables (%s, %s)", rec.EventSourceArn, rt.Tables.Control, rt.Tables.JobLog)
	}
	item, err := ddbstore.DecodeLambda(role, rec)
	if err != nil {
		return rt.refused(ctx, role, err, imagePrint(rec))
	}
	switch it := item.(type) {
	case ddbstore.SensorItem:
		return rt.sensor(ctx, it)
	case ddbstore.ConfigItem:
		rt.Engine.ForgetConfig(it.PipelineID)
	case ddbstore.RerunRequest:
		return rt.rerun(ctx, it)
	case ddbstore.JobReport:
		return rt.jobReport(ctx, it)
	case ddbstore.TimerItem:
		if rt.Executions != nil {
			return rt.Executions.TimerRecord(ctx, rec.EventName, it)
		}
	}
	return nil
}

// sensor decides a sensor item from its current content: a record
// delivered late or twice, after newer content was decided, finds that
// content identical to what is stored and decides nothing.
//
// The inbox item is read with the decision's first facts, in one request
// (engine.PutSensorFromInbox).
func (rt *Router) sensor(ctx context.Context, it ddbstore.SensorItem) error {
	if it.Expired {
		// The inbox item's ttl passed: that is no one deleting the sensor.
		// The store's own sensor state expires by its ttl, set from its
		// last write (retention never deletes an acknowledged write
		// before retention has passed since it).
		return nil
	}
	if it.Removed {
		_, err := rt.Store.SensorItemGet(ctx, it.PipelineID, it.Key)
		var ie *ddbstore.ItemError
		switch {
		case errors.Is(err, store.ErrNotFound):
			if err := rt.Engine.DeleteSensor(ctx, it.PipelineID, it.Key); err != nil && !errors.Is(err, engine.ErrUnknownPipeline) {
				return err
			}
			return nil
		case err == nil || errors.As(err, &ie):
			return nil // written again since: that write's record follows
		}
		return err
	}
	data, _, err := rt.Engine.PutSensorFromInbox(ctx, it.PipelineID, it.Key)
	var ie *ddbstore.ItemError
	switch {
	case errors.Is(err, engine.ErrNoSensorItem):
		return nil // removed since: the removal's record follows
	case errors.As(err, &ie):
		return rt.refused(ctx, ddbstore.RoleControl, err, ie.Reason)
	}
	if errors.Is(err, engine.ErrUnknownPipeline) || errors.Is(err, engine.ErrInvalidSensor) {
		return rt.reject(ctx, event.SensorRejected, it.PipelineID, ddbstore.ItemName(it), err.Error(), it.Key+"\x00"+fingerprint(data))
	}
	return err
}

// rerun decides a rerun request once per request id (the writer's
// requestId, else the item's key and content: DynamoDB writes no stream
// record for a put that changes nothing, so a second request must differ —
// a new requestId or requestedAt).
func (rt *Router) rerun(ctx context.Context, it ddbstore.RerunRequest) error {
	res, err := rt.Engine.RequestRerunOnce(ctx, it.PipelineID, it.Period, it.Reason, it.ID)
	if errors.Is(err, engine.ErrUnknownPipeline) || errors.Is(err, engine.ErrInvalidRequest) {
		return rt.reject(ctx, event.RerunRejected, it.PipelineID, ddbstore.ItemName(it), err.Error(), "rerun\x00"+it.ID)
	}
	if err == nil && !res.Duplicate {
		rt.log().Info("rerun request decided", "pipeline", it.PipelineID, "period", res.Period, "accepted", res.Accepted, "reason", res.Reason)
	}
	return err
}

func (rt *Router) jobReport(ctx context.Context, it ddbstore.JobReport) error {
	id := it.ID
	res, err := rt.Engine.ReportJob(ctx, engine.JobLog{PipelineID: it.PipelineID, ScheduleID: it.ScheduleID, Period: it.Period, ID: id,
		Event: it.Event, Category: it.Category, Message: it.Message, JobRunID: it.RunID})
	if errors.Is(err, engine.ErrUnknownPipeline) || errors.Is(err, engine.ErrInvalidRequest) {
		return rt.reject(ctx, event.JobReportRejected, it.PipelineID, ddbstore.ItemName(it), err.Error(), "job\x00"+id)
	}
	if err == nil && !res.Applied {
		rt.log().Info("job-log record changed nothing", "pipeline", it.PipelineID, "period", it.Period, "event", it.Event, "why", res.Ignored)
	}
	return err
}

// refused reports an item Decode could not read; print identifies its
// content, so new content is reported anew.
func (rt *Router) refused(ctx context.Context, role ddbstore.Role, err error, print string) error {
	var ie *ddbstore.ItemError
	if !errors.As(err, &ie) {
		return err
	}
	typ := event.SensorRejected
	if role == ddbstore.RoleJobLog {
		typ = event.JobReportRejected
	}
	item := ie.PK + " / " + ie.SK
	return rt.reject(ctx, typ, ie.PipelineID, item, ie.Reason, item+"\x00"+print)
}

// imagePrint identifies a stream record's new image (the platform's JSON
// of it; map keys are sorted when marshalled).
func imagePrint(rec events.DynamoDBEventRecord) string {
	b, _ := json.Marshal(rec.Change.NewImage)
	return string(b)
}

func (rt *Router) reject(ctx context.Context, typ event.Type, pipelineID, item, reason, print string) error {
	reported, err := rt.Engine.Reject(ctx, engine.Rejection{Type: typ, PipelineID: pipelineID, Item: item, Reason: reason, Fingerprint: fingerprintOf(print)})
	if err == nil && reported {
		rt.log().Warn("item refused", "item", item, "reason", reason)
	}
	return err
}

// RouterFromEnv builds the stream-router from its environment:
// CONTROL_TABLE, JOBLOG_TABLE, RERUN_TABLE and EVENTS_TABLE (required; the
// engine's store spans the four), STATE_MACHINE_ARN (required: the runs'
// executions) and EVENTS_TTL_DAYS. Its engine is
// passive — it runs no timers and leaves calls in flight to whoever makes
// them — and its clock is the system's.
func RouterFromEnv(ctx context.Context, env Env) (*Router, error) {
	const fn = FnStreamRouter
	cfg, err := setUpTables(ctx, env, fn, EnvStateMachineARN)
	if err != nil {
		return nil, err
	}
	eng, st, err := passiveEngine(ctx, cfg, env, fn)
	if err != nil {
		return nil, err
	}
	log := Logger()
	meter := watchedMeter(env, fn, eng, log)
	return &Router{Engine: eng, Store: st, Tables: env.Tables(), Log: log,
		Executions: NewExecutionStarter(cfg, env.Get(EnvStateMachineARN), st, log), Meter: meter}, nil
}

// noJobs is the job system of the functions that make no job calls: the
// orchestrator takes the steps that call job systems.
type noJobs = trigger.NoJobs
