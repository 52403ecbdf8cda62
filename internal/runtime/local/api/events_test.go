package api_test

import (
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/store"
)

type envelope struct {
	ID         string `json:"id"`
	Source     string `json:"source"`
	DetailType string `json:"detail-type"`
	Time       string `json:"time"`
	Detail     struct {
		PipelineID string `json:"pipelineId"`
		Date       string `json:"date"`
	} `json:"detail"`
}

type eventPage struct {
	Events []envelope `json:"events"`
	Next   string     `json:"next"`
}

// makeEvents records pause and resume events on both pipelines, with
// the clock moving an hour between rounds.
func makeEvents(t *testing.T, f *fixture, rounds int) {
	t.Helper()
	for i := 0; i < rounds; i++ {
		for _, id := range []string{"orders", "nightly"} {
			if err := f.eng.Pause(t.Context(), id, time.Time{}, "test"); err != nil {
				t.Fatal(err)
			}
			if err := f.eng.Resume(t.Context(), id, "test"); err != nil {
				t.Fatal(err)
			}
		}
		f.clk.Advance(time.Hour)
	}
}

// TestEventPagingVisitsEveryEventOnce: following next from an empty
// cursor visits the whole log, in order, each event once; the last page's
// cursor stays put so a follower can poll with it.
func TestEventPagingVisitsEveryEventOnce(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	makeEvents(t, f, 12)
	allPage, err := f.st.EventList(t.Context(), store.EventListParams{})
	all := allPage.Events
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 48 {
		t.Fatalf("only %d events in the log", len(all))
	}

	var seen []string
	cursor, pages := "", 0
	for {
		target := "/v1/events?limit=7"
		if cursor != "" {
			target += "&after=" + cursor
		}
		page := want[eventPage](t, f.do(t, "GET", target, "", ""), http.StatusOK)
		pages++
		if len(page.Events) == 0 {
			if page.Next != cursor {
				t.Fatalf("empty page moved the cursor from %q to %q", cursor, page.Next)
			}
			break
		}
		if len(page.Events) > 7 {
			t.Fatalf("page of %d events with limit 7", len(page.Events))
		}
		for _, e := range page.Events {
			seen = append(seen, e.ID)
		}
		cursor = page.Next
		if pages > 100 {
			t.Fatal("paging does not end")
		}
	}
	if len(seen) != len(all) {
		t.Fatalf("visited %d events, the log has %d", len(seen), len(all))
	}
	for i, e := range all {
		if seen[i] != e.ID {
			t.Fatalf("event %d: visited %s, log has %s", i, seen[i], e.ID)
		}
	}
	if want := allPage.Next.String(); cursor != want {
		t.Fatalf("final cursor %s, want the log's end %s", cursor, want)
	}
}

func TestEventFilters(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	makeEvents(t, f, 4) // rounds at t0, t0+1h, t0+2h, t0+3h; now t0+4h
	get := func(query string) eventPage {
		t.Helper()
		return want[eventPage](t, f.do(t, "GET", "/v1/events?"+query, "", ""), http.StatusOK)
	}
	check := func(query string, n int, ok func(envelope) bool) {
		t.Helper()
		page := get(query)
		if len(page.Events) != n {
			t.Fatalf("?%s: %d events, want %d", query, len(page.Events), n)
		}
		for _, e := range page.Events {
			if e.Source != "interlock" || !ok(e) {
				t.Fatalf("?%s: unexpected %+v", query, e)
			}
		}
	}
	check("pipeline=orders", 8, func(e envelope) bool { return e.Detail.PipelineID == "orders" })
	check("pipeline=orders&type=PIPELINE_PAUSED", 4, func(e envelope) bool { return e.DetailType == "PIPELINE_PAUSED" })
	check("type=PIPELINE_PAUSED&type=pipeline_resumed", 16, func(e envelope) bool { return e.DetailType != "" })
	check("type=PIPELINE_PAUSED,PIPELINE_RESUMED&pipeline=nightly", 8, func(e envelope) bool { return e.Detail.PipelineID == "nightly" })
	// since: the last two rounds (t0+2h, t0+3h), as a duration and a time.
	check("type=PIPELINE_PAUSED&since=2h", 4, func(e envelope) bool { return e.Time >= "2026-03-10T10:00:00Z" })
	check("type=PIPELINE_PAUSED&since="+url.QueryEscape("2026-03-10T10:00:00Z"), 4, func(e envelope) bool { return e.Time >= "2026-03-10T10:00:00Z" })
	check("type=PIPELINE_PAUSED&since=1d", 8, func(envelope) bool { return true })
	check("pipeline=nope", 0, func(envelope) bool { return false })
	if page := get("limit=5000"); len(page.Events) == 0 {
		t.Fatal("a limit above the maximum is served, not refused")
	}

	for _, q := range []string{
		"type=PIPELINE_PAWSED",
		"since=yesterday",
		"since=-2h",
		"after=abc",
		"after=-1",
		"after=42", // a cursor of an older interlock
		"after=v1.-",
		"after=v1.1.2.3.4.5.6.7.8.9.a.b.c.d.e.f.g.h",
		"limit=0",
		"pipeline=a&pipeline=b",
		"pipelines=orders",
	} {
		wantError(t, f.do(t, "GET", "/v1/events?"+q, "", ""), 400, "bad_request")
	}
}
