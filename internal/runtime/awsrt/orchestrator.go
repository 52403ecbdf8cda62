package awsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// The orchestrator's modes: the engine's step entry points, one per Task
// state of the state machine (deploy/statemachine.asl.json).
const (
	ModeEvaluate = string(run.StepEvaluate) // engine.Evaluate
	ModeTrigger  = string(run.StepTrigger)  // TriggerBegin → TriggerCall → TriggerRecord
	ModePoll     = string(run.StepPoll)     // Poll → PollRecord
	// ModeContinue is not a step: the execution is about to pass one of
	// Step Functions' limits (ContinueAsNew), and the orchestrator starts
	// its successor, which takes the run's steps from the current one.
	ModeContinue = "continue"
)

// StepInput is what a Task state sends the orchestrator: the step to take
// (Mode), the run, and the due time of the run's step timer as the
// previous step (or the execution's input) returned it.
type StepInput struct {
	Mode string `json:"mode"`
	// StepRef is the run, the NextAt the step was announced with (Due:
	// the condition that makes a repeated or stale invocation commit
	// nothing) and the stamp the execution holds the run by (Since, the
	// step timer's when the execution was started: an execution the run
	// was handed away from since is superseded, and its step answers
	// done). Its fields encode inline: "run", "due", "since".
	engine.StepRef
	// Steps is how many steps the execution has taken, Started when it
	// started ($$.Execution.StartTime) and LimitSeconds its
	// TimeoutSeconds: what ContinueAsNew judges.
	Steps        int       `json:"steps,omitempty"`
	Started      time.Time `json:"started,omitzero"`
	LimitSeconds int       `json:"limitSeconds,omitempty"`
}

// StepOutput is what the orchestrator returns: the engine's StepResult,
// with NextAt as RFC 3339 in UTC (what a Wait state's TimestampPath
// takes) and Done, which the Choice states test: the run has no next
// step (terminal, held by a pause, gone), so the execution ends.
//
// Since, Steps and Continue are the execution's own bookkeeping: the
// stamp it holds the run by, the steps it has taken, and whether it
// continues as a new execution before its next Wait (ContinueAsNew). All
// are always present: the state machine's paths read them.
type StepOutput struct {
	Run      run.Key `json:"run"`
	Next     string  `json:"next"`
	NextAt   string  `json:"nextAt,omitempty"`
	Acted    bool    `json:"acted"`
	Done     bool    `json:"done"`
	Since    string  `json:"since"`
	Steps    int     `json:"steps"`
	Continue bool    `json:"continue"`
}

// OutputOf is the StepOutput of an engine StepResult. NextAt is the step's
// due time as run.Announced gives it — rounded up to the whole second —
// because Step Functions truncates a Wait's timestamp to the second: the
// Task then never arrives before its step is due (run.TimerDue takes the
// announced instant for the due time it stands for).
func OutputOf(r engine.StepResult) StepOutput {
	out := StepOutput{Run: r.Run, Next: string(r.Next), Acted: r.Acted, Done: r.Next == run.StepNone || r.Superseded,
		Since: r.Since.UTC().Format(time.RFC3339Nano)}
	if !out.Done {
		out.NextAt = run.Announced(r.NextAt).UTC().Format(time.RFC3339)
	}
	return out
}

// The orchestrator's errors, as Lambda reports them (errorType is the Go
// type's name) and the state machine's Retry and Catch match them.
//
// InputError: the input is not a step the orchestrator knows (a bad mode,
// an incomplete run key, not JSON). It can never pass, so the state
// machine does not retry it: the execution fails (InfraFailure), and the
// run's step timer, which nothing moved, is what the watchdog finds.
type InputError struct{ Reason string }

func (e *InputError) Error() string { return "orchestrator: bad input: " + e.Reason }

// StepError: the step failed on the way (the store unreachable or
// throttled past the store's own retries, the invocation's deadline). The
// state machine retries it, with the same input: every step commits on the
// conditions of what it read — the step timer's kind and due time — so an
// invocation repeated after a commit it did not report finds the timer
// moved, commits nothing and returns the run's current next step. That
// holds for the trigger mode too: its TriggerBegin commits the call as in
// flight (the step timer moves to the end of the call's lease) before the
// job call is made, so a repeated invocation never makes the call again;
// a call whose answer was lost is settled by the crash rules at the
// lease's end (the lookup, or TRIGGER_OUTCOME_UNKNOWN).
type StepError struct {
	Mode string
	Err  error
}

func (e *StepError) Error() string { return "orchestrator: " + e.Mode + " step: " + e.Err.Error() }
func (e *StepError) Unwrap() error { return e.Err }

// RetryableErrors are the errors the state machine's Task states retry
// (deploy/statemachine.asl.json; a test checks they agree): StepError;
// Lambda's own service errors, raised before or instead of the handler's
// run; and an invocation that died or hit the function's timeout
// (Lambda.Unknown, Sandbox.Timedout) — a trigger invocation stopped
// during its job call included: its TriggerBegin had committed, so the
// repeat makes no call, and the call's outcome is established at the end
// of its lease — and the Task's own timeout (States.Timeout): each Task
// state times out before the orchestrator's Lambda does
// (${task_timeout_seconds}, the function's timeout less 30 s), so a long
// job call is never cut by the Lambda's timeout: the invocation goes on
// and records the call's answer, and the retried Task finds the step
// taken (the trigger step moved to the end of the call's lease) and waits
// for that. All repeat safely for the reason StepError does. An
// InputError is not retried.
var RetryableErrors = []string{
	"StepError",
	"Lambda.ServiceException",
	"Lambda.AWSLambdaException",
	"Lambda.SdkClientException",
	"Lambda.TooManyRequestsException",
	"Lambda.Unknown",
	"Sandbox.Timedout",
	"States.Timeout",
}

// Orchestrator is the orchestrator Lambda: it takes one step of a run
// through the engine's step entry points and returns the run's next step.
// It decides nothing itself — what follows a step, and when, is the
// engine's answer, on which the state machine's Choice and Wait states
// route.
type Orchestrator struct {
	Engine *engine.Engine
	Log    *slog.Logger
	// Executions starts an execution's successor (ModeContinue); nil: an
	// execution never continues as new (an orchestrator without a state
	// machine, in tests).
	Executions *ExecutionStarter
	// Meter counts the engine's events (OrchestratorFromEnv watches the
	// engine with it); Metered(Meter, Handle) flushes it per invocation.
	Meter *Meter
}

// Handle is the Lambda handler.
func (o *Orchestrator) Handle(ctx context.Context, payload json.RawMessage) (StepOutput, error) {
	in, err := DecodeStepInput(payload)
	if err != nil {
		return StepOutput{}, err
	}
	if in.Mode == ModeContinue {
		if err := o.continueAsNew(ctx, in); err != nil {
			o.log().Error("starting the successor failed; the state machine retries it", "pipeline", in.Run.PipelineID, "schedule", in.Run.ScheduleID, "period", in.Run.Period, "err", err)
			return StepOutput{}, &StepError{Mode: in.Mode, Err: err}
		}
		return StepOutput{Run: in.Run, Done: true, Since: in.Since.UTC().Format(time.RFC3339Nano), Steps: in.Steps}, nil
	}
	res, err := o.Step(ctx, in)
	if err != nil {
		o.log().Error("step failed; the state machine retries it", "mode", in.Mode, "pipeline", in.Run.PipelineID, "schedule", in.Run.ScheduleID, "period", in.Run.Period, "err", err)
		return StepOutput{}, &StepError{Mode: in.Mode, Err: err}
	}
	// The run may have been handed to another execution while this step
	// ran (a job call outlasting its lease, then resumed by the
	// watchdog): the step is recorded, and this execution ends.
	res.Superseded = res.Superseded || run.Superseded(in.Since, run.StepStamp{Since: res.Since})
	if res.Superseded {
		o.log().Info("the run was handed to another execution; this one ends", "pipeline", in.Run.PipelineID, "period", in.Run.Period, "since", in.Since)
	}
	out := OutputOf(res)
	out.Steps = in.Steps + 1
	out.Continue = !out.Done && o.Executions != nil && ContinueAsNew(out.Steps, in.Started, run.Announced(res.NextAt), time.Duration(in.LimitSeconds)*time.Second)
	return out, nil
}

// continueAsNew starts the successor of the execution in belongs to: an
// execution that takes the run's steps from its current one, holding the
// run by the same stamp; the Task retried, or the stream-router's start
// for the same step, starts nothing twice (the name). A run that has no
// next step, or was handed to another execution since, starts nothing.
func (o *Orchestrator) continueAsNew(ctx context.Context, in StepInput) error {
	if o.Executions == nil {
		return errors.New("this orchestrator has no state machine to continue in")
	}
	cur, err := o.Engine.Current(ctx, in.Run)
	if err != nil {
		return err
	}
	if cur.Next == run.StepNone || run.Superseded(in.Since, run.StepStamp{Since: cur.Since}) {
		return nil
	}
	return o.Executions.Start(ctx, cur, viaContinue)
}

// DecodeStepInput reads a Task's input; anything but a complete step is
// an *InputError.
func DecodeStepInput(payload []byte) (StepInput, error) {
	var in StepInput
	if err := json.Unmarshal(payload, &in); err != nil {
		return StepInput{}, &InputError{Reason: err.Error()}
	}
	switch in.Mode {
	case ModeEvaluate, ModeTrigger, ModePoll, ModeContinue:
	default:
		return StepInput{}, &InputError{Reason: fmt.Sprintf("mode %q is none of %s, %s, %s, %s", in.Mode, ModeEvaluate, ModeTrigger, ModePoll, ModeContinue)}
	}
	if in.Run.PipelineID == "" || in.Run.ScheduleID == "" || in.Run.Period == "" {
		return StepInput{}, &InputError{Reason: fmt.Sprintf("run %+v: a run needs its pipeline, schedule and period", in.Run)}
	}
	return in, nil
}

// Step takes the step in.Mode of the run: the engine's entry points in
// the order ProcessTimer sequences them, in one invocation. The trigger
// mode makes the job call and records its answer in the same invocation,
// so the state machine never holds a call's answer, and never re-sends a
// call on its own.
func (o *Orchestrator) Step(ctx context.Context, in StepInput) (engine.StepResult, error) {
	ref := in.StepRef
	switch in.Mode {
	case ModeEvaluate:
		return o.Engine.Evaluate(ctx, ref)
	case ModeTrigger:
		res, call, err := o.Engine.TriggerBegin(ctx, ref)
		if err != nil || call == nil {
			return res, err
		}
		return o.Engine.MakeCallBy(ctx, *call, CallDeadline(ctx))
	case ModePoll:
		res, polled, err := o.Engine.Poll(ctx, ref)
		if err != nil || polled == nil {
			return res, err
		}
		return o.Engine.PollRecord(ctx, *polled)
	}
	return engine.StepResult{}, &InputError{Reason: fmt.Sprintf("mode %q", in.Mode)}
}

// RecordMargin is the time an orchestrator invocation keeps, after its
// job call, to record the call's answer: the call is bounded by the
// invocation's deadline less this (CallDeadline), and `interlock
// deploy-config` refuses a pipeline whose job call may need longer than
// the orchestrator's timeout less this.
const RecordMargin = 15 * time.Second

// CallDeadline is the bound of a job call made in an invocation whose
// context is ctx: the invocation's deadline (Lambda's) less RecordMargin;
// zero when ctx has no deadline.
func CallDeadline(ctx context.Context) time.Time {
	d, ok := ctx.Deadline()
	if !ok {
		return time.Time{}
	}
	return d.Add(-RecordMargin)
}

func (o *Orchestrator) log() *slog.Logger {
	if o.Log != nil {
		return o.Log
	}
	return slog.Default()
}

// The orchestrator's own optional variables: what interlock.yaml's
// triggers.allowAddresses and server.envAllow say for `serve`.
const (
	// EnvTriggerAllowAddresses lists, comma-separated, the networks (and
	// ports) HTTP-family jobs may reach despite the SSRF guard: IP,
	// IP:PORT, CIDR or CIDR:PORT, as triggers.allowAddresses.
	EnvTriggerAllowAddresses = "TRIGGER_ALLOW_ADDRESSES"
	// EnvEnvAllow lists, comma-separated, the environment variables job
	// templates may read (${env:NAME}), as server.envAllow.
	EnvEnvAllow = "ENV_ALLOW"
)

// OrchestratorFromEnv builds the orchestrator from its environment: the
// four tables (required) and EVENTS_TTL_DAYS, as every function's store;
// STATE_MACHINE_ARN (required: an execution's successor is started in it);
// the job runners are the local runtime's (app.Jobs), reading their
// secrets from the environment and files as `interlock serve` does, with
// TRIGGER_ALLOW_ADDRESSES and ENV_ALLOW (optional) as interlock.yaml's
// triggers.allowAddresses and server.envAllow, and the job secrets of
// SECRETS_FROM (optional) among the variables they read.
//
// Its engine makes job calls but is opened passive: a cold start must not
// take the calls other invocations have in flight for interrupted (what
// an engine does at its start when it is the only process making calls).
// A call whose invocation died is settled by the crash rules at the end
// of its lease, when the run's trigger step comes due again.
func OrchestratorFromEnv(ctx context.Context, env Env) (*Orchestrator, error) {
	const fn = FnOrchestrator
	// The job secrets (SECRETS_FROM), read once per cold start.
	cfg, st, env, err := openWithSecrets(ctx, env, fn, EnvStateMachineARN)
	if err != nil {
		return nil, err
	}
	log := Logger()
	o, err := NewOrchestrator(ctx, st, clock.Real{}, env, log)
	if err != nil {
		return nil, err
	}
	o.Executions = NewExecutionStarter(cfg, env.Get(EnvStateMachineARN), st, log)
	o.Meter = watchedMeter(env, fn, o.Engine, log)
	return o, nil
}

// NewOrchestrator is the orchestrator on st and clk, its job runners
// configured by env (OrchestratorFromEnv).
func NewOrchestrator(ctx context.Context, st store.Store, clk clock.Clock, env Env, log *slog.Logger) (*Orchestrator, error) {
	const fn = FnOrchestrator
	var allow []pipeline.AllowAddress
	for _, s := range listVar(env.Get(EnvTriggerAllowAddresses)) {
		a, err := pipeline.ParseAllowAddress(s)
		if err != nil {
			return nil, fmt.Errorf("%s: %s: %w", fn, EnvTriggerAllowAddresses, err)
		}
		allow = append(allow, a)
	}
	lookup := app.Secrets(env.lookupFunc())
	traced, tracer := app.Traced(st, pipeline.StoreDynamoDB)
	eng := engine.New(engine.Options{Store: traced, Clock: clk, Jobs: app.Jobs(lookup, allow), Logger: log, LookupEnv: lookup,
		EnvAllow: listVar(env.Get(EnvEnvAllow)), Passive: true, Tracer: tracer})
	if err := eng.Open(ctx); err != nil {
		return nil, fmt.Errorf("%s: %w", fn, err)
	}
	return &Orchestrator{Engine: eng, Log: log}, nil
}

// listVar splits a comma-separated variable, dropping blank entries.
func listVar(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// lookupFunc is the environment's lookup function.
func (e Env) lookupFunc() func(string) (string, bool) {
	if e.Lookup != nil {
		return e.Lookup
	}
	return os.LookupEnv
}
