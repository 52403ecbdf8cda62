package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/runtime/awsrt"
)

// TestInvokeEndpointWaitsAsStepFunctions: a Task due at a fraction of a
// second is held until the whole second before it (where Step Functions
// ends its Wait), and a step invoked again and again at one instant is
// named a spin and parked instead of answered.
func TestInvokeEndpointWaitsAsStepFunctions(t *testing.T) {
	start := time.Date(2026, 6, 1, 6, 0, 0, 0, time.UTC)
	clk := clock.NewVirtual(start)
	calls := 0
	e := &invokeEndpoint{clk: clk, handler: func(context.Context, json.RawMessage) (string, error) {
		calls++
		return "not due", nil
	}}
	defer e.stop()
	due := start.Add(2*time.Minute + 250*time.Millisecond)
	body, err := json.Marshal(awsrt.StepInput{Mode: awsrt.ModePoll, StepRef: engine.StepRef{Run: run.Key{PipelineID: "p", ScheduleID: "s", Period: "2026-06-01"}, Due: due}})
	if err != nil {
		t.Fatal(err)
	}
	invoke := func() chan int {
		done := make(chan int, 1)
		go func() {
			rec := httptest.NewRecorder()
			e.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/2015-03-31/functions/f/invocations", bytes.NewReader(body)))
			done <- rec.Code
		}()
		return done
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(time.Minute)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("%s: not within a minute", what)
			}
			time.Sleep(time.Millisecond)
		}
	}

	first := invoke()
	waitFor("held", func() bool { return e.held() == 1 })
	if at, ok := e.nextDue(); !ok || !at.Equal(start.Add(2*time.Minute)) {
		t.Fatalf("held until %s, want %s: the Wait ends at the whole second", at, start.Add(2*time.Minute))
	}
	clk.Set(start.Add(2 * time.Minute))
	if n := e.release(clk.Now()); n != 1 {
		t.Fatalf("released %d", n)
	}
	if code := <-first; code != http.StatusOK {
		t.Fatalf("answered %d", code)
	}
	// The execution goes round at 06:02:00, each time "not due".
	for i := 1; i < spinLimit; i++ {
		if code := <-invoke(); code != http.StatusOK {
			t.Fatalf("invocation %d answered %d", i+1, code)
		}
	}
	if err := e.spinErr(); err != nil {
		t.Fatalf("a spin named after %d invocations: %v", spinLimit, err)
	}
	parked := invoke()
	waitFor("spin named", func() bool { return e.spinErr() != nil })
	if msg := e.spinErr().Error(); !strings.Contains(msg, "p/s/2026-06-01 poll") || !strings.Contains(msg, "spins") {
		t.Fatalf("the spin is not named: %s", msg)
	}
	if calls != spinLimit {
		t.Fatalf("the handler ran %d times, want %d: the spinning invocation must not run", calls, spinLimit)
	}
	e.stop()
	if code := <-parked; code != http.StatusServiceUnavailable {
		t.Fatalf("the parked invocation answered %d", code)
	}
}
