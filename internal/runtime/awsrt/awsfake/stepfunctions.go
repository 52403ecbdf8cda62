package awsfake

import (
	"context"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
)

// StepFunctions is a fake of Step Functions' StartExecution (AWS JSON 1.0,
// target AWSStepFunctions.StartExecution): state machines a test
// registers, executions by name as Step Functions keeps them — a name is
// 1 to 80 of [A-Za-z0-9-_], unique per state machine; a start with the
// name of a running execution and the same input returns that execution
// (StartExecution is idempotent so), any other reuse of a name is
// ExecutionAlreadyExists. It runs nothing: a test reads the executions
// started (Executions) and runs them where it wants.
type StepFunctions struct {
	*httptest.Server

	mu       sync.Mutex
	machines map[string]bool       // by ARN
	byName   map[string]*Execution // by state machine ARN + "/" + name
	started  []Execution
	fail     map[string]int // code → how many next calls fail with it
	onStart  func(Execution)
}

// Execution is an execution the fake started.
type Execution struct {
	StateMachineARN, Name, ARN, Input string
	Closed                            bool // it ended (Finish): its name is refused from then on
}

// NewStepFunctions starts a fake with no state machine; it is closed when
// the test ends.
func NewStepFunctions(t testing.TB) *StepFunctions {
	f := &StepFunctions{machines: map[string]bool{}, byName: map[string]*Execution{}, fail: map[string]int{}}
	f.Server = httptest.NewServer(jsonService{version: "1.0", prefix: "AWSStepFunctions", ops: map[string]func(context.Context, []byte) (any, *apiError){
		"StartExecution": f.startExecution,
	}})
	t.Cleanup(f.Close)
	return f
}

// AddStateMachine registers a state machine and returns its ARN.
func (f *StepFunctions) AddStateMachine(name string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	arn := "arn:aws:states:" + Region + ":" + Account + ":stateMachine:" + name
	f.machines[arn] = true
	return arn
}

// FailNext makes the next n StartExecution calls fail with code (a 400,
// or a 500 for ServiceUnavailable and InternalFailure, which the SDK
// retries).
func (f *StepFunctions) FailNext(code string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail[code] += n
}

// Executions returns the executions started, in order (a repeated start
// of a running execution is not a new one).
func (f *StepFunctions) Executions() []Execution {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]Execution(nil), f.started...)
}

// OnStart makes fn hear of each execution started (after the fake
// answered StartExecution, outside its lock): a test runs it there, as
// Step Functions would.
func (f *StepFunctions) OnStart(fn func(Execution)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.onStart = fn
}

// End ends the execution arn (it reached its Done or Fail state): its name
// is refused from then on.
func (f *StepFunctions) End(arn string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ex := range f.byName {
		if ex.ARN == arn {
			ex.Closed = true
		}
	}
}

// Finish ends every execution started so far (as if each had reached its
// Done or Fail state).
func (f *StepFunctions) Finish() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, ex := range f.byName {
		ex.Closed = true
	}
}

var executionName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,80}$`)

func (f *StepFunctions) startExecution(ctx context.Context, body []byte) (any, *apiError) {
	var in struct {
		StateMachineArn string `json:"stateMachineArn"`
		Name            string `json:"name"`
		Input           string `json:"input"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	f.mu.Lock()
	locked := true
	defer func() {
		if locked {
			f.mu.Unlock()
		}
	}()
	for code, n := range f.fail {
		if n > 0 {
			f.fail[code]--
			status := 400
			if code == "ServiceUnavailable" || code == "InternalFailure" {
				status = 500
			}
			return nil, &apiError{status: status, code: code, msg: "injected"}
		}
	}
	switch {
	case !f.machines[in.StateMachineArn]:
		return nil, &apiError{code: "StateMachineDoesNotExist", msg: "State Machine Does Not Exist: '" + in.StateMachineArn + "'"}
	case !executionName.MatchString(in.Name):
		return nil, &apiError{code: "InvalidName", msg: "Invalid Name: '" + in.Name + "'"}
	case len(in.Input) > 256*1024:
		return nil, &apiError{code: "InvalidExecutionInput", msg: "input over 256 KiB"}
	}
	id := in.StateMachineArn + "/" + in.Name
	if ex, ok := f.byName[id]; ok {
		if ex.Input == in.Input && !ex.Closed {
			return map[string]any{"executionArn": ex.ARN, "startDate": 1.7e9}, nil
		}
		return nil, &apiError{code: "ExecutionAlreadyExists", msg: "Execution Already Exists: '" + ex.ARN + "'"}
	}
	ex := Execution{StateMachineARN: in.StateMachineArn, Name: in.Name, Input: in.Input,
		ARN: "arn:aws:states:" + Region + ":" + Account + ":execution:" + in.StateMachineArn[len("arn:aws:states:"+Region+":"+Account+":stateMachine:"):] + ":" + in.Name}
	f.byName[id] = &ex
	f.started = append(f.started, ex)
	onStart := f.onStart
	f.mu.Unlock()
	locked = false
	if onStart != nil {
		onStart(ex)
	}
	return map[string]any{"executionArn": ex.ARN, "startDate": 1.7e9}, nil
}
