package emrserverless

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

func (f *fakeEMRS) count() int {
	var n int
	f.set(func(f *fakeEMRS) { n = len(f.runs) })
	return n
}

// TestFind: the lookup repeats StartJobRun with the call's client token.
// The job run the interrupted call started is returned (found); when the
// call never reached EMR Serverless, the lookup starts it — one job run
// holds the token either way, so Find never answers "not found".
func TestFind(t *testing.T) {
	t.Run("the call had started a job run: found", func(t *testing.T) {
		f := newFake(t)
		req := awstest.Request(t, "emr-serverless", config(f), "")
		started, err := runner().Start(context.Background(), req)
		if err != nil || started.Result != nil {
			t.Fatalf("Start = %+v, %v", started, err)
		}
		st, found, err := runner().Find(context.Background(), req)
		if err != nil || !found || st.JobRunID != started.JobRunID || st.Meta[MetaJobRunID] != started.JobRunID || f.count() != 1 {
			t.Fatalf("Find = %+v, %v, %v (job runs %d); want %s", st, found, err, f.count(), started.JobRunID)
		}
		req.JobRunID, req.Meta = st.JobRunID, st.Meta
		if res, err := runner().Poll(context.Background(), req); err != nil || res.Status != trigger.StatusRunning {
			t.Fatalf("Poll of the found run = %+v, %v", res, err)
		}
	})
	t.Run("the call had started nothing: the lookup starts the one job run", func(t *testing.T) {
		f := newFake(t)
		req := awstest.Request(t, "emr-serverless", config(f), "")
		a, found, err := runner().Find(context.Background(), req)
		if err != nil || !found || a.JobRunID == "" {
			t.Fatalf("Find = %+v, %v, %v", a, found, err)
		}
		b, found, err := runner().Find(context.Background(), req)
		if err != nil || !found || b.JobRunID != a.JobRunID || f.count() != 1 {
			t.Fatalf("second Find = %+v, %v, %v (job runs %d); want %s", b, found, err, f.count(), a.JobRunID)
		}
	})
}

// TestFindErrors: EMR Serverless that cannot be asked, or refuses the
// repeated start, is an error — never a job run, never "not found". A
// config changed since the call sends another request under the same
// client token, which EMR Serverless refuses: the outcome stays unknown
// rather than a second job run starting.
func TestFindErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(t *testing.T, f *fakeEMRS, req *trigger.Request)
	}{
		{"5xx", func(t *testing.T, f *fakeEMRS, _ *trigger.Request) {
			f.modes.Set(triggertest.StartServerError, triggertest.JobRunning)
		}},
		{"throttled", func(t *testing.T, f *fakeEMRS, _ *trigger.Request) {
			f.modes.Set(triggertest.StartThrottled, triggertest.JobRunning)
		}},
		{"refused: no such application", func(t *testing.T, f *fakeEMRS, _ *trigger.Request) {
			f.modes.Set(triggertest.StartRejected, triggertest.JobRunning)
		}},
		{"refused: the config changed since the call", func(t *testing.T, f *fakeEMRS, req *trigger.Request) {
			if _, err := runner().Start(context.Background(), *req); err != nil {
				t.Fatal(err)
			}
			*req = awstest.Request(t, "emr-serverless", strings.Replace(config(f), "spark.executor.cores=2", "spark.executor.cores=4", 1), "")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake(t)
			req := awstest.Request(t, "emr-serverless", config(f), "")
			tc.setup(t, f, &req)
			before := f.count()
			st, found, err := runner().Find(context.Background(), req)
			if err == nil || found || st.JobRunID != "" || st.Result != nil {
				t.Fatalf("Find = %+v, %v, %v; want an error", st, found, err)
			}
			if leak := secrettest.Leak(err.Error(), awstest.SecretKey, nil); leak != "" {
				t.Fatalf("the error leaks the secret (%s): %v", leak, err)
			}
			if f.count() != before {
				t.Fatalf("a failed lookup started a job run: %d → %d", before, f.count())
			}
		})
	}
}

func TestCrashAndRestart(t *testing.T) {
	enginetest.CrashAndRestart(t, func(t *testing.T) enginetest.Crash {
		f := newFake(t)
		return enginetest.Crash{
			Pipeline:  "pipeline: {id: gold}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: emr-serverless, pollInterval: 1m, config: " + config(f) + "}\n",
			NewRunner: func() trigger.Runner { return Runner{AWS: awstest.Session(awstest.Env())} },
			Jobs:      f.count,
			Succeed:   func() { f.set(func(f *fakeEMRS) { f.state = "SUCCESS" }) },
		}
	})
}
