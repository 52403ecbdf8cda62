package stepfunction

import (
	"context"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/engine/enginetest"
	"github.com/interlockhq/interlock/internal/secret/secrettest"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/awsjob/awstest"
	"github.com/interlockhq/interlock/internal/trigger/triggertest"
)

// TestFind: the execution an interrupted call started is found by the
// name Start gave it (ExecutionName of the run id) with DescribeExecution,
// whatever its status; a name no execution has is "not found".
func TestFind(t *testing.T) {
	f := newFake(t)
	req := awstest.Request(t, "step-function", config(f), "")
	if st, found, err := runner().Find(context.Background(), req); err != nil || found {
		t.Fatalf("before any start: Find = %+v, %v, %v; want not found", st, found, err)
	}
	started, err := runner().Start(context.Background(), req)
	if err != nil || started.Result != nil {
		t.Fatalf("Start = %+v, %v", started, err)
	}
	for _, status := range []string{"RUNNING", "SUCCEEDED", "FAILED"} {
		f.set(func(f *fakeSFN) { f.state = status })
		st, found, err := runner().Find(context.Background(), req)
		if err != nil || !found || st.JobRunID != started.JobRunID || st.Meta[MetaExecutionARN] != started.JobRunID || st.Result != nil {
			t.Fatalf("%s: Find = %+v, %v, %v; want %s", status, st, found, err, started.JobRunID)
		}
	}
	if n := f.count(); n != 1 || f.Count("StartExecution") != 1 {
		t.Fatalf("the lookups started executions: %d", n)
	}
	// Another attempt's identity finds nothing.
	other := req
	other.RunID = strings.Replace(req.RunID, "-a1", "-a2", 1)
	if _, found, err := runner().Find(context.Background(), other); err != nil || found {
		t.Fatalf("attempt 2: found %v, %v", found, err)
	}
	// The found execution polls as the started one does.
	st, _, _ := runner().Find(context.Background(), req)
	req.JobRunID, req.Meta = st.JobRunID, st.Meta
	f.set(func(f *fakeSFN) { f.state = "SUCCEEDED" })
	if res, err := runner().Poll(context.Background(), req); err != nil || res.Status != trigger.StatusSucceeded {
		t.Fatalf("Poll = %+v, %v", res, err)
	}
}

// TestFindErrors: Step Functions that cannot be asked is an error, never
// "not found" (which would start the execution again). No secret leaks.
func TestFindErrors(t *testing.T) {
	for _, rep := range []awstest.Reply{
		awstest.Error(500, "InternalFailure", "Internal failure "+triggertest.Echo(awstest.SecretKey, nil)),
		awstest.Error(400, "ThrottlingException", "Rate exceeded"),
		awstest.Error(400, "AccessDeniedException", "not authorized to perform states:DescribeExecution "+triggertest.Echo(awstest.SecretKey, nil)),
	} {
		t.Run(rep.ErrorCode, func(t *testing.T) {
			down := awstest.NewRPC(t, "1.0", "AWSStepFunctions", "states", func(string, []byte) awstest.Reply { return rep })
			req := awstest.Request(t, "step-function", config(&fakeSFN{Server: down}), "")
			st, found, err := runner().Find(context.Background(), req)
			if err == nil || found || st.JobRunID != "" {
				t.Fatalf("Find = %+v, %v, %v; want an error", st, found, err)
			}
			if leak := secrettest.Leak(err.Error(), awstest.SecretKey, nil); leak != "" {
				t.Fatalf("the error leaks the secret (%s): %v", leak, err)
			}
		})
	}
	t.Run("not a state machine ARN", func(t *testing.T) {
		f := newFake(t)
		req := awstest.Request(t, "step-function", strings.Replace(config(f), machine, "arn:aws:states:us-west-2:123456789012:activity:gold", 1), "")
		if _, found, err := runner().Find(context.Background(), req); err == nil || found {
			t.Fatalf("Find = %v, %v; want an error", found, err)
		}
	})
}

func TestCrashAndRestart(t *testing.T) {
	enginetest.CrashAndRestart(t, func(t *testing.T) enginetest.Crash {
		f := newFake(t)
		return enginetest.Crash{
			Pipeline:  "pipeline: {id: gold}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: step-function, pollInterval: 1m, config: " + config(f) + "}\n",
			NewRunner: func() trigger.Runner { return Runner{AWS: awstest.Session(awstest.Env())} },
			Jobs:      f.count,
			Succeed:   func() { f.set(func(f *fakeSFN) { f.state = "SUCCEEDED" }) },
		}
	})
}
