package awsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	sfntypes "github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
)

// EnvStateMachineARN names the state machine the stream-router starts
// runs' executions of (deploy/statemachine.asl.json).
const EnvStateMachineARN = "STATE_MACHINE_ARN"

// StartExecutionAPI is the Step Functions call the starter makes.
type StartExecutionAPI interface {
	StartExecution(ctx context.Context, in *sfn.StartExecutionInput, opts ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
}

// ExecutionStarter starts a Step Functions execution for each stretch of
// a run's steps: when a run's step timer is armed — its record inserted in
// the control table (a run started, reopened by a rerun, resumed after a
// pause) — or handed off — a MODIFY record whose stamp says Handoff
// (run.StampStep: a commit outside a step moved the step earlier than the
// running execution waits for; the watchdog resumed an orphaned step). A
// step timer moved by a step otherwise (a MODIFY record) is the running
// execution's next step, already in its hands; a removed one ends it. The
// execution handed away from ends at its next step (superseded), without
// taking it.
//
// An execution is named from the run's key, its generation and the
// instant the timer was armed or handed off for (ExecutionName), so a
// record delivered twice — or a handoff the watchdog starts itself and the
// router starts again from its record — starts nothing twice: Step
// Functions itself refuses a second execution of the same name
// (ExecutionAlreadyExists, taken as started).
type ExecutionStarter struct {
	Client          StartExecutionAPI
	StateMachineARN string
	Store           store.Store // the run's generation
	Log             *slog.Logger
}

// TimerRecord starts the execution an armed or handed-off step timer
// calls for (eventName is the stream record's: INSERT, MODIFY, REMOVE);
// other timer records start nothing.
func (s *ExecutionStarter) TimerRecord(ctx context.Context, eventName string, it ddbstore.TimerItem) error {
	if it.Removed || !run.IsStep(it.Timer.Kind) {
		return nil
	}
	if eventName != "INSERT" && !(eventName == "MODIFY" && run.StampOf(it.Timer.Detail).Handoff) {
		return nil
	}
	return s.Start(ctx, engine.TimerStep(it.Timer), viaTimer)
}

// How an execution came to be started: part of its name, so that the
// successor of an execution continued as new is never taken for the one
// a timer record starts for the same step.
const (
	viaTimer    = ""         // a step timer armed or handed off (stream-router, watchdog)
	viaContinue = "continue" // an execution continued as new (the orchestrator)
)

// Start starts the execution that takes the run's steps from step, named
// for the run's generation, the step's due time and via; an execution of
// that name started before (a record delivered again) is taken as
// started, and a run that is gone starts nothing.
func (s *ExecutionStarter) Start(ctx context.Context, step engine.StepResult, via string) error {
	if step.Next == run.StepNone {
		return nil
	}
	r, err := s.Store.RunGet(ctx, step.Run)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the run is gone: its step is dropped when taken, nothing to run
	}
	if err != nil {
		return err
	}
	step.Acted = false
	input, err := json.Marshal(OutputOf(step))
	if err != nil {
		return err
	}
	name := executionName(step.Run, r.Generation, step.NextAt, via)
	_, err = s.Client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(s.StateMachineARN), Name: aws.String(name), Input: aws.String(string(input))})
	var exists *sfntypes.ExecutionAlreadyExists
	switch {
	case errors.As(err, &exists):
		return nil // started before: this record delivered again
	case err != nil:
		return fmt.Errorf("start the execution %s: %w", name, err)
	}
	s.log().Info("execution started", "name", name, "pipeline", step.Run.PipelineID, "period", step.Run.Period, "step", step.Next, "due", step.NextAt, "via", via)
	return nil
}

func (s *ExecutionStarter) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// NewExecutionStarter is the starter of the state machine arn, through
// the SDK configuration cfg.
func NewExecutionStarter(cfg aws.Config, arn string, st store.Store, log *slog.Logger) *ExecutionStarter {
	return &ExecutionStarter{Client: sfn.NewFromConfig(cfg), StateMachineARN: arn, Store: st, Log: log}
}

// MaxExecutionSteps bounds the steps one execution takes before it
// continues as new: a step is about 9 history events (Wait, Task and
// Choice, entered and exited; the Lambda's scheduled, started and
// succeeded), and its retries a few more each, so 1,000 steps stay well
// inside Step Functions' 25,000 events of history.
const MaxExecutionSteps = 1000

// maxStepAllowance bounds the time ContinueAsNew keeps, before an
// execution's TimeoutSeconds, for its next step's Task and retries after
// the Wait.
const maxStepAllowance = time.Hour

// ContinueAsNew decides whether an execution that has taken steps steps,
// started at started under a TimeoutSeconds of limit, continues as a new
// execution instead of waiting for its next step at nextAt: when its
// history would pass MaxExecutionSteps, or the Wait and the step after it
// (a quarter of the limit, at most maxStepAllowance) would pass its
// timeout. An execution takes one step at least before it is asked, so a
// run always moves. Zero started or limit: no time bound (the input did
// not carry them).
func ContinueAsNew(steps int, started, nextAt time.Time, limit time.Duration) bool {
	if steps >= MaxExecutionSteps {
		return true
	}
	if started.IsZero() || limit <= 0 {
		return false
	}
	return nextAt.Add(min(limit/4, maxStepAllowance)).After(started.Add(limit))
}
