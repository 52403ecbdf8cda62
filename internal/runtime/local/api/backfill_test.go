package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

// TestBackfillRoutes: a dry run answers the plan and stores nothing; a
// request is admin's, starts the backfill (201), refuses a second while
// it runs (409), and names the field of a bad range (400); its progress
// is readable by a reader; DELETE cancels it.
func TestBackfillRoutes(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	const path = "/v1/pipelines/nightly/backfills"
	dry := want[api.BackfillAnswer](t, f.do(t, "POST", path, adminSecret, `{"from": "2026-03-06", "to": "2026-03-08", "dryRun": true}`), http.StatusOK)
	if !dry.DryRun || dry.Backfill != nil || len(dry.Periods) != 3 || !dry.Periods[2].Run || dry.Periods[2].Reason != "no run yet" {
		t.Fatalf("dry run: %+v", dry)
	}
	if l := want[api.BackfillList](t, f.do(t, "GET", path, readerSecret, ""), http.StatusOK); len(l.Backfills) != 0 {
		t.Fatalf("a dry run stored %+v", l)
	}
	wantError(t, f.do(t, "POST", path, writerSecret, `{"from": "2026-03-06", "to": "2026-03-08"}`), http.StatusForbidden, "forbidden")
	got := want[api.BackfillAnswer](t, f.do(t, "POST", path, adminSecret, `{"from": "2026-03-06", "to": "2026-03-08", "maxActive": 2, "reverse": true}`), http.StatusCreated)
	if got.Backfill == nil || got.Backfill.ID != "1" || got.Backfill.State != "running" || got.Backfill.Counts.Pending != 3 || got.Backfill.Periods[0].Period != "2026-03-08" {
		t.Fatalf("backfill: %+v", got.Backfill)
	}
	wantError(t, f.do(t, "POST", path, adminSecret, `{"from": "2026-03-06", "to": "2026-03-08"}`), http.StatusConflict, "conflict")
	for body, field := range map[string]string{
		`{"from": "2026-03-08", "to": "2026-03-06"}`:                  "from:",
		`{"from": "2026-03-06", "to": "2026-03-30"}`:                  "to:",
		`{"from": "2026-03-06", "to": "2026-03-08", "only": "some"}`:  "only:",
		`{"from": "2026-03-06", "to": "2026-03-08", "maxActive": 99}`: "maxActive:",
	} {
		if msg := wantError(t, f.do(t, "POST", path, adminSecret, body), http.StatusBadRequest, "bad_request"); !strings.Contains(msg, field) {
			t.Errorf("%s: %q does not name %s", body, msg, field)
		}
	}
	wantError(t, f.do(t, "POST", path, adminSecret, `{"from": "2026-03-06", "to": "2026-03-08", "extra": 1}`), http.StatusBadRequest, "invalid_json")
	one := want[api.BackfillView](t, f.do(t, "GET", path+"/1", readerSecret, ""), http.StatusOK)
	if one.ID != "1" || one.From != "2026-03-06" || one.To != "2026-03-08" || !one.Reverse {
		t.Fatalf("GET: %+v", one)
	}
	wantError(t, f.do(t, "GET", path+"/7", readerSecret, ""), http.StatusNotFound, "not_found")
	wantError(t, f.do(t, "DELETE", path+"/1", readerSecret, ""), http.StatusForbidden, "forbidden")
	cancelled := want[api.BackfillView](t, f.do(t, "DELETE", path+"/1", adminSecret, ""), http.StatusOK)
	if cancelled.State != "cancelled" || cancelled.EndedAt == nil {
		t.Fatalf("DELETE: %+v", cancelled)
	}
	if l := want[api.BackfillList](t, f.do(t, "GET", path, readerSecret, ""), http.StatusOK); len(l.Backfills) != 1 || l.Backfills[0].State != "cancelled" {
		t.Fatalf("list after cancel: %+v", l)
	}
	want[api.BackfillAnswer](t, f.do(t, "POST", path, adminSecret, `{"from": "2026-03-06", "to": "2026-03-06"}`), http.StatusCreated)
}
