package api_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

type silenceAnswer struct {
	ID        string   `json:"id"`
	Pipelines []string `json:"pipelines"`
	Types     []string `json:"types"`
	Owners    []string `json:"owners"`
	EndsAt    string   `json:"endsAt"`
	ExpiredAt string   `json:"expiredAt"`
	Active    bool     `json:"active"`
	Comment   string   `json:"comment"`
	CreatedBy string   `json:"createdBy"`
}

type silenceList struct {
	Silences []silenceAnswer `json:"silences"`
}

type eventsAnswer struct {
	Events []struct {
		DetailType string `json:"detail-type"`
		Detail     struct {
			PipelineID string `json:"pipelineId"`
		} `json:"detail"`
		SilencedBy string `json:"silencedBy"`
	} `json:"events"`
}

func TestSilences(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	s := want[silenceAnswer](t, f.do(t, "POST", "/v1/silences", adminSecret,
		`{"pipelines": ["ord*"], "types": ["sla_breach", "SLA_WARNING"], "duration": "3h", "comment": "migration"}`), http.StatusCreated)
	if s.ID == "" || !s.Active || s.EndsAt != "2026-03-10T11:00:00Z" || s.Comment != "migration" || s.CreatedBy != "api:ops" ||
		strings.Join(s.Types, ",") != "SLA_BREACH,SLA_WARNING" {
		t.Fatalf("created: %+v", s)
	}
	evs, _ := f.st.EventList(t.Context(), store.EventListParams{Types: []event.Type{event.SilenceCreated}})
	if len(evs.Events) != 1 {
		t.Fatalf("SILENCE_CREATED events: %+v", evs.Events)
	}
	if by, _ := evs.Events[0].Detail.Get("by"); by.String() != `"api:ops"` {
		t.Fatalf("SILENCE_CREATED by %s", by)
	}

	// The SLA breach at 10:00 is stored and answered with silencedBy; the
	// creation event is not silenced.
	f.clk.Set(t0.Add(2 * time.Hour))
	if _, err := f.eng.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	page := want[eventsAnswer](t, f.do(t, "GET", "/v1/events", readerSecret, ""), http.StatusOK)
	seen := map[string]string{}
	for _, e := range page.Events {
		seen[e.DetailType] = e.SilencedBy
	}
	if by, ok := seen["SLA_BREACH"]; !ok || by != s.ID {
		t.Fatalf("SLA_BREACH silenced by %q (%v), want %s: %+v", by, ok, s.ID, page.Events)
	}
	if seen["SILENCE_CREATED"] != "" {
		t.Fatalf("SILENCE_CREATED is marked silenced")
	}

	list := want[silenceList](t, f.do(t, "GET", "/v1/silences", readerSecret, ""), http.StatusOK)
	if len(list.Silences) != 1 || list.Silences[0].ID != s.ID {
		t.Fatalf("list: %+v", list)
	}
	x := want[silenceAnswer](t, f.do(t, "DELETE", "/v1/silences/"+s.ID, adminSecret, ""), http.StatusOK)
	if x.Active || x.ExpiredAt != "2026-03-10T10:00:00Z" {
		t.Fatalf("expired: %+v", x)
	}
	// Recently ended silences are still listed; ?all=true lists them all.
	list = want[silenceList](t, f.do(t, "GET", "/v1/silences", readerSecret, ""), http.StatusOK)
	if len(list.Silences) != 1 || list.Silences[0].Active {
		t.Fatalf("list after expiry: %+v", list)
	}
	f.clk.Set(t0.Add(30 * time.Hour))
	if list = want[silenceList](t, f.do(t, "GET", "/v1/silences", readerSecret, ""), http.StatusOK); len(list.Silences) != 0 {
		t.Fatalf("a silence ended a day ago is listed: %+v", list)
	}
	if list = want[silenceList](t, f.do(t, "GET", "/v1/silences?all=true", readerSecret, ""), http.StatusOK); len(list.Silences) != 1 {
		t.Fatalf("?all=true: %+v", list)
	}
	wantError(t, f.do(t, "DELETE", "/v1/silences/nope", adminSecret, ""), 404, "unknown_silence")
	wantError(t, f.do(t, "DELETE", "/v1/silences/"+s.ID, readerSecret, ""), 403, "forbidden")
	wantError(t, f.do(t, "POST", "/v1/silences", writerSecret, `{"pipelines": ["x"], "duration": "1h"}`), 403, "forbidden")

	// A named silence: the name is its id, and a second of that name (a
	// retried request) is refused rather than made twice.
	named := want[silenceAnswer](t, f.do(t, "POST", "/v1/silences", adminSecret,
		`{"id": "warehouse-migration", "pipelines": ["ord*"], "duration": "1h"}`), http.StatusCreated)
	if named.ID != "warehouse-migration" {
		t.Fatalf("named silence: %+v", named)
	}

	for _, tc := range []struct{ name, body, code, mentions string }{
		{"no matcher", `{"duration": "1h"}`, "bad_request", "matchers"},
		{"empty matchers", `{"pipelines": [], "duration": "1h"}`, "bad_request", "matchers"},
		{"no end", `{"pipelines": ["x"]}`, "bad_request", "until"},
		{"both ends", `{"pipelines": ["x"], "duration": "1h", "until": "2026-03-12T00:00:00Z"}`, "bad_request", "until"},
		{"until in the past", `{"pipelines": ["x"], "until": "2026-03-10T07:00:00Z"}`, "bad_request", "until"},
		{"until not a time", `{"pipelines": ["x"], "until": "tomorrow"}`, "bad_request", "until"},
		{"bad duration", `{"pipelines": ["x"], "duration": "-1h"}`, "bad_request", "duration"},
		{"beyond a year", `{"pipelines": ["x"], "duration": "400d"}`, "bad_request", "until"},
		{"unknown type", `{"types": ["SLA_BRAECH"], "duration": "1h"}`, "bad_request", "types[0]"},
		{"unknown level", `{"levels": ["fatal"], "duration": "1h"}`, "bad_request", "levels[0]"},
		{"bad glob", `{"pipelines": ["a["], "duration": "1h"}`, "bad_request", "pipelines[0]"},
		{"control characters in comment", `{"pipelines": ["x"], "duration": "1h", "comment": "a\u0007b"}`, "bad_request", "comment"},
		{"unknown field", `{"pipelines": ["x"], "duration": "1h", "force": true}`, "invalid_json", "force"},
		{"bad id", `{"id": "a b", "pipelines": ["x"], "duration": "1h"}`, "bad_request", "id"},
		{"id taken", `{"id": "warehouse-migration", "pipelines": ["y"], "duration": "1h"}`, "bad_request", "exists"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg := wantError(t, f.do(t, "POST", "/v1/silences", adminSecret, tc.body), 400, tc.code)
			if !strings.Contains(msg, tc.mentions) {
				t.Fatalf("message %q does not name %q", msg, tc.mentions)
			}
		})
	}
}

// TestSilenceMatcherFields: the four matcher fields (silence.Written,
// embedded in the request and the answer) are read and answered under
// their own names, and the unknown-field refusal lists them among the
// request's fields.
func TestSilenceMatcherFields(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	type answer struct {
		Pipelines, Types, Levels, Owners []string
	}
	s := want[answer](t, f.do(t, "POST", "/v1/silences", adminSecret,
		`{"pipelines": ["ord*"], "types": ["sla_breach"], "levels": ["ERROR"], "owners": ["finance"], "duration": "1h"}`), http.StatusCreated)
	if got := strings.Join([]string{strings.Join(s.Pipelines, ","), strings.Join(s.Types, ","), strings.Join(s.Levels, ","), strings.Join(s.Owners, ",")}, " "); got != "ord* SLA_BREACH error finance" {
		t.Fatalf("answered matchers %q", got)
	}
	msg := wantError(t, f.do(t, "POST", "/v1/silences", adminSecret, `{"pipeline": ["ord*"], "duration": "1h"}`), http.StatusBadRequest, "invalid_json")
	if !strings.Contains(msg, "known: id, pipelines, types, levels, owners, until, duration, comment") {
		t.Fatalf("unknown field refused with %q", msg)
	}
}
