package emrserverless

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
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
	os.Unsetenv("AWS_ENDPOINT_URL_EMR_SERVERLESS")
	os.Unsetenv("AWS_PROFILE")
	os.Exit(m.Run())
}

const app = "00fgold"

// fakeEMRS speaks EMR Serverless's REST-JSON protocol for StartJobRun
// (POST /applications/{id}/jobruns) and GetJobRun (GET
// /applications/{id}/jobruns/{runId}) on one application. Like the real
// API, a repeated client token with the same request returns the run it
// started.
type fakeEMRS struct {
	*awstest.Server
	modes awstest.Modes

	mu      sync.Mutex
	runs    map[string]startIn
	byToken map[string]string // client token → run id
	state   string            // overrides the state the modes give
	lose    bool              // create the run, then answer 500 (a lost answer)
}

type startIn struct {
	ClientToken      string `json:"clientToken"`
	ExecutionRoleArn string `json:"executionRoleArn"`
	Name             string `json:"name"`
	JobDriver        struct {
		SparkSubmit *struct {
			EntryPoint            string   `json:"entryPoint"`
			EntryPointArguments   []string `json:"entryPointArguments"`
			SparkSubmitParameters string   `json:"sparkSubmitParameters"`
		} `json:"sparkSubmit"`
	} `json:"jobDriver"`
}

var faults = awstest.Faults{
	Throttled:   awstest.Error(429, "ThrottlingException", "Rate exceeded"),
	ServerError: awstest.Error(500, "InternalServerException", "Internal error"),
	Rejected:    awstest.Error(404, "ResourceNotFoundException", "Application 00fgold does not exist"),
}

var states = map[triggertest.Mode]string{
	triggertest.JobRunning:   "RUNNING",
	triggertest.JobSucceeded: "SUCCESS",
	triggertest.JobFailed:    "FAILED",
}

func newFake(t *testing.T) *fakeEMRS {
	f := &fakeEMRS{runs: map[string]startIn{}, byToken: map[string]string{}}
	f.Server = awstest.NewREST(t, "emr-serverless", f.handle)
	return f
}

func (f *fakeEMRS) handle(r *http.Request, body []byte) awstest.Reply {
	start, status := f.modes.Get()
	f.mu.Lock()
	defer f.mu.Unlock()
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	switch {
	case r.Method == http.MethodPost && len(parts) == 3 && parts[0] == "applications" && parts[2] == "jobruns":
		var in startIn
		if err := json.Unmarshal(body, &in); err != nil || in.ClientToken == "" || in.ExecutionRoleArn == "" {
			return awstest.Error(400, "ValidationException", "clientToken and executionRoleArn are required")
		}
		if in.JobDriver.SparkSubmit == nil || in.JobDriver.SparkSubmit.EntryPoint == "" {
			return awstest.Error(400, "ValidationException", "jobDriver is required")
		}
		if rep, fault := faults.For(start, body); fault {
			return rep
		}
		if parts[1] != app {
			return awstest.Error(404, "ResourceNotFoundException", "Application "+parts[1]+" does not exist")
		}
		if id, seen := f.byToken[in.ClientToken]; seen {
			if a, b := mustJSON(f.runs[id]), mustJSON(in); a != b {
				return awstest.Error(409, "ConflictException", "client token reused with another request")
			}
			return awstest.Reply{Body: map[string]string{"applicationId": app, "jobRunId": id, "arn": "arn:aws:emr-serverless:eu-west-1:123456789012:/applications/" + app + "/jobruns/" + id}}
		}
		id := fmt.Sprintf("00frun%04d", len(f.runs)+1)
		f.runs[id], f.byToken[in.ClientToken] = in, id
		if f.lose {
			f.lose = false
			return awstest.Error(500, "InternalServerException", "connection reset")
		}
		return awstest.Reply{Body: map[string]string{"applicationId": app, "jobRunId": id, "arn": "arn:aws:emr-serverless:eu-west-1:123456789012:/applications/" + app + "/jobruns/" + id}}
	case r.Method == http.MethodGet && len(parts) == 4 && parts[0] == "applications" && parts[2] == "jobruns":
		in, ok := f.runs[parts[3]]
		if !ok || parts[1] != app {
			return awstest.Error(404, "ResourceNotFoundException", "Job run "+parts[3]+" does not exist")
		}
		state := states[status]
		if f.state != "" {
			state = f.state
		}
		jr := map[string]any{
			"applicationId": app, "jobRunId": parts[3], "name": in.Name, "state": state,
			"arn": "arn:aws:emr-serverless:eu-west-1:123456789012:/applications/" + app + "/jobruns/" + parts[3], "createdBy": "arn:aws:iam::123456789012:user/etl",
			"createdAt": 1.7731008e9, "updatedAt": 1.7731009e9, "executionRole": in.ExecutionRoleArn, "releaseLabel": "emr-7.1.0",
			"jobDriver": map[string]any{"sparkSubmit": in.JobDriver.SparkSubmit},
		}
		switch state {
		case "FAILED", "CANCELLED":
			jr["stateDetails"] = "Job failed, ExitCode: 1. args: " + strings.Join(in.JobDriver.SparkSubmit.EntryPointArguments, " ")
		}
		return awstest.Reply{Body: map[string]any{"jobRun": jr}}
	}
	return awstest.Error(404, "UnknownOperationException", r.Method+" "+r.URL.Path)
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

func (f *fakeEMRS) set(fn func(f *fakeEMRS)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

const (
	startOp = "POST /applications/" + app + "/jobruns"
	pollOp  = "GET /applications/" + app + "/jobruns/"
)

func config(f *fakeEMRS) string {
	return `{applicationId: ` + app + `, jobName: "gold-${DATE}", executionRoleArn: "arn:aws:iam::123456789012:role/gold", entryPoint: "s3://jobs/gold.py",
		sparkSubmitParameters: "--conf spark.executor.cores=2", region: ` + awstest.Region + `, endpoint: "` + f.URL + `",
		arguments: {--token: "${env:` + awstest.SecretEnv + `}", --date: "${DATE}"}}`
}

func runner() Runner { return Runner{AWS: awstest.Session(awstest.Env())} }

func pollAuths(f *fakeEMRS) []string {
	var out []string
	for _, c := range f.Calls() {
		if strings.HasPrefix(c.Op, pollOp) {
			out = append(out, awstest.Auth(c))
		}
	}
	return out
}

func TestContract(t *testing.T) {
	triggertest.Run(t, func(t *testing.T) *triggertest.Harness {
		f := newFake(t)
		return &triggertest.Harness{
			Runner:    runner(),
			NewRunner: func() trigger.Runner { return runner() },
			Request:   awstest.Request(t, "emr-serverless", config(f), ""),
			Set:       f.modes.Set,
			Secret:    awstest.SecretKey,
			StartAuth: func() string { return f.LastAuth(startOp) },
			PollAuth:  func() []string { return pollAuths(f) },
			// A run past its executionTimeoutMinutes is reported as
			// FAILED or CANCELLED, not as a state of its own.
			Supports: func(m triggertest.Mode) bool { return m != triggertest.JobTimedOut },
		}
	})
}

func TestStartSendsASparkJobDriver(t *testing.T) {
	f := newFake(t)
	st, err := runner().Start(context.Background(), awstest.Request(t, "emr-serverless", config(f), ""))
	if err != nil || st.Result != nil {
		t.Fatalf("Start = %+v, %v", st, err)
	}
	calls := f.Calls()
	if len(calls) != 1 || calls[0].Op != startOp {
		t.Fatalf("calls = %+v", calls)
	}
	var in startIn
	if err := json.Unmarshal(calls[0].Body, &in); err != nil {
		t.Fatal(err)
	}
	sp := in.JobDriver.SparkSubmit
	if in.Name != "gold-2026-03-10" || in.ExecutionRoleArn != "arn:aws:iam::123456789012:role/gold" || in.ClientToken != awstest.RunID ||
		sp.EntryPoint != "s3://jobs/gold.py" || sp.SparkSubmitParameters != "--conf spark.executor.cores=2" ||
		fmt.Sprint(sp.EntryPointArguments) != fmt.Sprint([]string{"--date=2026-03-10", "--token=" + awstest.SecretKey}) {
		t.Errorf("StartJobRun body = %s", calls[0].Body)
	}
	wantMeta := map[string]string{MetaApplicationID: app, MetaJobRunID: "00frun0001", awsjob.MetaRegion: awstest.Region}
	if st.JobRunID != "00frun0001" || fmt.Sprint(st.Meta) != fmt.Sprint(wantMeta) {
		t.Errorf("Started = %q %v", st.JobRunID, st.Meta)
	}
}

// TestRetriedStartGetsTheSameRun: the first call starts the run but its
// answer is lost (a 500); the engine's retry sends the same client token
// and gets that run, not a second one.
func TestRetriedStartGetsTheSameRun(t *testing.T) {
	f := newFake(t)
	f.set(func(f *fakeEMRS) { f.lose = true })
	req := awstest.Request(t, "emr-serverless", config(f), "")
	if _, err := runner().Start(context.Background(), req); err == nil {
		t.Fatal("the lost answer was not an error")
	}
	st, err := runner().Start(context.Background(), req)
	if err != nil || st.JobRunID != "00frun0001" {
		t.Fatalf("retried Start = %+v, %v; want the first run", st, err)
	}
	var n int
	f.set(func(f *fakeEMRS) { n = len(f.runs) })
	if n != 1 {
		t.Fatalf("%d runs started, want 1", n)
	}
}

func TestPollMapsEveryState(t *testing.T) {
	cases := []struct {
		state    string
		status   trigger.Status
		category run.Category
	}{
		{"SUBMITTED", trigger.StatusRunning, ""},
		{"PENDING", trigger.StatusRunning, ""},
		{"SCHEDULED", trigger.StatusRunning, ""},
		{"RUNNING", trigger.StatusRunning, ""},
		{"QUEUED", trigger.StatusRunning, ""},
		{"CANCELLING", trigger.StatusRunning, ""},
		{"SUCCESS", trigger.StatusSucceeded, ""},
		{"FAILED", trigger.StatusFailed, run.Transient},
		{"CANCELLED", trigger.StatusFailed, run.Permanent},
	}
	for _, c := range cases {
		t.Run(c.state, func(t *testing.T) {
			f := newFake(t)
			req := awstest.Request(t, "emr-serverless", config(f), "")
			st, err := runner().Start(context.Background(), req)
			if err != nil {
				t.Fatal(err)
			}
			f.set(func(f *fakeEMRS) { f.state = c.state })
			req.JobRunID, req.Meta = st.JobRunID, st.Meta
			res, err := runner().Poll(context.Background(), req)
			if err != nil {
				t.Fatalf("Poll: %v", err)
			}
			if res.Status != c.status || res.Category != c.category {
				t.Fatalf("Poll = %+v, want %s %s", res, c.status, c.category)
			}
			if c.status == trigger.StatusFailed {
				want := "EMR Serverless job run " + c.state + ": Job failed, ExitCode: 1. args: --date=2026-03-10 --token=[redacted]"
				if res.Message != want {
					t.Errorf("Message = %q, want %q", res.Message, want)
				}
			}
		})
	}
}
