package airflow_test

import (
	nethttp "net/http"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/engine/enginetest"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/secret/secrettest"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/airflow"
	"github.com/interlockhq/interlock/internal/trigger/httpx/httpxtest"
)

// TestFind: an interrupted call's DAG run is found by the dag_run_id
// Start gave it (Interlock's run id), and by nothing else.
func TestFind(t *testing.T) {
	f, srv := newFake(t)
	req := httpxtest.Request(t, pipeline.JobAirflow, config(srv, ""))
	r := runner(t, srv)

	if st, found, err := r.Find(t.Context(), req); err != nil || found {
		t.Fatalf("before any start: Find = %+v, %v, %v; want not found", st, found, err)
	}
	started, err := r.Start(t.Context(), req)
	if err != nil || started.Result != nil {
		t.Fatalf("Start = %+v, %v", started, err)
	}
	st, found, err := r.Find(t.Context(), req)
	if err != nil || !found || st.JobRunID != req.RunID || st.Result != nil {
		t.Fatalf("after the start: Find = %+v, %v, %v", st, found, err)
	}
	for k, v := range started.Meta {
		if st.Meta[k] != v {
			t.Errorf("Meta[%s] = %q, Start gave %q", k, st.Meta[k], v)
		}
	}
	// What Find returns polls like what Start returned.
	req.JobRunID, req.Meta = st.JobRunID, st.Meta
	if res, err := r.Poll(t.Context(), req); err != nil || res.Status != trigger.StatusRunning {
		t.Fatalf("Poll of the found run = %+v, %v", res, err)
	}

	// Another attempt's identity finds nothing.
	other := httpxtest.Request(t, pipeline.JobAirflow, config(srv, ""))
	other.RunID = strings.Replace(other.RunID, "-a1", "-a2", 1)
	if _, found, err := r.Find(t.Context(), other); err != nil || found {
		t.Fatalf("attempt 2: found %v, %v", found, err)
	}
	if f.with(func() {}); len(f.runs) != 1 {
		t.Fatalf("Find created DAG runs: %d", len(f.runs))
	}
}

// TestFindErrors: when Airflow cannot be asked, Find says so with an error
// (the engine asks again later) and never "not found" (which would make
// the engine start the DAG again). No secret leaks from the answers.
func TestFindErrors(t *testing.T) {
	for _, status := range []int{nethttp.StatusServiceUnavailable, nethttp.StatusTooManyRequests, nethttp.StatusUnauthorized, nethttp.StatusForbidden} {
		t.Run(nethttp.StatusText(status), func(t *testing.T) {
			f, srv := newFake(t)
			req := httpxtest.Request(t, pipeline.JobAirflow, config(srv, ""))
			f.with(func() { f.getStatus = status })
			st, found, err := runner(t, srv).Find(t.Context(), req)
			if err == nil || found || st.JobRunID != "" {
				t.Fatalf("Find = %+v, %v, %v; want an error", st, found, err)
			}
			if leak := secrettest.Leak(err.Error(), secret, nil); leak != "" {
				t.Fatalf("the error leaks a secret (%s): %v", leak, err)
			}
		})
	}
	t.Run("unreachable", func(t *testing.T) {
		_, srv := newFake(t)
		req := httpxtest.Request(t, pipeline.JobAirflow, config(srv, ""))
		r := runner(t, srv)
		srv.Close()
		if _, found, err := r.Find(t.Context(), req); err == nil || found {
			t.Fatalf("Find on a closed server: found %v, %v", found, err)
		}
	})
	t.Run("no run id", func(t *testing.T) {
		_, srv := newFake(t)
		req := httpxtest.Request(t, pipeline.JobAirflow, config(srv, ""))
		req.RunID = ""
		if _, found, err := runner(t, srv).Find(t.Context(), req); err == nil || found {
			t.Fatalf("Find without a run id: found %v, %v", found, err)
		}
	})
}

func TestCrashAndRestart(t *testing.T) {
	enginetest.CrashAndRestart(t, func(t *testing.T) enginetest.Crash {
		f, srv := newFake(t)
		return enginetest.Crash{
			Pipeline: "pipeline: {id: gold}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: airflow, pollInterval: 1m, config: " + config(srv, "") + "}\n",
			NewRunner: func() trigger.Runner {
				return airflow.Runner{Client: httpxtest.Client(t, srv), LookupEnv: env}
			},
			Jobs: func() int {
				var n int
				f.with(func() { n = len(f.runs) })
				return n
			},
			Succeed: func() { f.with(func() { f.state = "success" }) },
		}
	})
}
