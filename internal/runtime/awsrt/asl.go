package awsrt

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"
)

// ASLVars are the substitutions of the state machine's template,
// deploy/statemachine.asl.json, which Terraform renders with
// templatefile(): the names it uses are ASLVariables.
type ASLVars struct {
	OrchestratorARN    string // ${orchestrator_arn}
	TimeoutSeconds     int    // ${sfn_timeout_seconds}: the execution's global TimeoutSeconds
	TriggerMaxAttempts int    // ${trigger_max_attempts}: retries of a failed trigger invocation
	// TaskTimeoutSeconds is ${task_timeout_seconds}: every Task state's
	// TimeoutSeconds, below the orchestrator's Lambda timeout (Terraform
	// passes orchestrator_timeout_seconds − 30), so the Task times out —
	// and is retried (States.Timeout is in RetryableErrors) — while the
	// invocation goes on to record its job call's answer. Zero:
	// DefaultTaskTimeoutSeconds.
	TaskTimeoutSeconds int
}

// DefaultOrchestratorTimeout is the orchestrator Lambda's timeout the
// module sets unless told otherwise (orchestrator_timeout_seconds), and
// `interlock deploy-config --orchestrator-timeout`'s default.
const DefaultOrchestratorTimeout = 5 * time.Minute

// TaskTimeoutMargin is how much sooner than the orchestrator's Lambda a
// Task state times out.
const TaskTimeoutMargin = 30 * time.Second

// DefaultTaskTimeoutSeconds is the Task states' timeout for the default
// orchestrator timeout.
var DefaultTaskTimeoutSeconds = int((DefaultOrchestratorTimeout - TaskTimeoutMargin) / time.Second)

// ASLVariables are the template variables of the state machine, as
// Terraform must pass them.
var ASLVariables = []string{"orchestrator_arn", "sfn_timeout_seconds", "trigger_max_attempts", "task_timeout_seconds"}

var templateVar = regexp.MustCompile(`\$\{([^}]*)\}`)

// RenderASL renders the state machine's template as templatefile() does
// for these variables, and checks that the result is JSON. A
// variable the template uses that is none of ASLVariables is an error (as
// it is for Terraform).
func RenderASL(template []byte, v ASLVars) ([]byte, error) {
	if v.TaskTimeoutSeconds == 0 {
		v.TaskTimeoutSeconds = DefaultTaskTimeoutSeconds
	}
	if v.OrchestratorARN == "" || v.TimeoutSeconds <= 0 || v.TriggerMaxAttempts < 0 || v.TaskTimeoutSeconds < 0 {
		return nil, fmt.Errorf("asl: the orchestrator's ARN, a positive timeout, a non-negative number of trigger attempts and a positive Task timeout are required (%+v)", v)
	}
	arn, err := json.Marshal(v.OrchestratorARN)
	if err != nil {
		return nil, err
	}
	values := map[string]string{
		"orchestrator_arn":     string(arn[1 : len(arn)-1]), // inside the template's quotes
		"sfn_timeout_seconds":  strconv.Itoa(v.TimeoutSeconds),
		"trigger_max_attempts": strconv.Itoa(v.TriggerMaxAttempts),
		"task_timeout_seconds": strconv.Itoa(v.TaskTimeoutSeconds),
	}
	var unknown []string
	out := templateVar.ReplaceAllFunc(template, func(m []byte) []byte {
		name := string(templateVar.FindSubmatch(m)[1])
		val, ok := values[name]
		if !ok {
			unknown = append(unknown, name)
			return m
		}
		return []byte(val)
	})
	if len(unknown) > 0 {
		return nil, fmt.Errorf("asl: the template uses variables nobody passes: %q", unknown)
	}
	if !json.Valid(out) {
		return nil, fmt.Errorf("asl: the rendered state machine is not JSON")
	}
	return out, nil
}
