package emr

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
	os.Unsetenv("AWS_ENDPOINT_URL_EMR")
	os.Unsetenv("AWS_PROFILE")
	os.Exit(m.Run())
}

// fakeEMR speaks EMR's awsJson 1.1 protocol for AddJobFlowSteps and
// DescribeStep on one cluster, j-GOLD.
type fakeEMR struct {
	*awstest.Server
	modes awstest.Modes

	mu    sync.Mutex
	steps map[string]stepIn
	state string // overrides the state the modes give
}

type stepIn struct {
	Name            string
	ActionOnFailure string
	HadoopJarStep   struct {
		Jar  string
		Args []string
	}
}

const cluster = "j-GOLD"

var faults = awstest.Faults{
	Throttled:   awstest.Error(400, "ThrottlingException", "Rate exceeded"),
	ServerError: awstest.Error(500, "InternalServerError", "Internal error"),
	Rejected:    awstest.Error(400, "InvalidRequestException", "Cluster id 'j-GOLD' is not valid."),
}

var states = map[triggertest.Mode]string{
	triggertest.JobRunning:   "RUNNING",
	triggertest.JobSucceeded: "COMPLETED",
	triggertest.JobFailed:    "FAILED",
}

func newFake(t *testing.T) *fakeEMR {
	f := &fakeEMR{steps: map[string]stepIn{}}
	f.Server = awstest.NewRPC(t, "1.1", "ElasticMapReduce", "elasticmapreduce", f.handle)
	return f
}

func (f *fakeEMR) handle(op string, body []byte) awstest.Reply {
	start, status := f.modes.Get()
	f.mu.Lock()
	defer f.mu.Unlock()
	switch op {
	case "AddJobFlowSteps":
		var in struct {
			JobFlowId string
			Steps     []stepIn
		}
		if err := json.Unmarshal(body, &in); err != nil || len(in.Steps) == 0 {
			return awstest.Error(400, "ValidationException", "Steps is required")
		}
		if rep, fault := faults.For(start, body); fault {
			return rep
		}
		if in.JobFlowId != cluster {
			return awstest.Error(400, "InvalidRequestException", "Cluster id '"+in.JobFlowId+"' is not valid.")
		}
		var ids []string
		for _, s := range in.Steps {
			id := fmt.Sprintf("s-%04d", len(f.steps)+1)
			f.steps[id] = s
			ids = append(ids, id)
		}
		return awstest.Reply{Body: map[string]any{"StepIds": ids}}
	case "DescribeStep":
		var in struct{ ClusterId, StepId string }
		_ = json.Unmarshal(body, &in)
		s, ok := f.steps[in.StepId]
		if !ok || in.ClusterId != cluster {
			return awstest.Error(400, "InvalidRequestException", "Step id '"+in.StepId+"' is not valid.")
		}
		state := states[status]
		if f.state != "" {
			state = f.state
		}
		st := map[string]any{"State": state}
		switch state {
		case "FAILED":
			st["FailureDetails"] = map[string]string{
				"Reason":  "Unknown Error.",
				"Message": "Exception in thread main with args " + strings.Join(s.HadoopJarStep.Args, " "),
				"LogFile": "s3://logs/j-GOLD/steps/" + in.StepId + "/stderr.gz",
			}
		case "CANCELLED", "INTERRUPTED":
			st["StateChangeReason"] = map[string]string{"Message": "Cancelled by user with args " + strings.Join(s.HadoopJarStep.Args, " ")}
		}
		return awstest.Reply{Body: map[string]any{"Step": map[string]any{
			"Id": in.StepId, "Name": s.Name, "ActionOnFailure": s.ActionOnFailure,
			"Config": map[string]any{"Jar": s.HadoopJarStep.Jar, "Args": s.HadoopJarStep.Args},
			"Status": st,
		}}}
	}
	return awstest.Error(400, "UnknownOperationException", op)
}

func (f *fakeEMR) setState(s string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.state = s
}

func config(f *fakeEMR) string {
	return `{clusterId: ` + cluster + `, stepName: "gold-${DATE}", command: "s3://jars/gold.jar", region: ` + awstest.Region + `, endpoint: "` + f.URL + `",
		arguments: {token: "${env:` + awstest.SecretEnv + `}", date: "${DATE}", alpha: one, "--zeta": last}}`
}

func runner() Runner { return Runner{AWS: awstest.Session(awstest.Env())} }

func TestContract(t *testing.T) {
	triggertest.Run(t, func(t *testing.T) *triggertest.Harness {
		f := newFake(t)
		return &triggertest.Harness{
			Runner:    runner(),
			NewRunner: func() trigger.Runner { return runner() },
			Request:   awstest.Request(t, "emr", config(f), ""),
			Set:       f.modes.Set,
			Secret:    awstest.SecretKey,
			StartAuth: func() string { return f.LastAuth("AddJobFlowSteps") },
			PollAuth:  func() []string { return f.Auths("DescribeStep") },
			// EMR steps have no timeout state of their own.
			Supports: func(m triggertest.Mode) bool { return m != triggertest.JobTimedOut },
		}
	})
}

func TestStartAddsOneStepWithSortedArguments(t *testing.T) {
	f := newFake(t)
	st, err := runner().Start(context.Background(), awstest.Request(t, "emr", config(f), ""))
	if err != nil || st.Result != nil {
		t.Fatalf("Start = %+v, %v", st, err)
	}
	calls := f.Calls()
	if len(calls) != 1 {
		t.Fatalf("calls = %d", len(calls))
	}
	var in struct {
		JobFlowId string
		Steps     []stepIn
	}
	if err := json.Unmarshal(calls[0].Body, &in); err != nil {
		t.Fatal(err)
	}
	if in.JobFlowId != cluster || len(in.Steps) != 1 {
		t.Fatalf("AddJobFlowSteps = %+v", in)
	}
	s := in.Steps[0]
	wantArgs := []string{"--zeta=last", "alpha=one", "date=2026-03-10", "token=" + awstest.SecretKey}
	if s.Name != "gold-2026-03-10" || s.ActionOnFailure != "CONTINUE" || s.HadoopJarStep.Jar != "s3://jars/gold.jar" || fmt.Sprint(s.HadoopJarStep.Args) != fmt.Sprint(wantArgs) {
		t.Errorf("step = %+v, want args %v", s, wantArgs)
	}
	wantMeta := map[string]string{MetaClusterID: cluster, MetaStepID: "s-0001", awsjob.MetaRegion: awstest.Region}
	if st.JobRunID != "s-0001" || fmt.Sprint(st.Meta) != fmt.Sprint(wantMeta) {
		t.Errorf("Started = %q %v", st.JobRunID, st.Meta)
	}
}

func TestPollMapsEveryState(t *testing.T) {
	cases := []struct {
		state    string
		status   trigger.Status
		category run.Category
		msg      string
	}{
		{"PENDING", trigger.StatusRunning, "", ""},
		{"RUNNING", trigger.StatusRunning, "", ""},
		{"CANCEL_PENDING", trigger.StatusRunning, "", ""},
		{"COMPLETED", trigger.StatusSucceeded, "", ""},
		{"FAILED", trigger.StatusFailed, run.Transient, "EMR step FAILED: Unknown Error.; Exception in thread main with args --zeta=last alpha=one date=2026-03-10 token=[redacted]; log s3://logs/j-GOLD/steps/s-0001/stderr.gz"},
		{"CANCELLED", trigger.StatusFailed, run.Permanent, "EMR step CANCELLED: Cancelled by user with args"},
		{"INTERRUPTED", trigger.StatusFailed, run.Permanent, "EMR step INTERRUPTED: Cancelled by user"},
	}
	for _, c := range cases {
		t.Run(c.state, func(t *testing.T) {
			f := newFake(t)
			req := awstest.Request(t, "emr", config(f), "")
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
			if res.Status != c.status || res.Category != c.category || !strings.HasPrefix(res.Message, c.msg) {
				t.Fatalf("Poll = %+v, want %s %s %q…", res, c.status, c.category, c.msg)
			}
			if strings.Contains(res.Message, awstest.SecretKey) {
				t.Fatalf("message leaks the secret: %q", res.Message)
			}
		})
	}
	t.Run("unknown state is an error", func(t *testing.T) {
		f := newFake(t)
		req := awstest.Request(t, "emr", config(f), "")
		st, _ := runner().Start(context.Background(), req)
		f.setState("SUSPENDED")
		req.JobRunID, req.Meta = st.JobRunID, st.Meta
		if _, err := runner().Poll(context.Background(), req); err == nil || !strings.Contains(err.Error(), "SUSPENDED") {
			t.Fatalf("Poll error = %v", err)
		}
	})
}

func TestStartErrors(t *testing.T) {
	cases := []struct {
		status  int
		code    string
		refused bool
	}{
		{400, "ThrottlingException", false},
		{500, "InternalServerError", false},
		{500, "InternalServerException", false},
		{400, "InvalidRequestException", true},
		{400, "AccessDeniedException", true},
	}
	for _, c := range cases {
		t.Run(c.code, func(t *testing.T) {
			srv := awstest.NewRPC(t, "1.1", "ElasticMapReduce", "elasticmapreduce", func(string, []byte) awstest.Reply {
				return awstest.Error(c.status, c.code, "no")
			})
			req := awstest.Request(t, "emr", `{clusterId: j-X, stepName: s, command: x.jar, region: eu-west-1, endpoint: "`+srv.URL+`"}`, "")
			st, err := runner().Start(context.Background(), req)
			if c.refused != (err == nil && st.Result != nil && st.Result.Category == run.Permanent) || srv.Count("AddJobFlowSteps") != 1 {
				t.Fatalf("Start = %+v, %v (calls %d)", st.Result, err, srv.Count("AddJobFlowSteps"))
			}
		})
	}
}
