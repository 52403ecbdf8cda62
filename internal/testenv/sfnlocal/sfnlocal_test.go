package sfnlocal

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"
)

// oneTask is a machine of one Task that retries a throttled invocation
// once and catches everything else.
const oneTask = `{"StartAt": "Step", "States": {
  "Step": {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:000000000000:function:f",
    "Retry": [{"ErrorEquals": ["Lambda.TooManyRequestsException"], "MaxAttempts": 1}],
    "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Caught"}],
    "End": true},
  "Caught": {"Type": "Fail", "Error": "Caught"}}}`

// script is an Invoke endpoint answering each request with the next of
// its answers (429 or 200), or holding it until the caller goes away.
type script struct {
	mu       sync.Mutex
	answers  []int // 429, 200, or 0: hold
	requests int
	gone     chan struct{} // closed when a held request's caller went away
}

func (s *script) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The body read to its end: the server then notices the caller going
	// away (the request's context ends).
	_, _ = io.Copy(io.Discard, r.Body)
	s.mu.Lock()
	a := 200
	if s.requests < len(s.answers) {
		a = s.answers[s.requests]
	}
	s.requests++
	s.mu.Unlock()
	switch a {
	case 0:
		select {
		case <-r.Context().Done():
			close(s.gone)
		case <-time.After(2 * time.Minute):
		}
	case http.StatusTooManyRequests:
		w.Header().Set("X-Amzn-ErrorType", "TooManyRequestsException")
		w.WriteHeader(a)
		_, _ = w.Write([]byte(`{"Type":"User","message":"Rate Exceeded."}`))
	default:
		_, _ = w.Write([]byte(`{"ok":true}`))
	}
}

func (s *script) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

func serveScript(t *testing.T, answers ...int) (*Machine, *script, chan Result) {
	t.Helper()
	s := &script{answers: answers, gone: make(chan struct{})}
	hs := httptest.NewServer(s)
	t.Cleanup(hs.Close)
	ends := make(chan Result, 1)
	m := Serve(t, hs.URL, []byte(oneTask), func(r Result) { ends <- r })
	return m, s, ends
}

func end(t *testing.T, ends chan Result) Result {
	t.Helper()
	select {
	case r := <-ends:
		return r
	case <-time.After(time.Minute):
		t.Fatal("the execution did not end within a minute")
	}
	return Result{}
}

// TestTasksInvokeLambdaAsStepFunctionsDoes: a 429 from Lambda's Invoke API
// is Lambda.TooManyRequestsException to the state's Retry, and each
// attempt is one request (the SDK's own retries would hide the refusals
// from the state machine).
func TestTasksInvokeLambdaAsStepFunctionsDoes(t *testing.T) {
	Driver(t)
	t.Run("retried by name", func(t *testing.T) {
		m, s, ends := serveScript(t, http.StatusTooManyRequests, http.StatusOK)
		if err := m.Start(Execution{Name: "one", Input: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		if r := end(t, ends); r.Status != "SUCCEEDED" || s.count() != 2 {
			t.Fatalf("%+v after %d requests, want SUCCEEDED after 2", r, s.count())
		}
	})
	t.Run("one request per attempt", func(t *testing.T) {
		m, s, ends := serveScript(t, http.StatusTooManyRequests, http.StatusTooManyRequests, http.StatusOK)
		if err := m.Start(Execution{Name: "two", Input: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		if r := end(t, ends); r.Status != "FAILED" || r.States[len(r.States)-1] != "Caught" || s.count() != 2 {
			t.Fatalf("%+v after %d requests, want FAILED (Caught) after 2", r, s.count())
		}
	})
}

// TestStopEndsAnExecutionAndItsCall: a stopped execution ends with the
// status it was stopped with, and its Lambda call in flight is abandoned.
func TestStopEndsAnExecutionAndItsCall(t *testing.T) {
	Driver(t)
	for _, status := range []string{Aborted, TimedOut} {
		t.Run(status, func(t *testing.T) {
			m, s, ends := serveScript(t, 0)
			if err := m.Start(Execution{Name: "held", Input: map[string]any{}}); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(time.Minute)
			for s.count() == 0 {
				if time.Now().After(deadline) {
					t.Fatal("the Task made no request within a minute")
				}
				time.Sleep(5 * time.Millisecond)
			}
			if err := m.Stop("held", status); err != nil {
				t.Fatal(err)
			}
			if r := end(t, ends); r.Status != status {
				t.Fatalf("%+v, want %s", r, status)
			}
			select {
			case <-s.gone:
			case <-time.After(time.Minute):
				t.Fatal("the held request was not closed")
			}
			if m.Running() != 0 {
				t.Fatalf("%d running", m.Running())
			}
		})
	}
	if err := (&Machine{}).Stop("x", "FAILED"); err == nil {
		t.Fatal("a stop with a status Step Functions does not stop with was sent")
	}
}

// TestStartTimeOnTheTestsClock: a Task passing $$.Execution.StartTime to
// its function passes the start the test gave, not the wall clock's.
func TestStartTimeOnTheTestsClock(t *testing.T) {
	Driver(t)
	got := make(chan string, 1)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Started string `json:"started"`
		}
		_ = json.NewDecoder(r.Body).Decode(&in)
		got <- in.Started
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(hs.Close)
	def := `{"StartAt": "Step", "States": {"Step": {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:000000000000:function:f",
	  "Parameters": {"started.$": "$$.Execution.StartTime"}, "End": true}}}`
	ends := make(chan Result, 1)
	m := Serve(t, hs.URL, []byte(def), func(r Result) { ends <- r })
	start := time.Date(2026, 6, 1, 6, 5, 0, 0, time.UTC)
	if err := m.Start(Execution{Name: "virtual", Input: map[string]any{}, StartTime: start}); err != nil {
		t.Fatal(err)
	}
	if r := end(t, ends); r.Status != "SUCCEEDED" {
		t.Fatalf("%+v", r)
	}
	if s := <-got; s != start.Format(time.RFC3339) {
		t.Fatalf("the Task got started %q, want %s", s, start.Format(time.RFC3339))
	}
}

// TestServedTasksAreNotTimedByTheWallClock: a served Task held longer
// than its TimeoutSeconds (the test holding it for its Wait) still ends
// with its function's answer.
func TestServedTasksAreNotTimedByTheWallClock(t *testing.T) {
	Driver(t)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		time.Sleep(1500 * time.Millisecond) // the Wait, on the test's clock
		_, _ = w.Write([]byte(`{}`))
	}))
	t.Cleanup(hs.Close)
	def := `{"StartAt": "Step", "States": {"Step": {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:000000000000:function:f",
	  "TimeoutSeconds": 1, "End": true}}}`
	ends := make(chan Result, 1)
	m := Serve(t, hs.URL, []byte(def), func(r Result) { ends <- r })
	if err := m.Start(Execution{Name: "held", Input: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if r := end(t, ends); r.Status != "SUCCEEDED" {
		t.Fatalf("%+v, want SUCCEEDED: a hold is not the Task's time", r)
	}
}
