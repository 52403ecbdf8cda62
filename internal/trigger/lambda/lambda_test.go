package lambda

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/awsjob"
	"github.com/interlockhq/interlock/internal/trigger/awsjob/awstest"
	"github.com/interlockhq/interlock/internal/trigger/triggertest"
)

func TestMain(m *testing.M) {
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	os.Unsetenv("AWS_ENDPOINT_URL")
	os.Unsetenv("AWS_ENDPOINT_URL_LAMBDA")
	os.Unsetenv("AWS_PROFILE")
	os.Exit(m.Run())
}

const invokePrefix = "POST /2015-03-31/functions/"

// fakeLambda speaks Lambda's REST-JSON protocol for Invoke
// (POST /2015-03-31/functions/{name}/invocations). A failing function
// echoes its event in its error, as handlers that log their input do.
type fakeLambda struct {
	*awstest.Server
	modes awstest.Modes

	mu     sync.Mutex
	answer *awstest.Reply // overrides the answer the modes give
}

var faults = awstest.Faults{
	Throttled:   awstest.Error(429, "TooManyRequestsException", "Rate Exceeded."),
	ServerError: awstest.Error(500, "ServiceException", "Internal error"),
	Rejected:    awstest.Error(404, "ResourceNotFoundException", "Function not found: arn:aws:lambda:eu-west-1:123456789012:function:gold-etl"),
}

func newFake(t *testing.T) *fakeLambda {
	f := &fakeLambda{}
	f.Server = awstest.NewREST(t, "lambda", f.handle)
	return f
}

func (f *fakeLambda) handle(r *http.Request, body []byte) awstest.Reply {
	start, status := f.modes.Get()
	f.mu.Lock()
	defer f.mu.Unlock()
	name, ok := strings.CutPrefix(r.URL.Path, "/2015-03-31/functions/")
	name, ok2 := strings.CutSuffix(name, "/invocations")
	if r.Method != http.MethodPost || !ok || !ok2 {
		return awstest.Error(404, "UnknownOperationException", r.Method+" "+r.URL.Path)
	}
	if r.Header.Get("X-Amz-Invocation-Type") != "RequestResponse" {
		return awstest.Error(400, "InvalidParameterValueException", "want a synchronous invocation")
	}
	if !json.Valid(body) {
		return awstest.Error(400, "InvalidRequestContentException", "Could not parse request body into json: "+string(body))
	}
	if rep, fault := faults.For(start, body); fault {
		return rep
	}
	if name != "gold-etl" && name != "arn:aws:lambda:us-east-2:123456789012:function:gold-etl" {
		return awstest.Error(404, "ResourceNotFoundException", "Function not found: "+name)
	}
	if f.answer != nil {
		return *f.answer
	}
	hdr := map[string]string{"X-Amz-Executed-Version": "$LATEST"}
	switch status {
	case triggertest.JobFailed:
		hdr["X-Amz-Function-Error"] = "Unhandled"
		return awstest.Reply{Header: hdr, Body: map[string]any{"errorType": "ValueError", "errorMessage": "bad event " + string(body), "stackTrace": []string{}}}
	case triggertest.JobTimedOut:
		hdr["X-Amz-Function-Error"] = "Unhandled"
		return awstest.Reply{Header: hdr, Body: map[string]any{"errorType": ErrorTypeTimeout, "errorMessage": "RequestId: 6f3c Error: Task timed out after 3.00 seconds"}}
	}
	return awstest.Reply{Header: hdr, Body: map[string]any{"rows": 42}}
}

func (f *fakeLambda) set(rep *awstest.Reply) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.answer = rep
}

func config(f *fakeLambda) string {
	return `{functionName: gold-etl, region: ` + awstest.Region + `, endpoint: "` + f.URL + `", payload: '{"date": "${DATE}", "token": "${env:` + awstest.SecretEnv + `}"}'}`
}

func runner() Runner { return Runner{AWS: awstest.Session(awstest.Env())} }

func TestContract(t *testing.T) {
	triggertest.Run(t, func(t *testing.T) *triggertest.Harness {
		f := newFake(t)
		return &triggertest.Harness{
			Runner:      runner(),
			NewRunner:   func() trigger.Runner { return runner() },
			Request:     awstest.Request(t, "lambda", config(f), ""),
			Set:         f.modes.Set,
			Secret:      awstest.SecretKey,
			Synchronous: true,
			StartAuth:   func() string { return f.LastAuth(invokePrefix + "gold-etl/invocations") },
			PollAuth:    func() []string { return nil },
		}
	})
}

func TestInvokeSendsTheExpandedPayload(t *testing.T) {
	f := newFake(t)
	st, err := runner().Start(context.Background(), awstest.Request(t, "lambda", config(f), ""))
	if err != nil || st.Result == nil || st.Result.Status != trigger.StatusSucceeded {
		t.Fatalf("Start = %+v, %v", st, err)
	}
	calls := f.Calls()
	if len(calls) != 1 || calls[0].Op != invokePrefix+"gold-etl/invocations" {
		t.Fatalf("calls = %+v", calls)
	}
	if want := `{"date": "2026-03-10", "token": "` + awstest.SecretKey + `"}`; string(calls[0].Body) != want {
		t.Errorf("payload = %s, want %s", calls[0].Body, want)
	}
	wantMeta := map[string]string{MetaFunctionName: "gold-etl", awsjob.MetaRegion: awstest.Region}
	if st.JobRunID != "req-0001" || fmt.Sprint(st.Meta) != fmt.Sprint(wantMeta) {
		t.Errorf("Started = %q %v, want the request id and %v", st.JobRunID, st.Meta, wantMeta)
	}
}

func TestFunctionARNGivesTheRegionAndDefaultPayload(t *testing.T) {
	f := newFake(t)
	fn := "arn:aws:lambda:us-east-2:123456789012:function:gold-etl"
	st, err := runner().Start(context.Background(), awstest.Request(t, "lambda", `{functionName: "`+fn+`", endpoint: "`+f.URL+`"}`, ""))
	if err != nil || st.Result == nil || st.Result.Status != trigger.StatusSucceeded {
		t.Fatalf("Start = %+v, %v", st.Result, err)
	}
	c := f.Calls()[0]
	if string(c.Body) != "{}" || c.Region != "us-east-2" || c.Op != invokePrefix+"arn%3Aaws%3Alambda%3Aus-east-2%3A123456789012%3Afunction%3Agold-etl/invocations" {
		t.Fatalf("call %s body %s region %s", c.Op, c.Body, c.Region)
	}
}

func TestFunctionErrors(t *testing.T) {
	long := strings.Repeat("x", 300)
	cases := []struct {
		name, kind, payload string
		category            run.Category
		msg                 string
	}{
		{"unhandled exception is permanent", "Unhandled", `{"errorType":"KeyError","errorMessage":"'date'"}`, run.Permanent,
			`function error: Unhandled: {"errorType":"KeyError","errorMessage":"'date'"}`},
		{"handled error is permanent", "Handled", `{"errorMessage":"no data for 2026-03-10"}`, run.Permanent,
			`function error: Handled: {"errorMessage":"no data for 2026-03-10"}`},
		{"runtime timeout", "Unhandled", `{"errorType":"Sandbox.Timedout","errorMessage":"Task timed out after 3.00 seconds"}`, run.Timeout,
			`function error: Unhandled: {"errorType":"Sandbox.Timedout"`},
		{"answer cut at 200 bytes, control characters and their escapes removed", "Unhandled", "\"a\x1b[31m\\u0000" + long + "\"", run.Permanent,
			"function error: Unhandled: \"a[31m" + strings.Repeat("x", 200-len("\"a[31m")) + "…"},
		{"not JSON", "Unhandled", `Runtime exited with error: signal: killed`, run.Permanent,
			`function error: Unhandled: Runtime exited with error: signal: killed`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			f.set(&awstest.Reply{Header: map[string]string{"X-Amz-Function-Error": c.kind}, Body: []byte(c.payload)})
			st, err := runner().Start(context.Background(), awstest.Request(t, "lambda", config(f), ""))
			if err != nil || st.Result == nil {
				t.Fatalf("Start = %+v, %v", st, err)
			}
			r := st.Result
			if r.Status != trigger.StatusFailed || r.Category != c.category || !strings.HasPrefix(r.Message, c.msg) {
				t.Fatalf("Result = %+v\nwant failed %s %q…", r, c.category, c.msg)
			}
		})
	}
}

func TestInvalidPayloadAfterExpansionIsRefusedWithoutCalling(t *testing.T) {
	f := newFake(t)
	s := awstest.Session(map[string]string{"INTERLOCK_QUOTE": `sec"ret-value`})
	req := awstest.Request(t, "lambda", `{functionName: gold-etl, region: eu-west-1, endpoint: "`+f.URL+`", payload: '{"v": "${env:INTERLOCK_QUOTE}"}'}`, "")
	st, err := Runner{AWS: s}.Start(context.Background(), req)
	if err != nil || st.Result == nil || st.Result.Category != run.Permanent || strings.Contains(st.Result.Message, "ret-value") || len(f.Calls()) != 0 {
		t.Fatalf("Start = %+v, %v, calls %d", st.Result, err, len(f.Calls()))
	}
}

func TestInvokeErrorsAreClassifiedByCode(t *testing.T) {
	cases := []struct {
		status  int
		code    string
		refused bool
	}{
		{429, "TooManyRequestsException", false},
		{500, "ServiceException", false},
		{502, "EC2ThrottledException", false},
		{502, "ResourceNotReadyException", false},
		{409, "ResourceConflictException", false},
		{502, "InvalidRuntimeException", true},
		{502, "KMSAccessDeniedException", true},
		{404, "ResourceNotFoundException", true},
		{400, "InvalidRequestContentException", true},
		{413, "RequestTooLargeException", true},
		{403, "AccessDeniedException", true},
	}
	for _, c := range cases {
		t.Run(c.code, func(t *testing.T) {
			srv := awstest.NewREST(t, "lambda", func(*http.Request, []byte) awstest.Reply { return awstest.Error(c.status, c.code, "no") })
			req := awstest.Request(t, "lambda", `{functionName: gold-etl, region: eu-west-1, endpoint: "`+srv.URL+`"}`, "")
			st, err := runner().Start(context.Background(), req)
			refused := err == nil && st.Result != nil && st.Result.Status == trigger.StatusFailed && st.Result.Category == run.Permanent
			if refused != c.refused || (err == nil) == (st.Result == nil) || len(srv.Calls()) != 1 {
				t.Fatalf("Start = %+v, %v (calls %d); want refused=%v", st.Result, err, len(srv.Calls()), c.refused)
			}
		})
	}
}

// TestInvocationWithoutAnswerIsAnError: past InvokeTimeout the call is an
// infrastructure failure (Lambda itself answers within 15 minutes).
func TestInvocationWithoutAnswerIsAnError(t *testing.T) {
	release := make(chan struct{})
	srv := awstest.NewREST(t, "lambda", func(r *http.Request, _ []byte) awstest.Reply {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		return awstest.Reply{}
	})
	t.Cleanup(func() { close(release) })
	req := awstest.Request(t, "lambda", `{functionName: gold-etl, region: eu-west-1, endpoint: "`+srv.URL+`"}`, "")
	_, err := Runner{AWS: awstest.Session(nil), InvokeTimeout: 50 * time.Millisecond}.Start(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "lambda Invoke") {
		t.Fatalf("Start error = %v", err)
	}
}

func TestPollIsNeverNeeded(t *testing.T) {
	if _, err := runner().Poll(context.Background(), trigger.Request{}); err == nil {
		t.Fatal("Poll of a synchronous job succeeded")
	}
}
