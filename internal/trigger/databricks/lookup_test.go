package databricks_test

import (
	nethttp "net/http"
	"testing"

	"github.com/interlockhq/interlock/internal/engine/enginetest"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/secret/secrettest"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/databricks"
	"github.com/interlockhq/interlock/internal/trigger/httpx/httpxtest"
)

// TestFind: the lookup repeats run-now with the call's idempotency token.
// A run the interrupted call started is returned (found); when the call
// never reached Databricks, the lookup starts the run — exactly one run
// holds the token either way, so Find never answers "not found".
func TestFind(t *testing.T) {
	t.Run("the call had started a run: found", func(t *testing.T) {
		f, srv := newFake(t)
		req := httpxtest.Request(t, pipeline.JobDatabricks, config(srv, ""))
		r := runner(t, srv)
		started, err := r.Start(t.Context(), req)
		if err != nil || started.Result != nil {
			t.Fatalf("Start = %+v, %v", started, err)
		}
		st, found, err := r.Find(t.Context(), req)
		if err != nil || !found || st.JobRunID != started.JobRunID || st.Meta[databricks.MetaRunID] != started.JobRunID {
			t.Fatalf("Find = %+v, %v, %v; want run %s", st, found, err, started.JobRunID)
		}
		f.with(func() {
			if len(f.runs) != 1 {
				t.Fatalf("%d runs, want 1", len(f.runs))
			}
		})
		req.JobRunID, req.Meta = st.JobRunID, st.Meta
		if res, err := r.Poll(t.Context(), req); err != nil || res.Status != trigger.StatusRunning {
			t.Fatalf("Poll of the found run = %+v, %v", res, err)
		}
	})
	t.Run("the call had started nothing: the lookup starts the one run", func(t *testing.T) {
		f, srv := newFake(t)
		req := httpxtest.Request(t, pipeline.JobDatabricks, config(srv, ""))
		r := runner(t, srv)
		a, found, err := r.Find(t.Context(), req)
		if err != nil || !found || a.JobRunID == "" {
			t.Fatalf("Find = %+v, %v, %v", a, found, err)
		}
		b, found, err := r.Find(t.Context(), req)
		if err != nil || !found || b.JobRunID != a.JobRunID {
			t.Fatalf("second Find = %+v, %v, %v; want run %s", b, found, err, a.JobRunID)
		}
		f.with(func() {
			if len(f.runs) != 1 {
				t.Fatalf("%d runs, want 1", len(f.runs))
			}
		})
	})
}

// TestFindErrors: Databricks that cannot be asked, or refuses the repeated
// call (the job is gone), is an error — never a run, never "not found".
func TestFindErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		setup func(f *fakeWorkspace)
	}{
		{"5xx", func(f *fakeWorkspace) { f.start = nethttp.StatusInternalServerError }},
		{"throttled", func(f *fakeWorkspace) { f.start = nethttp.StatusTooManyRequests }},
		{"refused: the job no longer exists", func(f *fakeWorkspace) { f.jobs[42] = false }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, srv := newFake(t)
			f.with(func() { tc.setup(f) })
			req := httpxtest.Request(t, pipeline.JobDatabricks, config(srv, ""))
			st, found, err := runner(t, srv).Find(t.Context(), req)
			if err == nil || found || st.JobRunID != "" || st.Result != nil {
				t.Fatalf("Find = %+v, %v, %v; want an error", st, found, err)
			}
			if leak := secrettest.Leak(err.Error(), secret, nil); leak != "" {
				t.Fatalf("the error leaks a secret (%s): %v", leak, err)
			}
			f.with(func() {
				if len(f.runs) != 0 {
					t.Fatalf("%d runs", len(f.runs))
				}
			})
		})
	}
}

func TestCrashAndRestart(t *testing.T) {
	enginetest.CrashAndRestart(t, func(t *testing.T) enginetest.Crash {
		f, srv := newFake(t)
		return enginetest.Crash{
			Pipeline: "pipeline: {id: gold}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: databricks, pollInterval: 1m, config: " + config(srv, "") + "}\n",
			NewRunner: func() trigger.Runner {
				return databricks.Runner{Client: httpxtest.Client(t, srv), LookupEnv: env}
			},
			Jobs: func() int {
				var n int
				f.with(func() { n = len(f.runs) })
				return n
			},
			Succeed: func() { f.with(func() { f.state = runState{life: "TERMINATED", result: "SUCCESS"} }) },
		}
	})
}
