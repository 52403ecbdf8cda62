package awsrt

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
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
// pause). A step timer moved by a step (a MODIFY record) is the running
// execution's next step, already in its hands; a removed one ends it.
//
// An execution is named from the run's key, its generation and the
// instant the timer was armed for (ExecutionName), so a record delivered
// twice starts nothing twice: Step Functions itself refuses a second
// execution of the same name (ExecutionAlreadyExists, taken as started).
type ExecutionStarter struct {
	Client          StartExecutionAPI
	StateMachineARN string
	Store           store.Store // the run's generation
	Log             *slog.Logger
}

// TimerRecord starts the execution an armed step timer calls for
// (eventName is the stream record's: INSERT, MODIFY, REMOVE); other timer
// records start nothing.
func (s *ExecutionStarter) TimerRecord(ctx context.Context, eventName string, it ddbstore.TimerItem) error {
	if it.Removed || eventName != "INSERT" || !run.IsStep(it.Timer.Kind) {
		return nil
	}
	t := it.Timer
	r, err := s.Store.RunGet(ctx, t.Run)
	if errors.Is(err, store.ErrNotFound) {
		return nil // the run is gone: its step is dropped when taken, nothing to run
	}
	if err != nil {
		return err
	}
	input, err := json.Marshal(OutputOf(engine.StepResult{Run: t.Run, Next: run.Step(t.Kind), NextAt: t.DueAt}))
	if err != nil {
		return err
	}
	name := ExecutionName(t.Run, r.Generation, t.DueAt)
	_, err = s.Client.StartExecution(ctx, &sfn.StartExecutionInput{StateMachineArn: aws.String(s.StateMachineARN), Name: aws.String(name), Input: aws.String(string(input))})
	var exists *sfntypes.ExecutionAlreadyExists
	switch {
	case errors.As(err, &exists):
		return nil // started before: this record delivered again
	case err != nil:
		return fmt.Errorf("start the execution %s: %w", name, err)
	}
	s.log().Info("execution started", "name", name, "pipeline", t.Run.PipelineID, "period", t.Run.Period, "step", t.Kind, "due", t.DueAt)
	return nil
}

func (s *ExecutionStarter) log() *slog.Logger {
	if s.Log != nil {
		return s.Log
	}
	return slog.Default()
}

// maxExecutionName is Step Functions' limit on an execution's name.
const maxExecutionName = 80

// ExecutionName is the execution of a run's generation whose steps start
// at armedAt: Step Functions' names are 1 to 80 of [A-Za-z0-9-_], so the
// readable part — pipeline, schedule, period, "g" and the generation, each
// character outside the set made '_' — is cut to 63 and followed by '-'
// and 16 hex digits of the SHA-256 of the exact key, generation and
// instant: two runs never share a name through a cut or a replaced
// character, and a run resumed or reopened gets a new one.
func ExecutionName(key run.Key, generation int, armedAt time.Time) string {
	readable := key.PipelineID + "-" + key.ScheduleID + "-" + key.Period + "-g" + strconv.Itoa(generation)
	var b strings.Builder
	for _, r := range readable {
		if r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	h := sha256.New()
	for _, part := range []string{key.PipelineID, key.ScheduleID, key.Period, strconv.Itoa(generation), strconv.FormatInt(armedAt.UnixNano(), 10)} {
		h.Write([]byte(part))
		h.Write([]byte{0})
	}
	sum := hex.EncodeToString(h.Sum(nil))[:16]
	prefix := b.String()
	if len(prefix) > maxExecutionName-17 {
		prefix = prefix[:maxExecutionName-17]
	}
	return prefix + "-" + sum
}

// NewExecutionStarter is the starter of the state machine arn, through
// the SDK configuration cfg.
func NewExecutionStarter(cfg aws.Config, arn string, st store.Store, log *slog.Logger) *ExecutionStarter {
	return &ExecutionStarter{Client: sfn.NewFromConfig(cfg), StateMachineARN: arn, Store: st, Log: log}
}
