package awsrt

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/interlockhq/interlock/internal/alert/openlineage"
	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/clock"
)

// TestDispatcherPostsOpenLineage: an openlineage route in ALERTS_CONFIG is
// built by the alert dispatcher as serve builds it — its default match
// takes the run lifecycle (here JOB_FAILED, not the SLA events) and posts
// it as a RunEvent of the period's run.
func TestDispatcherPostsOpenLineage(t *testing.T) {
	var mu sync.Mutex
	var got []openlineage.RunEvent
	marquez := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var ev openlineage.RunEvent
		if r.URL.Path != openlineage.Path || json.Unmarshal(b, &ev) != nil {
			http.Error(w, "no", http.StatusBadRequest)
			return
		}
		mu.Lock()
		got = append(got, ev)
		mu.Unlock()
		w.WriteHeader(http.StatusCreated)
	}))
	t.Cleanup(marquez.Close)
	fake := slacktest.New(t, slackToken)
	p := newBusPath(t)
	d := routedDispatcher(t, newStore(t), fake, "alerts:\n  - {type: openlineage, url: \""+marquez.URL+"\", namespace: aws-prod}\n", clock.NewVirtual(t0))
	p.publish(t, slaEvents()...)
	drain(t, mapped(p, d))
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 1 {
		t.Fatalf("Marquez got %d events, want JOB_FAILED's alone: %+v", len(got), got)
	}
	e := got[0]
	if e.EventType != "OTHER" || e.Run.Facets.Interlock.EventID != "ev-3" || e.Job.Namespace != "aws-prod" ||
		e.Run.RunID != openlineage.RunID("aws-prod", e.Job.Name, e.Run.Facets.Interlock.Period) {
		t.Fatalf("event %+v", e)
	}
}
