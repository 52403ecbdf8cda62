package openlineage_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/alert/alerttest"
	"github.com/interlockhq/interlock/internal/alert/openlineage"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
)

const apiKey = "ol-API-key-5f4e3d2c1b"

// marquez stands in for a lineage backend: it takes RunEvents at
// /api/v1/lineage with the api key as a bearer token, records them, and
// answers as told. Failure answers echo the request.
type marquez struct {
	*httptest.Server
	mu     sync.Mutex
	status int
	header http.Header
	events []map[string]any
	ids    []string
}

func newMarquez(t *testing.T) *marquez {
	m := &marquez{status: http.StatusCreated}
	m.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		m.mu.Lock()
		defer m.mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		echo := fmt.Sprintf("you sent %s %s with %v", r.Method, r.URL, r.Header)
		switch {
		case m.status == -1:
			alerttest.Hangup(w)
			return
		case r.Method != http.MethodPost || r.URL.Path != "/api/v1/lineage":
			http.Error(w, "not here; "+echo, http.StatusNotFound)
			return
		case r.Header.Get("Authorization") != "Bearer "+apiKey:
			http.Error(w, "bad key; "+echo, http.StatusUnauthorized)
			return
		case r.Header.Get("Content-Type") != "application/json":
			http.Error(w, "not json; "+echo, http.StatusUnsupportedMediaType)
			return
		}
		for k, vs := range m.header {
			w.Header()[k] = vs
		}
		if m.status < 200 || m.status > 299 {
			http.Error(w, "failing as told; "+echo, m.status)
			return
		}
		var ev map[string]any
		if err := json.Unmarshal(body, &ev); err != nil {
			http.Error(w, "bad json", http.StatusBadRequest)
			return
		}
		m.events = append(m.events, ev)
		m.ids = append(m.ids, dig(ev, "run", "facets", "interlock", "eventId").(string))
		w.WriteHeader(m.status)
	}))
	t.Cleanup(m.Close)
	return m
}

func (m *marquez) set(status int, h http.Header) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.status, m.header = status, h
}

func (m *marquez) received() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.ids...)
}

func (m *marquez) last() map[string]any {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.events[len(m.events)-1]
}

// dig reads a path of object fields.
func dig(v any, path ...string) any {
	for _, p := range path {
		o, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = o[p]
	}
	return v
}

func newSink(t *testing.T, url string) *openlineage.Sink {
	t.Helper()
	s, err := openlineage.New(openlineage.Config{URL: url, Namespace: "interlock-prod", APIKey: alert.StaticSecret(apiKey)})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestContract: the shared sink contract (every alert arrives, failures
// are classified, the key never leaks).
func TestContract(t *testing.T) {
	statuses := map[alerttest.Mode]int{
		alerttest.OK: 201, alerttest.Unreachable: -1, alerttest.ServerError: 503,
		alerttest.Throttled: 429, alerttest.Rejected: 422,
	}
	alerttest.Run(t, func(t *testing.T) *alerttest.Harness {
		m := newMarquez(t)
		return &alerttest.Harness{
			Sink: newSink(t, m.URL),
			Set: func(mode alerttest.Mode) {
				h := http.Header{}
				if mode == alerttest.Throttled {
					h.Set("Retry-After", "7")
				}
				m.set(statuses[mode], h)
			},
			Received:      m.received,
			Secrets:       []string{apiKey},
			ThrottleDelay: true,
		}
	})
}

var uuidRE = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestRunEventsFieldByField: a period's trigger, verdicts and end, as
// Marquez receives them, checked against the specification's fields.
func TestRunEventsFieldByField(t *testing.T) {
	m := newMarquez(t)
	s := newSink(t, m.URL+"/")
	at := time.Date(2026, 11, 21, 7, 0, 0, 0, time.UTC)
	deliver := func(e event.Event) map[string]any {
		t.Helper()
		if _, err := s.Deliver(t.Context(), alerttest.Alert(s, e)); err != nil {
			t.Fatalf("%s: %v", e.Type, err)
		}
		return m.last()
	}
	base := event.Event{PipelineID: "gold-report", ScheduleID: "cron", Date: "2026-11-20", Time: at}
	with := func(id string, typ event.Type, offset time.Duration, msg string, kv ...any) event.Event {
		e := base
		e.ID, e.Type, e.Time, e.Message, e.Detail = id, typ, at.Add(offset), msg, run.Detail(kv...)
		return e
	}
	passed := deliver(with("ev-1", event.ValidationPassed, 0, "all 2 rules passed", "rules", "2/2 passed", "passedRules", "orders-loaded gte rowCount, orders-tested equals assertionsFailed"))
	start := deliver(with("ev-2", event.JobTriggered, time.Second, "triggered airflow job (attempt 1)",
		"jobType", "airflow", "jobRunId", "interlock-gold-report-2026-11-20-0", "attempt", 1, "generation", 0, "cause", "upstream",
		"periodStart", time.Date(2026, 11, 19, 23, 0, 0, 0, time.UTC), "periodEnd", time.Date(2026, 11, 20, 23, 0, 0, 0, time.UTC),
		"parentPipeline", "orders", "parentPeriod", "2026-11-20"))
	retry := deliver(with("ev-3", event.JobTriggered, time.Minute, "triggered airflow job (attempt 2)", "attempt", 2))
	done := deliver(with("ev-4", event.JobCompleted, time.Hour, "job completed (attempt 2)", "attempt", 2))
	failed := deliver(with("ev-5", event.RetryExhausted, time.Hour, "retry limit reached", "source", "job"))
	polled := deliver(with("ev-6", event.JobPollExhausted, time.Hour, "poll window closed"))
	infra := deliver(with("ev-7", event.RetryExhausted, time.Hour, "retry limit reached", "source", "trigger"))

	runID := openlineage.RunID("interlock-prod", "gold-report", "2026-11-20")
	if !uuidRE.MatchString(runID) {
		t.Fatalf("runId %q is not a UUID", runID)
	}
	for _, tc := range []struct {
		name string
		ev   map[string]any
		typ  string
		time string
	}{
		{"validation passed", passed, "OTHER", "2026-11-21T07:00:00Z"},
		{"job triggered", start, "START", "2026-11-21T07:00:01Z"},
		{"retry triggered", retry, "RUNNING", "2026-11-21T07:01:00Z"},
		{"job completed", done, "COMPLETE", "2026-11-21T08:00:00Z"},
		{"retries exhausted", failed, "FAIL", "2026-11-21T08:00:00Z"},
		{"poll exhausted", polled, "FAIL", "2026-11-21T08:00:00Z"},
		{"trigger infrastructure exhausted", infra, "OTHER", "2026-11-21T08:00:00Z"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ev := tc.ev
			for path, want := range map[string]any{
				"eventType": tc.typ, "eventTime": tc.time,
				"producer":  "https://github.com/interlockhq/interlock",
				"schemaURL": "https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent",
			} {
				if got := dig(ev, path); got != want {
					t.Errorf("%s = %v, want %v", path, got, want)
				}
			}
			if got := dig(ev, "run", "runId"); got != runID {
				t.Errorf("run.runId = %v, want the period's %s", got, runID)
			}
			if dig(ev, "job", "namespace") != "interlock-prod" || dig(ev, "job", "name") != "gold-report" {
				t.Errorf("job = %v", dig(ev, "job"))
			}
			jt := dig(ev, "job", "facets", "jobType")
			if dig(jt, "processingType") != "BATCH" || dig(jt, "integration") != "INTERLOCK" || dig(jt, "jobType") != "PIPELINE" ||
				dig(jt, "_producer") != openlineage.Producer || dig(jt, "_schemaURL") != openlineage.JobTypeSchema {
				t.Errorf("job.facets.jobType = %v", jt)
			}
			il := dig(ev, "run", "facets", "interlock")
			if dig(il, "pipelineId") != "gold-report" || dig(il, "period") != "2026-11-20" || dig(il, "scheduleId") != "cron" ||
				dig(il, "_producer") != openlineage.Producer || dig(il, "_schemaURL") != openlineage.InterlockSchema {
				t.Errorf("run.facets.interlock = %v", il)
			}
			if in, out := dig(ev, "inputs"), dig(ev, "outputs"); fmt.Sprint(in) != "[]" || fmt.Sprint(out) != "[]" {
				t.Errorf("inputs %v outputs %v, want empty lists", in, out)
			}
		})
	}
	// The verdicts ride on the OTHER event of VALIDATION_PASSED.
	if d := dig(passed, "run", "facets", "interlock", "detail"); dig(d, "rules") != "2/2 passed" ||
		dig(d, "passedRules") != "orders-loaded gte rowCount, orders-tested equals assertionsFailed" ||
		dig(passed, "run", "facets", "interlock", "event") != "VALIDATION_PASSED" {
		t.Errorf("verdicts: %v", dig(passed, "run", "facets", "interlock"))
	}
	// START: the period's nominal time, the upstream parent.
	nt := dig(start, "run", "facets", "nominalTime")
	if dig(nt, "nominalStartTime") != "2026-11-19T23:00:00Z" || dig(nt, "nominalEndTime") != "2026-11-20T23:00:00Z" ||
		dig(nt, "_producer") != openlineage.Producer || dig(nt, "_schemaURL") != openlineage.NominalTimeSchema {
		t.Errorf("nominalTime = %v", nt)
	}
	p := dig(start, "run", "facets", "parent")
	if dig(p, "run", "runId") != openlineage.RunID("interlock-prod", "orders", "2026-11-20") || dig(p, "job", "namespace") != "interlock-prod" ||
		dig(p, "job", "name") != "orders" || dig(p, "_schemaURL") != openlineage.ParentSchema || dig(p, "_producer") != openlineage.Producer {
		t.Errorf("parent = %v", p)
	}
	if d := dig(start, "run", "facets", "interlock", "detail"); dig(d, "jobRunId") != "interlock-gold-report-2026-11-20-0" || dig(d, "cause") != "upstream" {
		t.Errorf("START's interlock detail = %v", d)
	}
	for _, ev := range []map[string]any{passed, retry, done} {
		if dig(ev, "run", "facets", "parent") != nil || dig(ev, "run", "facets", "nominalTime") != nil {
			t.Errorf("%v: a facet without the detail that names it", dig(ev, "eventType"))
		}
	}
	// An event of no pipeline is the process's job.
	w := deliver(event.Event{ID: "ev-8", Type: event.WatchdogDegraded, Time: at, Message: "watchdog checks failed"})
	if dig(w, "job", "name") != "interlock" || dig(w, "eventType") != "OTHER" {
		t.Errorf("watchdog event: %v", w)
	}
}

// TestRunIDs: one per namespace, pipeline and period.
func TestRunIDs(t *testing.T) {
	seen := map[string]string{}
	for _, k := range [][3]string{{"a", "p", "2026-11-20"}, {"b", "p", "2026-11-20"}, {"a", "q", "2026-11-20"}, {"a", "p", "2026-11-21"}, {"a", "p", "2026-11-20T01"}, {"a", "p", ""}, {"a\x00p", "", "2026-11-20"}} {
		id := openlineage.RunID(k[0], k[1], k[2])
		if !uuidRE.MatchString(id) {
			t.Fatalf("%q: %q is not a version 8 UUID", k, id)
		}
		if other, dup := seen[id]; dup {
			t.Fatalf("%q and %s share run id %s", k, other, id)
		}
		seen[id] = fmt.Sprint(k)
		if openlineage.RunID(k[0], k[1], k[2]) != id {
			t.Fatal("RunID is not stable")
		}
	}
}

// TestConfig: a URL is required; a missing api key refuses the start.
func TestConfig(t *testing.T) {
	if _, err := openlineage.New(openlineage.Config{URL: "marquez:5000"}); err == nil {
		t.Error("a URL without a scheme was accepted")
	}
	if _, err := openlineage.New(openlineage.Config{URL: "http://marquez:5000", APIKey: alert.EnvSecret("OL_KEY_UNSET", func(string) (string, bool) { return "", false })}); err == nil {
		t.Error("an api key from an unset variable was accepted")
	}
	s, err := openlineage.New(openlineage.Config{URL: "http://marquez:5000/"})
	if err != nil || s.Name() != openlineage.Name("http://marquez:5000/") {
		t.Fatalf("%v %v", s, err)
	}
}
