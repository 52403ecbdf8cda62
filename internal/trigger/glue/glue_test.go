package glue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/awsjob"
	"github.com/interlockhq/interlock/internal/trigger/awsjob/awstest"
	"github.com/interlockhq/interlock/internal/trigger/triggertest"
)

func TestMain(m *testing.M) {
	// Nothing from the machine: no instance metadata, no endpoint.
	os.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	os.Unsetenv("AWS_ENDPOINT_URL")
	os.Unsetenv("AWS_ENDPOINT_URL_GLUE")
	os.Unsetenv("AWS_PROFILE")
	os.Exit(m.Run())
}

// fakeGlue speaks Glue's awsJson 1.1 protocol for StartJobRun and
// GetJobRun. A failed run's ErrorMessage echoes the run's arguments, as a
// driver's stack trace may.
type fakeGlue struct {
	*awstest.Server
	modes awstest.Modes

	mu    sync.Mutex
	runs  map[string]startIn
	state string // overrides the state the modes give
}

type startIn struct {
	JobName   string
	Arguments map[string]string
}

var faults = awstest.Faults{
	Throttled:   awstest.Error(400, "ThrottlingException", "Rate exceeded"),
	ServerError: awstest.Error(500, "InternalServiceException", "Internal service error"),
	Rejected:    awstest.Error(400, "EntityNotFoundException", "Job with name: silver not found"),
}

var states = map[triggertest.Mode]string{
	triggertest.JobRunning:   "RUNNING",
	triggertest.JobSucceeded: "SUCCEEDED",
	triggertest.JobFailed:    "FAILED",
	triggertest.JobTimedOut:  "TIMEOUT",
}

func newFake(t *testing.T) *fakeGlue {
	f := &fakeGlue{runs: map[string]startIn{}}
	f.Server = awstest.NewRPC(t, "1.1", "AWSGlue", "glue", f.handle)
	return f
}

func (f *fakeGlue) handle(op string, body []byte) awstest.Reply {
	start, status := f.modes.Get()
	f.mu.Lock()
	defer f.mu.Unlock()
	switch op {
	case "StartJobRun":
		var in startIn
		if err := json.Unmarshal(body, &in); err != nil || in.JobName == "" {
			return awstest.Error(400, "InvalidInputException", "JobName is required")
		}
		if rep, fault := faults.For(start, body); fault {
			return rep
		}
		id := fmt.Sprintf("jr_%04d", len(f.runs)+1)
		f.runs[id] = in
		return awstest.Reply{Body: map[string]string{"JobRunId": id}}
	case "GetJobRun":
		var in struct{ JobName, RunId string }
		_ = json.Unmarshal(body, &in)
		r, ok := f.runs[in.RunId]
		if !ok || r.JobName != in.JobName {
			return awstest.Error(400, "EntityNotFoundException", "Job run not found")
		}
		state := states[status]
		if f.state != "" {
			state = f.state
		}
		jr := map[string]any{"Id": in.RunId, "JobName": r.JobName, "JobRunState": state, "Arguments": r.Arguments, "Attempt": 0, "StartedOn": 1.7731008e9}
		switch state {
		case "FAILED", "TIMEOUT", "ERROR", "STOPPED", "EXPIRED":
			args, _ := json.Marshal(r.Arguments)
			jr["ErrorMessage"] = "An error occurred while calling o97.run with " + string(args)
		}
		return awstest.Reply{Body: map[string]any{"JobRun": jr}}
	}
	return awstest.Error(400, "UnknownOperationException", op)
}

func (f *fakeGlue) setState(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state = s
}

func (f *fakeGlue) started() []startIn {
	var out []startIn
	for _, c := range f.Calls() {
		if c.Op == "StartJobRun" {
			var in startIn
			_ = json.Unmarshal(c.Body, &in)
			out = append(out, in)
		}
	}
	return out
}

func config(f *fakeGlue, extra string) string {
	return `{jobName: silver, region: ` + awstest.Region + `, endpoint: "` + f.URL + `", arguments: {--token: "${env:` + awstest.SecretEnv + `}", --pipeline: "${PIPELINE}"` + extra + `}}`
}

func runner() Runner { return Runner{AWS: awstest.Session(awstest.Env())} }

func TestContract(t *testing.T) {
	triggertest.Run(t, func(t *testing.T) *triggertest.Harness {
		f := newFake(t)
		return &triggertest.Harness{
			Runner:    runner(),
			NewRunner: func() trigger.Runner { return runner() },
			Request:   awstest.Request(t, "glue", config(f, ""), ""),
			Set:       f.modes.Set,
			Secret:    awstest.SecretKey,
			StartAuth: func() string { return f.LastAuth("StartJobRun") },
			PollAuth:  func() []string { return f.Auths("GetJobRun") },
		}
	})
}

func TestStartSendsArgumentsAndPeriod(t *testing.T) {
	cases := []struct {
		name, extra, hour string
		want              map[string]string
	}{
		{"daily period", "", "", map[string]string{"--par_day": "20260310"}},
		{"hourly period", "", "05", map[string]string{"--par_day": "20260310", "--par_hour": "05"}},
		{"arguments win", `, --par_day: "${DATE}", --par_hour: "23"`, "05", map[string]string{"--par_day": "2026-03-10", "--par_hour": "23"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			st, err := runner().Start(context.Background(), awstest.Request(t, "glue", config(f, c.extra), c.hour))
			if err != nil || st.Result != nil {
				t.Fatalf("Start = %+v, %v", st, err)
			}
			got := f.started()
			if len(got) != 1 || got[0].JobName != "silver" {
				t.Fatalf("StartJobRun calls = %+v, want one for job silver", got)
			}
			want := map[string]string{"--token": awstest.SecretKey, "--pipeline": "gold"}
			for k, v := range c.want {
				want[k] = v
			}
			if fmt.Sprint(got[0].Arguments) != fmt.Sprint(want) {
				t.Errorf("Arguments = %v, want %v", got[0].Arguments, want)
			}
			if _, hour := got[0].Arguments["--par_hour"]; hour != (c.want["--par_hour"] != "") {
				t.Errorf("--par_hour sent = %v", hour)
			}
			wantMeta := map[string]string{MetaJobName: "silver", MetaRunID: "jr_0001", awsjob.MetaRegion: awstest.Region}
			if st.JobRunID != "jr_0001" || fmt.Sprint(st.Meta) != fmt.Sprint(wantMeta) {
				t.Errorf("Started = %q %v, want jr_0001 %v", st.JobRunID, st.Meta, wantMeta)
			}
		})
	}
}

func TestPollMapsEveryState(t *testing.T) {
	cases := []struct {
		state    string
		status   trigger.Status
		category run.Category
	}{
		{"STARTING", trigger.StatusRunning, ""},
		{"RUNNING", trigger.StatusRunning, ""},
		{"STOPPING", trigger.StatusRunning, ""},
		{"WAITING", trigger.StatusRunning, ""},
		{"SUCCEEDED", trigger.StatusSucceeded, ""},
		{"TIMEOUT", trigger.StatusFailed, run.Timeout},
		{"FAILED", trigger.StatusFailed, run.Transient},
		{"ERROR", trigger.StatusFailed, run.Transient},
		{"EXPIRED", trigger.StatusFailed, run.Transient},
		{"STOPPED", trigger.StatusFailed, run.Permanent},
	}
	for _, c := range cases {
		t.Run(c.state, func(t *testing.T) {
			f := newFake(t)
			req := awstest.Request(t, "glue", config(f, ""), "")
			st, err := runner().Start(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			f.setState(c.state)
			req.JobRunID, req.Meta = st.JobRunID, st.Meta
			res, err := runner().Poll(context.Background(), req)
			if err != nil {
				t.Fatalf("Poll: %v", err)
			}
			if res.Status != c.status || res.Category != c.category {
				t.Fatalf("Poll = %+v, want %s %s", res, c.status, c.category)
			}
			if c.status == trigger.StatusFailed {
				want := "Glue job run " + c.state + ": An error occurred while calling o97.run with"
				if !strings.HasPrefix(res.Message, want) || !strings.Contains(res.Message, "[redacted]") || strings.Contains(res.Message, awstest.SecretKey) {
					t.Errorf("Message = %q, want %q… with the secret redacted", res.Message, want)
				}
			}
		})
	}
	t.Run("unknown state is an error", func(t *testing.T) {
		f := newFake(t)
		req := awstest.Request(t, "glue", config(f, ""), "")
		st, _ := runner().Start(context.Background(), req)
		f.setState("PAUSED")
		req.JobRunID, req.Meta = st.JobRunID, st.Meta
		if _, err := runner().Poll(context.Background(), req); err == nil || !strings.Contains(err.Error(), `unknown job run state "PAUSED"`) {
			t.Fatalf("Poll error = %v", err)
		}
	})
}

// TestStartErrorsAreClassifiedByCode checks the classification table
// end to end, through the SDK's decoding of Glue's error answers, and that
// the SDK does not retry on its own.
func TestStartErrorsAreClassifiedByCode(t *testing.T) {
	cases := []struct {
		status  int
		code    string
		refused bool
	}{
		{400, "ThrottlingException", false},
		{400, "ConcurrentRunsExceededException", false},
		{400, "ResourceNumberLimitExceededException", false},
		{500, "InternalServiceException", false},
		{400, "OperationTimeoutException", false},
		{503, "SomethingNew", false},
		{400, "ExpiredTokenException", false},
		{400, "EntityNotFoundException", true},
		{400, "InvalidInputException", true},
		{400, "AccessDeniedException", true},
		{400, "ValidationException", true},
		{400, "SomethingNew", true},
	}
	for _, c := range cases {
		t.Run(c.code+"/"+fmt.Sprint(c.status), func(t *testing.T) {
			calls := 0
			srv := awstest.NewRPC(t, "1.1", "AWSGlue", "glue", func(op string, body []byte) awstest.Reply {
				calls++
				return awstest.Error(c.status, c.code, "told you so: "+string(body))
			})
			req := awstest.Request(t, "glue", `{jobName: silver, region: eu-west-1, endpoint: "`+srv.URL+`", arguments: {--token: "${env:`+awstest.SecretEnv+`}"}}`, "")
			st, err := runner().Start(context.Background(), req)
			if calls != 1 {
				t.Errorf("the fake got %d calls: the SDK must not retry (the engine does)", calls)
			}
			var text string
			if c.refused {
				if err != nil || st.Result == nil || st.Result.Status != trigger.StatusFailed || st.Result.Category != run.Permanent {
					t.Fatalf("Start = %+v, %v; want a failed PERMANENT result", st.Result, err)
				}
				text = st.Result.Message
			} else {
				if err == nil {
					t.Fatalf("Start = %+v, want an error for the engine to retry", st)
				}
				text = err.Error()
			}
			if !strings.Contains(text, "glue StartJobRun: "+c.code+": told you so") || !strings.Contains(text, fmt.Sprintf("HTTP %d", c.status)) {
				t.Errorf("text %q lacks the code, the message or the status", text)
			}
			if strings.Contains(text, awstest.SecretKey) || !strings.Contains(text, "[redacted]") {
				t.Errorf("text %q: the echoed secret must be redacted", text)
			}
		})
	}
}

func TestUnreachableEndpointIsAnError(t *testing.T) {
	f := newFake(t)
	req := awstest.Request(t, "glue", config(f, ""), "")
	f.Close()
	_, err := runner().Start(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "glue StartJobRun: ") {
		t.Fatalf("Start error = %v", err)
	}
}

func TestEndpointFromSDKEnvironment(t *testing.T) {
	f := newFake(t)
	t.Setenv("AWS_ENDPOINT_URL_GLUE", f.URL)
	req := awstest.Request(t, "glue", `{jobName: silver, region: eu-west-1}`, "")
	st, err := runner().Start(context.Background(), req)
	if err != nil || f.Count("StartJobRun") != 1 {
		t.Fatalf("Start = %+v, %v; fake calls %d", st, err, f.Count("StartJobRun"))
	}
}

// TestPollAsksTheRegionTheJobStartedIn: after job.config.region was
// edited, a run started before is still polled where it runs.
func TestPollAsksTheRegionTheJobStartedIn(t *testing.T) {
	f := newFake(t)
	req := awstest.Request(t, "glue", config(f, ""), "")
	st, err := runner().Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	edited := awstest.Request(t, "glue", `{jobName: silver, region: us-east-1, endpoint: "`+f.URL+`"}`, "")
	edited.JobRunID, edited.Meta = st.JobRunID, st.Meta
	if _, err := runner().Poll(context.Background(), edited); err != nil {
		t.Fatal(err)
	}
	if got := f.Calls()[1].Region; got != awstest.Region {
		t.Fatalf("GetJobRun signed for region %s, want %s", got, awstest.Region)
	}
}

func TestUnsetEnvironmentVariableIsAnErrorNamingIt(t *testing.T) {
	f := newFake(t)
	req := awstest.Request(t, "glue", `{jobName: silver, endpoint: "`+f.URL+`", region: eu-west-1, arguments: {--x: "${env:INTERLOCK_MISSING}"}}`, "")
	_, err := runner().Start(context.Background(), req)
	if err == nil || !strings.Contains(err.Error(), "INTERLOCK_MISSING") || f.Count("StartJobRun") != 0 {
		t.Fatalf("err = %v, calls = %d", err, f.Count("StartJobRun"))
	}
}

func TestPollWithoutRunIDIsAnError(t *testing.T) {
	f := newFake(t)
	_, err := runner().Poll(context.Background(), awstest.Request(t, "glue", config(f, ""), ""))
	if err == nil {
		t.Fatal("Poll without a run id succeeded")
	}
	var ae *awsjob.Error
	if errors.As(err, &ae) {
		t.Fatalf("no AWS call should have been made: %v", err)
	}
}

// TestFakeChecksSignatures: a runner with another secret key is refused
// by the fake as AWS refuses it, which the runner reports as an error to
// retry (Interlock's credentials are not the job's fault).
func TestFakeChecksSignatures(t *testing.T) {
	f := newFake(t)
	s := awstest.Session(awstest.Env())
	s.LoadOptions = append(s.LoadOptions, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(awstest.AccessKey, "not-the-secret", "")))
	_, err := Runner{AWS: s}.Start(context.Background(), awstest.Request(t, "glue", config(f, ""), ""))
	if err == nil || !strings.Contains(err.Error(), "InvalidSignatureException") {
		t.Fatalf("Start error = %v, want InvalidSignatureException", err)
	}
}
