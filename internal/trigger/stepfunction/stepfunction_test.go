package stepfunction

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/awsjob"
	"github.com/interlockhq/interlock/internal/trigger/awsjob/awstest"
	"github.com/interlockhq/interlock/internal/trigger/triggertest"
)

func TestMain(m *testing.M) {
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	os.Unsetenv("AWS_ENDPOINT_URL")
	os.Unsetenv("AWS_ENDPOINT_URL_SFN")
	os.Unsetenv("AWS_PROFILE")
	os.Exit(m.Run())
}

const (
	machine     = "arn:aws:states:us-west-2:123456789012:stateMachine:gold"
	machineRegn = "us-west-2"
)

// fakeSFN speaks Step Functions' awsJson 1.0 protocol for StartExecution
// and DescribeExecution on one standard state machine, with the real
// naming rules: a name is unique per state machine; the same name and
// input while the execution runs returns it; a name that is taken
// otherwise (ended, or another input) is ExecutionAlreadyExists.
type fakeSFN struct {
	*awstest.Server
	modes awstest.Modes

	mu    sync.Mutex
	execs map[string]*execution // by name
	state string                // overrides the status the modes give
	lose  bool                  // start the execution, then answer 500
}

type execution struct{ name, input string }

var faults = awstest.Faults{
	Throttled:   awstest.Error(400, "ThrottlingException", "Rate exceeded"),
	ServerError: awstest.Error(500, "InternalFailure", "Internal failure"),
	Rejected:    awstest.Error(400, "StateMachineDoesNotExist", "State Machine Does Not Exist: '"+machine+"'"),
}

var statuses = map[triggertest.Mode]string{
	triggertest.JobRunning:   "RUNNING",
	triggertest.JobSucceeded: "SUCCEEDED",
	triggertest.JobFailed:    "FAILED",
	triggertest.JobTimedOut:  "TIMED_OUT",
}

func newFake(t *testing.T) *fakeSFN {
	f := &fakeSFN{execs: map[string]*execution{}}
	f.Server = awstest.NewRPC(t, "1.0", "AWSStepFunctions", "states", f.handle)
	return f
}

func execARN(name string) string {
	return "arn:aws:states:us-west-2:123456789012:execution:gold:" + name
}

// validName is Step Functions' rule for execution names.
func validName(n string) bool {
	if n == "" || len(n) > 80 {
		return false
	}
	for _, r := range n {
		if r <= ' ' || r == 0x7f || strings.ContainsRune("<>{}[]?*\"#%\\^|~`$&,;:/", r) {
			return false
		}
	}
	return true
}

func (f *fakeSFN) handle(op string, body []byte) awstest.Reply {
	start, status := f.modes.Get()
	f.mu.Lock()
	defer f.mu.Unlock()
	// Every execution is in the same state: the one the modes give, or
	// the override.
	current := statuses[status]
	if f.state != "" {
		current = f.state
	}
	switch op {
	case "StartExecution":
		var in struct{ StateMachineArn, Name, Input string }
		if err := json.Unmarshal(body, &in); err != nil {
			return awstest.Error(400, "SerializationException", err.Error())
		}
		if rep, fault := faults.For(start, body); fault {
			return rep
		}
		if in.StateMachineArn != machine {
			return awstest.Error(400, "StateMachineDoesNotExist", "State Machine Does Not Exist: '"+in.StateMachineArn+"'")
		}
		if !validName(in.Name) {
			return awstest.Error(400, "InvalidName", "Invalid Name: '"+in.Name+"'")
		}
		if !json.Valid([]byte(in.Input)) {
			return awstest.Error(400, "InvalidExecutionInput", "Invalid State Machine Execution Input")
		}
		if e, taken := f.execs[in.Name]; taken {
			if e.input == in.Input && current == "RUNNING" {
				return awstest.Reply{Body: map[string]any{"executionArn": execARN(in.Name), "startDate": 1.7731008e9}}
			}
			return awstest.Error(400, "ExecutionAlreadyExists", "Execution Already Exists: '"+execARN(in.Name)+"'")
		}
		f.execs[in.Name] = &execution{name: in.Name, input: in.Input}
		if f.lose {
			f.lose = false
			return awstest.Error(500, "InternalFailure", "connection reset")
		}
		return awstest.Reply{Body: map[string]any{"executionArn": execARN(in.Name), "startDate": 1.7731008e9}}
	case "DescribeExecution":
		var in struct{ ExecutionArn string }
		_ = json.Unmarshal(body, &in)
		name := strings.TrimPrefix(in.ExecutionArn, execARN(""))
		e, ok := f.execs[name]
		if !ok || !strings.HasPrefix(in.ExecutionArn, execARN("")) {
			return awstest.Error(400, "ExecutionDoesNotExist", "Execution Does Not Exist: '"+in.ExecutionArn+"'")
		}
		s := current
		out := map[string]any{"executionArn": in.ExecutionArn, "stateMachineArn": machine, "name": name, "status": s, "startDate": 1.7731008e9, "input": e.input}
		switch s {
		case "FAILED", "TIMED_OUT", "ABORTED":
			out["error"] = "States.TaskFailed"
			out["cause"] = "Lambda failed on input " + e.input
		}
		return awstest.Reply{Body: out}
	}
	return awstest.Error(400, "UnknownOperationException", op)
}

func (f *fakeSFN) set(fn func(f *fakeSFN)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeSFN) count() int {
	var n int
	f.set(func(f *fakeSFN) { n = len(f.execs) })
	return n
}

func config(f *fakeSFN) string {
	return `{stateMachineArn: "` + machine + `", endpoint: "` + f.URL + `", arguments: {token: "${env:` + awstest.SecretEnv + `}", date: "${DATE}", hour: "${HOUR}"}}`
}

func runner() Runner { return Runner{AWS: awstest.Session(awstest.Env())} }

func TestContract(t *testing.T) {
	triggertest.Run(t, func(t *testing.T) *triggertest.Harness {
		f := newFake(t)
		return &triggertest.Harness{
			Runner:    runner(),
			NewRunner: func() trigger.Runner { return runner() },
			Request:   awstest.Request(t, "step-function", config(f), ""),
			Set: func(start, status triggertest.Mode) {
				// Each start of the kit is a new trigger attempt: forget
				// the executions, or the fixed run id would find its name
				// taken (which TestExactlyOnce covers).
				f.set(func(f *fakeSFN) { f.execs = map[string]*execution{} })
				f.modes.Set(start, status)
			},
			Secret:    awstest.SecretKey,
			StartAuth: func() string { return f.LastAuth("StartExecution") },
			PollAuth:  func() []string { return f.Auths("DescribeExecution") },
		}
	})
}

func TestStartSendsInputAndName(t *testing.T) {
	f := newFake(t)
	st, err := runner().Start(context.Background(), awstest.Request(t, "step-function", config(f), "07"))
	if err != nil || st.Result != nil {
		t.Fatalf("Start = %+v, %v", st, err)
	}
	calls := f.Calls()
	if len(calls) != 1 {
		t.Fatalf("calls = %d", len(calls))
	}
	var in struct{ StateMachineArn, Name, Input string }
	_ = json.Unmarshal(calls[0].Body, &in)
	token, _ := json.Marshal(awstest.SecretKey)
	wantInput := `{"date":"2026-03-10","hour":"07","token":` + string(token) + `}`
	if in.StateMachineArn != machine || in.Name != awstest.RunID || in.Input != wantInput {
		t.Errorf("StartExecution = %+v, want input %s", in, wantInput)
	}
	if calls[0].Region != machineRegn {
		t.Errorf("signed for region %s, want the state machine's, %s", calls[0].Region, machineRegn)
	}
	wantMeta := map[string]string{MetaExecutionARN: execARN(awstest.RunID), awsjob.MetaRegion: machineRegn}
	if st.JobRunID != execARN(awstest.RunID) || fmt.Sprint(st.Meta) != fmt.Sprint(wantMeta) {
		t.Errorf("Started = %q %v", st.JobRunID, st.Meta)
	}
}

// TestPollAsksTheExecutionsRegion: a poll whose run recorded no region
// (and whose config names none) asks the region of the execution's ARN,
// not the SDK's default one.
func TestPollAsksTheExecutionsRegion(t *testing.T) {
	t.Setenv("AWS_REGION", "ap-south-1")
	f := newFake(t)
	req := awstest.Request(t, "step-function", config(f), "")
	st, err := runner().Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.JobRunID, req.Meta = st.JobRunID, nil
	if _, err := runner().Poll(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	calls := f.Calls()
	if c := calls[len(calls)-1]; c.Region != machineRegn {
		t.Errorf("DescribeExecution signed for region %s, want the execution's, %s", c.Region, machineRegn)
	}
}

func TestNoArgumentsIsAnEmptyObject(t *testing.T) {
	f := newFake(t)
	req := awstest.Request(t, "step-function", `{stateMachineArn: "`+machine+`", region: eu-west-1, endpoint: "`+f.URL+`"}`, "")
	if _, err := runner().Start(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	c := f.Calls()[0]
	if !strings.Contains(string(c.Body), `"input":"{}"`) || c.Region != "eu-west-1" {
		t.Fatalf("body %s, region %s: want input {} and the configured region", c.Body, c.Region)
	}
}

// TestExactlyOnce: whatever happened to the first call's answer, a
// retried start of the same attempt never starts a second execution.
func TestExactlyOnce(t *testing.T) {
	t.Run("retry while the execution runs gets it (idempotent)", func(t *testing.T) {
		f := newFake(t)
		f.modes.Set(triggertest.StartOK, triggertest.JobRunning)
		req := awstest.Request(t, "step-function", config(f), "")
		a, err1 := runner().Start(context.Background(), req)
		b, err2 := runner().Start(context.Background(), req)
		if err1 != nil || err2 != nil || a.JobRunID != b.JobRunID || a.Result != nil || b.Result != nil || f.count() != 1 {
			t.Fatalf("starts = %+v %v / %+v %v, executions %d", a, err1, b, err2, f.count())
		}
	})
	t.Run("answer lost, retry gets the execution", func(t *testing.T) {
		f := newFake(t)
		f.set(func(f *fakeSFN) { f.lose = true })
		req := awstest.Request(t, "step-function", config(f), "")
		if _, err := runner().Start(context.Background(), req); err == nil {
			t.Fatal("the lost answer was not an error")
		}
		st, err := runner().Start(context.Background(), req)
		if err != nil || st.JobRunID != execARN(awstest.RunID) || f.count() != 1 {
			t.Fatalf("retried Start = %+v, %v, executions %d", st, err, f.count())
		}
	})
	t.Run("retry after the execution ended adopts it", func(t *testing.T) {
		f := newFake(t)
		req := awstest.Request(t, "step-function", config(f), "")
		first, err := runner().Start(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		f.modes.Set(triggertest.StartOK, triggertest.JobSucceeded)
		st, err := runner().Start(context.Background(), req)
		if err != nil || st.Result != nil || st.JobRunID != first.JobRunID || fmt.Sprint(st.Meta) != fmt.Sprint(first.Meta) || f.count() != 1 {
			t.Fatalf("retried Start = %+v, %v, executions %d; want the first execution", st, err, f.count())
		}
		if n := f.Count("StartExecution"); n != 2 {
			t.Errorf("StartExecution calls = %d", n)
		}
		req.JobRunID, req.Meta = st.JobRunID, st.Meta
		res, err := runner().Poll(context.Background(), req)
		if err != nil || res.Status != trigger.StatusSucceeded {
			t.Fatalf("Poll = %+v, %v", res, err)
		}
	})
	t.Run("name taken with another input is refused, nothing started", func(t *testing.T) {
		f := newFake(t)
		f.set(func(f *fakeSFN) { f.execs[awstest.RunID] = &execution{name: awstest.RunID, input: `{"other":"run"}`} })
		st, err := runner().Start(context.Background(), awstest.Request(t, "step-function", config(f), ""))
		if err != nil || st.Result == nil || st.Result.Status != trigger.StatusFailed || st.Result.Category != run.Permanent ||
			!strings.Contains(st.Result.Message, "already exists with another input") || f.count() != 1 {
			t.Fatalf("Start = %+v, %v, executions %d", st.Result, err, f.count())
		}
	})
}

func TestExecutionNames(t *testing.T) {
	long := strings.Repeat("pipeline.with.dots/", 8) + "-stream-2026-03-10T05-g0-a1"
	cases := []string{awstest.RunID, "a.b-stream-2026-03-10-g1-a2", long, "a_b-stream-2026-03-10-g1-a2"}
	seen := map[string]string{}
	for _, id := range cases {
		n := ExecutionName(id)
		if !validName(n) || n != ExecutionName(id) {
			t.Errorf("ExecutionName(%q) = %q: invalid or not deterministic", id, n)
		}
		if prev, dup := seen[n]; dup {
			t.Errorf("run ids %q and %q share execution name %q", prev, id, n)
		}
		seen[n] = id
	}
	if ExecutionName(awstest.RunID) != awstest.RunID {
		t.Errorf("a run id that fits is used as it is")
	}
	f := newFake(t)
	req := awstest.Request(t, "step-function", config(f), "")
	req.RunID = long
	if st, err := runner().Start(context.Background(), req); err != nil || st.Result != nil {
		t.Fatalf("Start with a long run id = %+v, %v", st, err)
	}
}

func TestPollMapsEveryStatus(t *testing.T) {
	cases := []struct {
		status   string
		want     trigger.Status
		category run.Category
	}{
		{"RUNNING", trigger.StatusRunning, ""},
		{"PENDING_REDRIVE", trigger.StatusRunning, ""},
		{"SUCCEEDED", trigger.StatusSucceeded, ""},
		{"TIMED_OUT", trigger.StatusFailed, run.Timeout},
		{"FAILED", trigger.StatusFailed, run.Transient},
		{"ABORTED", trigger.StatusFailed, run.Permanent},
	}
	for _, c := range cases {
		t.Run(c.status, func(t *testing.T) {
			f := newFake(t)
			req := awstest.Request(t, "step-function", config(f), "")
			st, err := runner().Start(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			f.set(func(f *fakeSFN) { f.state = c.status })
			req.JobRunID, req.Meta = st.JobRunID, st.Meta
			res, err := runner().Poll(context.Background(), req)
			if err != nil || res.Status != c.want || res.Category != c.category {
				t.Fatalf("Poll = %+v, %v; want %s %s", res, err, c.want, c.category)
			}
			if c.want == trigger.StatusFailed {
				want := "Step Functions execution " + c.status + `: States.TaskFailed: Lambda failed on input {"date":"2026-03-10","hour":"","token":"[redacted]"}`
				if res.Message != want {
					t.Errorf("Message = %q, want %q", res.Message, want)
				}
			}
		})
	}
}

func TestExecutionARN(t *testing.T) {
	cases := map[string]string{
		machine:           execARN("n"),
		machine + ":7":    execARN("n"),
		machine + ":prod": execARN("n"),
		"arn:aws-cn:states:cn-north-1:1:stateMachine:m": "arn:aws-cn:states:cn-north-1:1:execution:m:n",
	}
	for in, want := range cases {
		if got, ok := executionARN(in, "n"); !ok || got != want {
			t.Errorf("executionARN(%q) = %q, %v; want %q", in, got, ok, want)
		}
	}
	if _, ok := executionARN("gold", "n"); ok {
		t.Error("a name is not a state machine ARN")
	}
	if unqualified(machine+":prod") != machine || unqualified(machine) != machine {
		t.Error("unqualified")
	}
}
