package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

func TestDeadLetters(t *testing.T) {
	dl := alert.DeadLetter{Sink: "webhook:hooks.example.com#1a2b", EventID: "e1", Type: "SLA_BREACH", PipelineID: "orders", Attempts: 8, Error: "HTTP 500"}
	for _, c := range []struct {
		name string
		dead func(context.Context) ([]alert.DeadLetter, error)
		want int
	}{
		{"none configured", nil, 0},
		{"one dead letter", func(context.Context) ([]alert.DeadLetter, error) { return []alert.DeadLetter{dl}, nil }, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t, fixtureOptions{dead: c.dead})
			rec := httptest.NewRecorder()
			f.h.ServeHTTP(rec, httptest.NewRequest("GET", "/v1/alerts/dead-letters", nil))
			var out api.DeadLetterList
			if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &out) != nil || len(out.DeadLetters) != c.want {
				t.Fatalf("%d %s", rec.Code, rec.Body.String())
			}
			if c.want == 1 && out.DeadLetters[0].Error != "HTTP 500" {
				t.Fatalf("dead letter: %+v", out.DeadLetters[0])
			}
			// The wire names are camelCase like the rest of the API.
			if c.want == 1 && (!strings.Contains(rec.Body.String(), `"pipelineId"`) || !strings.Contains(rec.Body.String(), `"attempts"`)) {
				t.Fatalf("dead letter JSON: %s", rec.Body.String())
			}
		})
	}
}

func TestNoTokensRefusesANonLoopbackAddr(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, addr := range []string{"0.0.0.0:7070", ":7070", "192.0.2.10:7070"} {
		if _, err := api.New(api.Options{Engine: f.eng, Addr: addr}); err == nil {
			t.Errorf("no tokens, listening on %s: accepted", addr)
		}
	}
	if _, err := api.New(api.Options{Engine: f.eng, Addr: "127.0.0.1:0"}); err != nil {
		t.Errorf("loopback refused: %v", err)
	}
}
