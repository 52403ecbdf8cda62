package web_test

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/backfill"
	"github.com/interlockhq/interlock/internal/board"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/runtime/local/web"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
)

func TestOverviewShowsEachPipelineState(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	body := f.page(t, "/", http.StatusOK)
	got := map[string]board.State{}
	for _, r := range rows(body) {
		got[r[0]] = board.State(r[1])
	}
	for id, want := range wantStates {
		if got[id] != want {
			t.Errorf("%s: state %q, want %q", id, got[id], want)
		}
	}
	if len(got) != len(wantStates) {
		t.Errorf("%d rows, want %d: %v", len(got), len(wantStates), got)
	}
	// Every state of the fixture is counted.
	for _, s := range board.States() {
		n := 0
		for _, w := range wantStates {
			if w == s {
				n++
			}
		}
		want := fmt.Sprintf(`id="count-%s" data-state="%s" data-count="%d"`, s, s, n)
		if !strings.Contains(body, want) {
			t.Errorf("count of %s: want %s", s, want)
		}
	}
}

func TestOverviewIsSortedByUrgency(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	got := rows(f.page(t, "/", http.StatusOK))
	for i := 1; i < len(got); i++ {
		a, b := board.State(got[i-1][1]), board.State(got[i][1])
		if board.Urgency(a) > board.Urgency(b) {
			t.Fatalf("row %d %v comes before row %d %v", i-1, got[i-1], i, got[i])
		}
	}
	if got[0][0] != "late" || got[1][0] != "relsla" || got[2][0] != "broken" {
		t.Fatalf("breached (by id) then failed first, got %v", got[:3])
	}
	// Within a state, the nearest deadline first: nightly (its next tick
	// in hours) before alpha and xss (no deadline at all, by id).
	ids := rowIDs(f.page(t, "/?state=waiting", http.StatusOK))
	if !slices.Equal(ids, []string{"nightly", "alpha", "xss"}) {
		t.Fatalf("waiting rows %v, want nightly, alpha, xss", ids)
	}
}

func TestOverviewFiltersAndPages(t *testing.T) {
	f := newFixture(t, fixtureOptions{pageSize: 5})
	if ids := rowIDs(f.page(t, "/?state=failed", http.StatusOK)); !slices.Equal(ids, []string{"broken"}) {
		t.Fatalf("state=failed: %v", ids)
	}
	// Search by owner and by id, case-insensitive.
	if ids := rowIDs(f.page(t, "/?q=SALES", http.StatusOK)); !slices.Equal(ids, []string{"orders", "done"}) {
		t.Fatalf("q=SALES: %v", ids)
	}
	if ids := rowIDs(f.page(t, "/?q=GAT", http.StatusOK)); !slices.Equal(ids, []string{"gated"}) {
		t.Fatalf("q=GAT: %v", ids)
	}
	body := f.page(t, "/?q=sales", http.StatusOK)
	if !strings.Contains(body, `id="count-failed" data-state="failed" data-count="0"`) || !strings.Contains(body, `id="count-succeeded" data-state="succeeded" data-count="1"`) {
		t.Fatal("the counts should follow the search")
	}
	// Pages of 5: 14 pipelines make 3 pages; together they are the whole
	// board in order, once each.
	var all []string
	for p := 1; p <= 3; p++ {
		body := f.page(t, fmt.Sprintf("/?page=%d", p), http.StatusOK)
		ids := rowIDs(body)
		all = append(all, ids...)
		if hasNext := strings.Contains(body, `id="page-next"`); hasNext != (p < 3) {
			t.Fatalf("page %d: next link %v", p, hasNext)
		}
	}
	if len(all) != len(wantStates) {
		t.Fatalf("pages hold %d rows: %v", len(all), all)
	}
	f.page(t, "/?page=4", http.StatusNotFound)
	f.page(t, "/?page=0", http.StatusBadRequest)
	f.page(t, "/?state=sleepy", http.StatusBadRequest)
	// The pager keeps the filter.
	body = f.page(t, "/?q=platform", http.StatusOK)
	if !strings.Contains(body, `href="/?page=2&amp;q=platform"`) {
		t.Fatalf("next link does not keep the search:\n%s", body)
	}
}

func TestOverviewRowHasGridDeadlineAndLastEvent(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	body := f.page(t, "/?q=broken", http.StatusOK)
	if n := strings.Count(body, `data-period="`); n != 30 {
		t.Fatalf("%d grid cells, want 30", n)
	}
	if !strings.Contains(body, `href="/ui/pipelines/broken/periods/2026-03-10" data-period="2026-03-10" data-state="failed"`) {
		t.Fatalf("today's cell should be failed and link to its period:\n%s", body)
	}
	if !strings.Contains(body, `href="/ui/pipelines/broken/periods/2026-02-09" data-period="2026-02-09" data-state="waiting"`) {
		t.Fatal("the oldest cell should be 30 days back and empty")
	}
	if !strings.Contains(body, "JOB_FAILED") {
		t.Fatal("the last event should be shown")
	}
	// A countdown: a server instant for the script to tick.
	body = f.page(t, "/?q=orders", http.StatusOK)
	if !strings.Contains(body, `data-countdown="2026-03-10T09:30:00Z"`) || !strings.Contains(body, "SLA warning") {
		t.Fatalf("orders counts down to its 09:30 warning:\n%s", body)
	}
}

func TestRowFragment(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	body := f.page(t, "/ui/pipelines/orders?fragment=row", http.StatusOK)
	if r := rows(body); len(r) != 1 || r[0] != [2]string{"orders", "triggering"} {
		t.Fatalf("fragment rows %v", r)
	}
	if strings.Contains(body, "<html") {
		t.Fatal("a fragment is not a page")
	}
	f.page(t, "/ui/pipelines/nope?fragment=row", http.StatusNotFound)
}

func TestPipelinePage(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	body := f.page(t, "/ui/pipelines/gated", http.StatusOK)
	for _, want := range []string{
		`id="pipeline" data-pipeline="gated" data-period="2026-03-10" data-state="evaluating" data-current="true"`,
		`data-rule="gate" data-passed="false"`, // the rule with what it saw
		`<code>1</code>`,                       // the value seen
		`id="lock" data-run-state="EVALUATING"`,
		`id="action-rerun"`, `id="action-pause"`, `id="action-resume"`, // no tokens: admin
		`name="csrf-token"`,
		`id="timeline"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("pipeline page lacks %s", want)
		}
	}
	if n := strings.Count(body, `data-period="`); n < 30 {
		t.Errorf("%d data-period attributes, want the 30 cells and more", n)
	}
	// The SLA instants in the pipeline's zone and UTC.
	body = f.page(t, "/ui/pipelines/orders", http.StatusOK)
	if !strings.Contains(body, `id="sla-breach"`) || !strings.Contains(body, "2026-03-10 10:00:00Z") {
		t.Fatalf("orders' SLA breach in UTC:\n%s", body)
	}
	// A cron pipeline lists its next ticks in its zone.
	body = f.page(t, "/ui/pipelines/nightly", http.StatusOK)
	if !strings.Contains(body, `id="next-ticks"`) || !strings.Contains(body, "2026-03-10 06:00 America/New_York (10:00Z)") {
		t.Fatalf("nightly's next tick:\n%s", body)
	}
	// Excluded and paused say why.
	if body := f.page(t, "/ui/pipelines/holiday", http.StatusOK); !strings.Contains(body, `id="excluded"`) {
		t.Fatal("holiday should say it is excluded")
	}
	if body := f.page(t, "/ui/pipelines/held", http.StatusOK); !strings.Contains(body, `id="paused"`) || strings.Contains(body, `id="action-resume" data-action="resume" data-url="/v1/pipelines/held/resume" data-confirm="Resume held?" disabled`) {
		t.Fatal("held should be paused, with resume enabled")
	}
	f.page(t, "/ui/pipelines/nope", http.StatusNotFound)
}

func TestPeriodPage(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	body := f.page(t, "/ui/pipelines/broken/periods/2026-03-10", http.StatusOK)
	for _, want := range []string{`data-state="failed"`, `data-event="ev-broken-1" data-type="JOB_FAILED"`, `id="lock" data-run-state="FAILED_FINAL"`, `id="budgets"`} {
		if !strings.Contains(body, want) {
			t.Errorf("period page lacks %s", want)
		}
	}
	// An earlier period: no run, not current.
	body = f.page(t, "/ui/pipelines/broken/periods/2026-03-09", http.StatusOK)
	if !strings.Contains(body, `data-current="false"`) || !strings.Contains(body, `id="lock" data-run-state=""`) {
		t.Fatal("2026-03-09 has no run")
	}
	f.page(t, "/ui/pipelines/broken/periods/yesterday", http.StatusBadRequest)
	f.page(t, "/ui/pipelines/nope/periods/2026-03-10", http.StatusNotFound)
}

// TestHostileTextIsEscaped: a sensor value, an owner, a description and an
// event message holding markup render as text on every page.
func TestHostileTextIsEscaped(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, target := range []string{"/", "/ui/pipelines/xss", "/ui/pipelines/xss?fragment=row", "/ui/pipelines/broken", "/ui/events", "/ui/events?pipeline=broken"} {
		body := f.page(t, target, http.StatusOK)
		for _, bad := range []string{"<script>alert", "<i>mallory", "<b onmouseover"} {
			if strings.Contains(body, bad) {
				t.Errorf("%s: %q is rendered as markup", target, bad)
			}
		}
	}
	body := f.page(t, "/ui/pipelines/xss", http.StatusOK)
	if !strings.Contains(body, `&#34;\u003cscript\u003ealert(1)\u003c/script\u003e&#34;`) && !strings.Contains(body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Fatalf("the sensor value should be shown as text:\n%s", body)
	}
	if !strings.Contains(body, "&lt;i&gt;mallory&lt;/i&gt;") {
		t.Fatal("the owner should be shown as text")
	}
}

var (
	inlineScript  = regexp.MustCompile(`<script(?:\s[^>]*)?>`)
	inlineHandler = regexp.MustCompile(`(?i)<[^>]*\son[a-z]+\s*=`)
)

// TestPagesKeepTheCSP: no inline script, event handler or style on any
// page, so `default-src 'self'` without 'unsafe-inline' holds.
func TestPagesKeepTheCSP(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, target := range []string{"/", "/ui/health", "/ui/pipelines/orders", "/ui/pipelines/xss", "/ui/pipelines/broken/periods/2026-03-10", "/ui/events", "/ui/nope"} {
		body := f.get(t, target, "").Body.String()
		for _, tag := range inlineScript.FindAllString(body, -1) {
			if !strings.Contains(tag, `src="/ui/assets/`) {
				t.Errorf("%s: inline script %s", target, tag)
			}
		}
		if m := inlineHandler.FindString(body); m != "" {
			t.Errorf("%s: inline handler %s", target, m)
		}
		if strings.Contains(body, "style=") || strings.Contains(body, "<style") {
			t.Errorf("%s: inline style", target)
		}
		if strings.Contains(body, "http://") || strings.Contains(body, "https://") {
			t.Errorf("%s: refers to another origin", target)
		}
	}
}

func TestActionsOnlyForAdmins(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: true})
	for token, want := range map[string]bool{readerSecret: false, adminSecret: true} {
		rec := f.get(t, "/ui/pipelines/orders", token)
		if rec.Code != http.StatusOK {
			t.Fatalf("status %d", rec.Code)
		}
		body := rec.Body.String()
		for _, id := range []string{`id="action-rerun"`, `id="action-pause"`, `id="action-resume"`} {
			if strings.Contains(body, id) != want {
				t.Errorf("token admin=%v: %s shown %v", want, id, !want)
			}
		}
	}
	// Without credentials a page sends the browser to sign in.
	if rec := f.get(t, "/", ""); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/sign-in?next=%2F" {
		t.Fatalf("no token: status %d to %q, want 303 to the sign-in page", rec.Code, rec.Header().Get("Location"))
	}
}

func TestEventsPage(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := context.Background()
	// 150 events of one pipeline, an hour back (past the first window
	// read): two pages. bulk-048 to bulk-050 share an instant, which the
	// first page's end would split.
	var evs []event.Event
	for i := range 150 {
		at := now.Add(-time.Hour + time.Duration(i)*time.Second)
		if i == 48 || i == 49 {
			at = now.Add(-time.Hour + 50*time.Second)
		}
		evs = append(evs, event.Event{ID: fmt.Sprintf("bulk-%03d", i), Time: at, Type: event.SLAMet,
			PipelineID: "done", ScheduleID: "stream", Date: today, Message: fmt.Sprintf("bulk %d", i)})
	}
	for _, part := range [][]event.Event{evs[:75], evs[75:]} {
		if err := f.st.Commit(ctx, store.Change{Events: part}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(body string) []string {
		var out []string
		for _, m := range regexp.MustCompile(`data-event="([^"]+)"`).FindAllStringSubmatch(body, -1) {
			out = append(out, m[1])
		}
		return out
	}
	// The first page is the newest, newest first, and the live tail.
	body := f.page(t, "/ui/events?pipeline=done", http.StatusOK)
	got := ids(body)
	if len(got) != 102 || got[0] != "bulk-149" || got[1] != "bulk-148" || got[len(got)-1] != "bulk-048" {
		t.Fatalf("first page: %d events from %v to %v, want 102 from bulk-149 down to bulk-048 (an instant is not split)", len(got), got[:2], got[len(got)-1:])
	}
	if !regexp.MustCompile(`name="live-stream" content="/v1/events/stream\?after=v1[.0-9a-z]+&amp;pipeline=done&amp;since=2026-03-10T07%3A00%3A00Z"`).MatchString(body) {
		t.Fatal("the newest page tails the stream with its filter")
	}
	if strings.Contains(body, `id="jump-now"`) {
		t.Fatal("the live page offers to jump to now")
	}
	m := regexp.MustCompile(`href="(/ui/events\?[^"]*before=[^"]*)" id="page-older"`).FindStringSubmatch(body)
	if m == nil {
		t.Fatal("no link to the older events")
	}
	body = f.page(t, strings.ReplaceAll(m[1], "&amp;", "&"), http.StatusOK)
	got = ids(body)
	if len(got) != 48 || got[0] != "bulk-047" || got[47] != "bulk-000" {
		t.Fatalf("older page: %d events %v…, want bulk-047 down to bulk-000", len(got), got[:min(3, len(got))])
	}
	if strings.Contains(body, `name="live-stream"`) || strings.Contains(body, `id="page-older"`) {
		t.Fatal("the older page tails the stream, or offers older events than the range's start")
	}
	if !strings.Contains(body, `href="/ui/events?pipeline=done" id="jump-now"`) {
		t.Fatal("the older page has no jump to now")
	}
	// By type, by level, by time range.
	body = f.page(t, "/ui/events?type=JOB_FAILED", http.StatusOK)
	if !strings.Contains(body, `data-event="ev-broken-1"`) || strings.Contains(body, `data-type="SLA_MET"`) {
		t.Fatal("type=JOB_FAILED")
	}
	body = f.page(t, "/ui/events?level=error", http.StatusOK)
	if !strings.Contains(body, `data-event="ev-broken-1"`) || strings.Contains(body, `data-level="info"`) {
		t.Fatal("level=error")
	}
	body = f.page(t, "/ui/events?pipeline=done&since=2026-03-10T07:00:10Z&until=2026-03-10T07:00:19Z", http.StatusOK)
	if n := len(ids(body)); n != 10 || !strings.Contains(body, `id="jump-now"`) {
		t.Fatalf("a 10-second range holds %d events (want 10) or has no jump to now", n)
	}
	// A bad filter keeps the form as typed, marks the field and says why.
	for target, field := range map[string]string{
		"/ui/events?type=NOPE&pipeline=done": "type", "/ui/events?level=loud": "level", "/ui/events?since=whenever": "since",
		"/ui/events?until=2020-01-01": "until", "/ui/events?before=garbage": "before",
	} {
		body = f.page(t, target, http.StatusBadRequest)
		if !strings.Contains(body, `id="events-filter"`) || !strings.Contains(body, `id="ev-`+field+`-error"`) || strings.Contains(body, `id="events-table"`) {
			t.Errorf("%s: no form with the %s field marked, or events anyway", target, field)
		}
	}
	if body = f.page(t, "/ui/events?type=NOPE&pipeline=done", http.StatusBadRequest); !strings.Contains(body, `value="NOPE"`) || !strings.Contains(body, `value="done"`) || !strings.Contains(body, `&#34;NOPE&#34; is not an event type`) {
		t.Error("the bad filter's form does not keep what was typed or say what is wrong")
	}
}

func TestEventDetailFoldsIntoItsRow(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	e := event.Event{ID: "with-detail", Time: now.Add(-time.Minute), Type: event.JobFailed, PipelineID: "broken", ScheduleID: "stream", Date: today, Message: "failed"}
	detail, err := sensor.ParseBody([]byte(`{"attempt": 2, "category": "PERMANENT"}`))
	if err != nil {
		t.Fatal(err)
	}
	e.Detail = detail
	f.commit(t, store.Change{Events: []event.Event{e}})
	body := f.page(t, "/ui/events?pipeline=broken", http.StatusOK)
	if !strings.Contains(body, `<details class="ev-detail"><summary class="detail-line">attempt=2 · category=PERMANENT</summary>`) {
		t.Fatal("the detail is not one folded line in its row")
	}
}

func TestAssetsAndUnknownPages(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for path, ctype := range map[string]string{"/ui/assets/app.js": "javascript", "/ui/assets/app.css": "text/css"} {
		rec := f.get(t, path, "")
		if rec.Code != http.StatusOK || !strings.Contains(rec.Header().Get("Content-Type"), ctype) || rec.Body.Len() < 1000 {
			t.Fatalf("%s: %d %q %d bytes", path, rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len())
		}
	}
	f.page(t, "/ui/nope", http.StatusNotFound)
	if rec := f.get(t, "/ui/assets/nope.js", ""); rec.Code != http.StatusNotFound {
		t.Fatalf("missing asset: %d", rec.Code)
	}
	// The folder is not listed.
	for _, path := range []string{"/ui/assets/", "/ui/assets/x/"} {
		if rec := f.get(t, path, ""); rec.Code != http.StatusNotFound || strings.Contains(rec.Body.String(), "app.js") {
			t.Fatalf("%s: %d, listing %q", path, rec.Code, rec.Body.String())
		}
	}
}

func TestHealthPage(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	body := f.page(t, "/ui/health", http.StatusOK)
	for _, want := range []string{
		`id="watchdog" data-late="true" data-degraded="0"`, // it never passed
		`id="watchdog-last-pass">never`, `id="watchdog-late"`,
		`class="sink" data-sink="slack" data-backlog="3" data-dead-letters="1"`,
		`class="sink" data-sink="console" data-backlog="0" data-dead-letters="0"`,
		`class="dead-letter" data-sink="slack" data-event="ev-broken-1"`,
		`data-file="pipelines/bad.yaml"`,
		`pipelines/bad.yaml:7: job.type: unknown job type`,
		`id="health-summary" data-problems="3"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("health page lacks %s", want)
		}
	}
	if strings.Contains(body, "<script>alert") {
		t.Fatal("a dead letter's or a refusal's text is rendered as markup")
	}
}

// TestHealthBannerOnEveryPage: the health report's problems head every
// page, each linking to its section, and the Health link counts them.
func TestHealthBannerOnEveryPage(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, page := range []string{"/", "/ui/pipelines/orders", "/ui/pipelines/broken/periods/2026-03-10", "/ui/events", "/ui/silences", "/ui/graph", "/ui/health"} {
		body := f.page(t, page, http.StatusOK)
		for _, want := range []string{
			`id="health-banner" role="alert" data-problems="3"`,
			`<li data-problem="watchdog"><a href="/ui/health#watchdog">the watchdog is late: it never ran`,
			`<li data-problem="sink"><a href="/ui/health#sinks">alert sink slack is failing: its last alert was given up (1 dead letter)`,
			`<li data-problem="refused"><a href="/ui/health#refused">1 refused pipeline file</a>`,
			`id="nav-health-count" data-count="3"`,
		} {
			if !strings.Contains(body, want) {
				t.Errorf("%s lacks %s", page, want)
			}
		}
	}
}

func TestSinkProblem(t *testing.T) {
	dl := fixtureDeadLetter() // given up at now-30m
	before, after := now.Add(-time.Hour), now.Add(-time.Minute)
	cases := []struct {
		name string
		s    alert.SinkStatus
		want string
	}{
		{"healthy", alert.SinkStatus{Sink: "s", Configured: true, LastSuccess: &after}, ""},
		{"a dead letter, nothing delivered since: failing", alert.SinkStatus{Sink: "s", Configured: true, LastSuccess: &before, DeadLetters: 2, LastDeadLetter: &dl}, "alert sink s is failing: its last alert was given up (2 dead letters)"},
		{"delivering again: dead letters only", alert.SinkStatus{Sink: "s", Configured: true, LastSuccess: &after, DeadLetters: 1, LastDeadLetter: &dl}, "alert sink s has dead letters (1 dead letter)"},
		{"waiting, never delivered", alert.SinkStatus{Sink: "s", Configured: true, Backlog: 4}, "alert sink s has 4 alerts waiting and none delivered"},
		{"no longer configured, nothing to read", alert.SinkStatus{Sink: "s"}, ""},
		// Failing at its first failed attempt, before any dead letter, even
		// after an earlier success.
		{"failing now", alert.SinkStatus{Sink: "s", Configured: true, LastSuccess: &before, Backlog: 1,
			Failing: &alert.SinkFailing{Since: after, Attempts: 1, LastError: "HTTP 503"}}, "alert sink s is failing: 1 attempt since 07:59:00Z failed (HTTP 503)"},
	}
	for _, c := range cases {
		if got := web.SinkProblem(c.s); got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// TestPeriodPageSummaryAndDiagnosis: one line says the state, since when,
// why and the last error, and the diagnosis comes before the actions.
func TestPeriodPageSummaryAndDiagnosis(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.commit(t, store.Change{Events: []event.Event{{ID: "ev-broken-2", Time: now.Add(-50 * time.Minute), Type: event.RetryExhausted,
		PipelineID: "broken", ScheduleID: "stream", Date: today, Message: "retry limit reached (0/0)"}}})
	body := f.page(t, "/ui/pipelines/broken", http.StatusOK)
	for _, want := range []string{
		`<p class="summary-line" id="summary-line" data-state="failed">`,
		`<span class="since" id="summary-since" title="since 2026-03-10 07:00:00Z">for <time datetime="2026-03-10T07:00:00Z">1h 0m</time>`,
		`id="summary-reason">the job failed and its retry budget is used up</span>`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("broken's page lacks %s", want)
		}
	}
	order := []string{`id="summary-line"`, `id="why"`, `id="actions"`, `id="history"`, `id="timeline-panel"`}
	for i := 1; i < len(order); i++ {
		if strings.Index(body, order[i-1]) > strings.Index(body, order[i]) {
			t.Errorf("%s comes after %s", order[i-1], order[i])
		}
	}
	// A waiting pipeline says what it waits for; an evaluating one, which
	// rule does not pass and what it saw.
	if body := f.page(t, "/ui/pipelines/alpha", http.StatusOK); !regexp.MustCompile(`id="summary-reason">waiting for its trigger sensor [a-z-]+`).MatchString(body) {
		t.Error("alpha does not say what it waits for")
	}
	if body := f.page(t, "/ui/pipelines/gated", http.StatusOK); !strings.Contains(body, `id="summary-reason">the validation rules do not pass yet: gate (saw 1)</span>`) {
		t.Error("gated does not name its failing rule")
	}
}

func TestSummaryLastError(t *testing.T) {
	failed := &run.Run{State: run.FailedFinal, Outcome: run.OutcomeRetriesExhausted, LastFailure: &run.Failure{Category: run.Permanent, Message: "Traceback:\n  line 3\nValueError: 3 rows rejected\n"}}
	if got := web.LastError(failed, nil); got != "ValueError: 3 rows rejected" {
		t.Errorf("the last failure's last line: %q", got)
	}
	// Without a job failure (the trigger call kept failing), the period's
	// last error event.
	evs := []event.Event{{Type: event.JobFailed, Message: "an older error"}, {Type: event.JobTriggered, Message: "ok"}, {Type: event.RetryExhausted, Message: "trigger call failed 4 time(s), giving up: dial tcp: refused"}, {Type: event.SLAMet, Message: "fine"}}
	if got := web.LastError(&run.Run{State: run.FailedFinal, Outcome: run.OutcomeTriggerExhausted}, evs); got != "trigger call failed 4 time(s), giving up: dial tcp: refused" {
		t.Errorf("the last error event: %q", got)
	}
}

// TestPeriodPageHasNoEmptyVerdicts: no green pass for no rules, no table
// without rows, one deadline column for a UTC pipeline.
func TestPeriodPageHasNoEmptyVerdicts(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	body := f.page(t, "/ui/pipelines/alpha", http.StatusOK) // no validation rules
	if !strings.Contains(body, `id="validation-verdict" data-verdict="none"`) || strings.Contains(body, `class="pass" id="validation-verdict"`) {
		t.Error("alpha has no rules, yet a verdict")
	}
	for _, page := range []string{"/ui/pipelines/alpha", "/ui/pipelines/orders", "/ui/pipelines/nightly", "/ui/pipelines/holiday", "/ui/pipelines/broken/periods/2026-03-09"} {
		body := f.page(t, page, http.StatusOK)
		if regexp.MustCompile(`<tbody>\s*</tbody>|colspan="\d+">No `).MatchString(body) {
			t.Errorf("%s has a table without rows", page)
		}
	}
	if body := f.page(t, "/ui/pipelines/orders", http.StatusOK); !strings.Contains(body, `id="deadlines" data-columns="1"><thead><tr><th></th><th>UTC</th></tr>`) {
		t.Error("orders runs in UTC: one deadline column")
	}
	if body := f.page(t, "/ui/pipelines/nightly", http.StatusOK); !strings.Contains(body, `id="deadlines" data-columns="2"><thead><tr><th></th><th>America/New_York (the pipeline's zone)</th><th>UTC</th></tr>`) {
		t.Error("nightly runs in New York: its zone and UTC")
	}
}

// TestPeriodPageBudgetsPerReason: the budgets as the decisions count them
// — manual reruns per reason, drift and late data shared.
func TestPeriodPageBudgetsPerReason(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	key := run.Key{PipelineID: "broken", ScheduleID: "stream", Period: today}
	var ledger []store.LedgerEntry
	for i, reason := range []string{run.LedgerJobRetry, "manual", "hotfix", "hotfix", run.ReasonDrift, run.ReasonLateData, run.ReasonBackfill} {
		ledger = append(ledger, store.LedgerEntry{Key: key, Seq: i + 1, Reason: reason, Source: "test", At: now.Add(-time.Hour)})
	}
	f.commit(t, store.Change{Ledger: ledger})
	body := f.page(t, "/ui/pipelines/broken", http.StatusOK)
	for _, want := range []string{
		`data-budget="maxRetries" data-used="1"`,
		`data-budget="maxCodeRetries" data-used="1"`,
		`data-budget="maxDriftReruns" data-used="2"`,
		`data-budget="maxManualReruns" data-used="1" data-left="0">reruns with reason &#34;manual&#34;`,
		`data-budget="maxManualReruns" data-used="2" data-left="0">reruns with reason &#34;hotfix&#34;`,
		`reruns by a backfill: 1`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("budgets lack %s", want)
		}
	}
}

// TestPeriodPageOfAPeriodNeverRun: an hour of a daily pipeline, a period
// not started and one before the earliest are 404s linking back.
func TestPeriodPageOfAPeriodNeverRun(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, period := range []string{"2026-03-10T05", "2026-03-11", "1969-12-31"} {
		body := f.page(t, "/ui/pipelines/orders/periods/"+period, http.StatusNotFound)
		if !strings.Contains(body, `<a href="/ui/pipelines/orders" id="error-back">Back to orders`) || strings.Contains(body, `id="action-rerun"`) {
			t.Errorf("%s: no link back, or a rerun offered", period)
		}
	}
	f.page(t, "/ui/pipelines/orders/periods/2026-03-09", http.StatusOK)
}

// TestBackfillListsItsPeriods: each period of a backfill with its state
// and why it was skipped.
func TestBackfillListsItsPeriods(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.commit(t, store.Change{Backfills: []store.BackfillWrite{{Backfill: store.Backfill{PipelineID: "done", ID: "1", From: "2026-03-07", To: "2026-03-09",
		Only: backfill.Only("missing"), MaxActive: 1, RequestedAt: now.Add(-time.Hour), State: backfill.Running, Periods: []backfill.Period{
			{Period: "2026-03-07", State: backfill.PeriodSkipped, Reason: "already succeeded (only missing)"},
			{Period: "2026-03-08", State: backfill.PeriodSucceeded},
			{Period: "2026-03-09", State: backfill.PeriodPending},
		}}}}})
	body := f.page(t, "/ui/pipelines/done", http.StatusOK)
	for _, want := range []string{
		`<li data-period="2026-03-07" data-state="skipped"><a href="/ui/pipelines/done/periods/2026-03-07">2026-03-07</a> skipped: already succeeded (only missing)</li>`,
		`<li data-period="2026-03-09" data-state="pending">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the backfill lacks %s", want)
		}
	}
}

// TestOverviewTriage: the problems view and several states at once, the
// order by owner, and each row's since, last success, reason and badges.
func TestOverviewTriage(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	ctx := context.Background()
	// Several states at once; the problems view is breached, failed and
	// at risk, its count heading the counts.
	ids := rowIDs(f.page(t, "/?state=failed,at-risk", http.StatusOK))
	if !slices.Equal(ids, []string{"broken", "atrisk"}) {
		t.Fatalf("state=failed,at-risk: %v", ids)
	}
	body := f.page(t, "/", http.StatusOK)
	if !strings.Contains(body, `href="/?state=breached%2Cfailed%2Cat-risk" id="view-problems" data-count="4"`) {
		t.Fatal("no problems view counting the 2 breached, 1 failed and 1 at risk")
	}
	body = f.page(t, "/?state=breached,failed,at-risk", http.StatusOK)
	if ids := rowIDs(body); !slices.Equal(ids, []string{"late", "relsla", "broken", "atrisk"}) {
		t.Fatalf("the problems view: %v", ids)
	}
	// A count adds its state to the filter, or takes it out.
	if !strings.Contains(body, `href="/?state=breached%2Cat-risk" id="count-failed"`) || !strings.Contains(body, `href="/?state=breached%2Cfailed%2Cat-risk%2Crunning" id="count-running"`) {
		t.Fatal("the counts do not toggle their state in the filter")
	}
	f.page(t, "/?state=failed,sleepy", http.StatusBadRequest)
	f.page(t, "/?sort=size", http.StatusBadRequest)

	// Grouped by owner: finance, ops, platform, sales, … each with its
	// heading, most urgent first within.
	body = f.page(t, "/?sort=owner", http.StatusOK)
	var owners []string
	for _, m := range regexp.MustCompile(`<tbody class="owner-group" data-owner="([^"]*)">`).FindAllStringSubmatch(body, -1) {
		owners = append(owners, m[1])
	}
	if !slices.IsSorted(owners) || len(owners) < 3 {
		t.Fatalf("owner groups %v, want them sorted", owners)
	}
	finance := body[strings.Index(body, `data-owner="finance">`):]
	finance = finance[:strings.Index(finance, "</tbody>")]
	if ids := rowIDs(finance); !slices.Equal(ids, []string{"late", "relsla", "atrisk"}) || !strings.Contains(finance, `3 pipeline(s), <span class="health-bad">3 problem(s)</span>`) {
		t.Fatalf("finance's group: %v", ids)
	}

	// A silence reaching orders: its row carries the badge; held shows
	// it is paused until resumed.
	if _, err := f.eng.CreateSilence(ctx, engine.SilenceRequest{ID: "quiet-orders", Matchers: silence.Matchers{Pipelines: []string{"ord*"}, Types: []event.Type{event.SLAWarning}},
		Duration: 2 * time.Hour, Comment: "known late", By: "test"}); err != nil {
		t.Fatal(err)
	}
	// One of finance's, by owner: it reaches late, not alpha (platform's).
	if _, err := f.eng.CreateSilence(ctx, engine.SilenceRequest{ID: "finance-l", Matchers: silence.Matchers{Pipelines: []string{"*l*"}, Owners: []string{"finance"}},
		Duration: time.Hour, By: "test"}); err != nil {
		t.Fatal(err)
	}
	body = f.page(t, "/", http.StatusOK)
	row := func(id string) string {
		i := strings.Index(body, `<tr class="row" id="row-`+id+`"`)
		j := strings.Index(body[i:], "</tr>")
		return body[i : i+j]
	}
	for id, wants := range map[string][]string{
		"orders": {`data-silenced-by="quiet-orders" title="known late">silenced (type=SLA_WARNING) until 2026-03-10 10:00:00Z`},
		"held":   {`class="paused-until" data-paused-until="">until resumed`},
		"broken": {`data-since="2026-03-10T07:00:00Z" title="in this state since 2026-03-10 07:00:00Z">for 1h 0m`, `class="row-reason" title="the job failed and its retry budget is used up"`, `no success in 30 periods`},
		"done":   {`data-last-success="2026-03-10T07:30:00Z">last success 30m 0s ago`},
		"gated":  {`class="row-reason" title="gate.count 1, wants gte 10"`},
		"alpha":  {`class="row-reason" title="trigger alpha-landed: none yet, wants exists"`},
		"late":   {`<span class="sla-mark" aria-hidden="true">!</span>`, `data-silenced-by="finance-l"`, `class="row-reason" title="the SLA breach time passed at 2026-03-10 07:00:00Z without a success"`},
	} {
		for _, want := range wants {
			if !strings.Contains(row(id), want) {
				t.Errorf("%s's row lacks %s", id, want)
			}
		}
	}
	if strings.Contains(row("alpha"), "silenced") {
		t.Error("the silence reaches alpha")
	}
	// The grid's date axis: the first, middle and last periods.
	if !strings.Contains(body, `<div class="axis" id="grid-axis" aria-hidden="true"><span class="axis-label" data-col="1">02-09</span><span class="axis-label" data-col="16">02-24</span><span class="axis-label" data-col="30">03-10</span></div>`) {
		t.Error("no date axis over the grid")
	}
}

// TestSilencesPage: a new silence's form previews the pipelines and open
// conditions its matchers reach; the list says when each ends, who
// created it and when, and links to extend it; a window says when it
// next opens.
func TestSilencesPage(t *testing.T) {
	w, err := silence.NewWindow("nightly-etl", "0 2 * * *", time.Hour, "UTC", silence.Matchers{Owners: []string{"platform"}}, "the nightly load")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fixtureOptions{windows: []silence.Window{w}})
	ctx := context.Background()
	// broken's JOB_FAILED still holds (its run failed): a silence of
	// broken covers it; one of SLA_BREACH only does not.
	body := f.page(t, "/ui/silences?pipelines=broken&duration=2h", http.StatusOK)
	for _, want := range []string{
		`<div class="preview" id="preview" data-pipelines="1" data-conditions="1">`,
		`<a href="/ui/pipelines/broken" data-reached="broken">broken</a>`,
		`<li data-covered="broken" data-type="JOB_FAILED">`,
		`id="silence-pipelines" value="broken"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the preview of pipelines=broken lacks %s", want)
		}
	}
	if body := f.page(t, "/ui/silences?pipelines=broken&types=SLA_BREACH&fragment=preview", http.StatusOK); !strings.Contains(body, `data-pipelines="1" data-conditions="0"`) || strings.Contains(body, "<html") {
		t.Errorf("pipelines=broken types=SLA_BREACH covers no open condition; the fragment is the preview alone:\n%s", body)
	}
	body = f.page(t, "/ui/silences?owners=finance&fragment=preview", http.StatusOK)
	for _, id := range []string{"late", "relsla", "atrisk"} {
		if !strings.Contains(body, `data-reached="`+id+`"`) {
			t.Errorf("owners=finance does not reach %s", id)
		}
	}
	if body := f.page(t, "/ui/silences?types=NOPE&fragment=preview", http.StatusOK); !strings.Contains(body, `id="preview-problem"`) || !strings.Contains(body, "NOPE") {
		t.Error("a bad matcher is not said")
	}
	// A silence: ends in, created by and at, extend.
	if _, err := f.eng.CreateSilence(ctx, engine.SilenceRequest{ID: "s1", Matchers: silence.Matchers{Pipelines: []string{"broken"}}, Duration: 90 * time.Minute, Comment: "fixing", By: "ops"}); err != nil {
		t.Fatal(err)
	}
	// Its types and levels go into the extend link as they were written
	// (silence.Matchers.TypeNames, LevelNames).
	if _, err := f.eng.CreateSilence(ctx, engine.SilenceRequest{ID: "s2", Matchers: silence.Matchers{Pipelines: []string{"no-such"}, Types: []event.Type{event.SLABreach}, Levels: []event.Level{event.LevelError}}, Duration: time.Hour, By: "ops"}); err != nil {
		t.Fatal(err)
	}
	body = f.page(t, "/ui/silences", http.StatusOK)
	for _, want := range []string{
		`href="/ui/silences?duration=2h&amp;extend=s2&amp;levels=error&amp;pipelines=no-such&amp;types=SLA_BREACH#silence-form"`,
		`<td class="silence-ends" data-ends="2026-03-10T09:30:00Z">ends <span class="deadline"><time class="countdown" data-countdown="2026-03-10T09:30:00Z"`,
		`<td class="silence-created">by <strong>ops</strong><div class="muted nowrap">2026-03-10 08:00:00Z</div>`,
		`<a class="extend" id="extend-s1" href="/ui/silences?comment=fixing&amp;duration=2h&amp;extend=s1&amp;pipelines=broken#silence-form">`,
		`<td class="window-next" data-next="2026-03-11T02:00:00Z">`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("the silences page lacks %s", want)
		}
	}
	body = f.page(t, "/ui/silences?comment=fixing&duration=2h&extend=s1&pipelines=broken", http.StatusOK)
	if !strings.Contains(body, `id="action-silence" data-action="silence" data-url="/v1/silences" data-result="silence-result" data-extend="s1">Save and expire s1</button>`) {
		t.Error("the extend form does not replace s1")
	}
	// From a pipeline page.
	if body := f.page(t, "/ui/pipelines/broken", http.StatusOK); !strings.Contains(body, `href="/ui/silences?pipelines=broken&amp;duration=2h#silence-form" id="action-silence-open"`) {
		t.Error("no silence link on the pipeline page")
	}
}

// TestEventsMarkTheirSilence: an event a maintenance window covers is
// marked on the events page with the window and its comment (one read of
// the silences for the page, api.Silenced), and an event it does not
// cover is not.
func TestEventsMarkTheirSilence(t *testing.T) {
	w, err := silence.NewWindow("morning-load", "0 7 * * *", time.Hour, "UTC", silence.Matchers{Pipelines: []string{"broken"}}, "known flake")
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fixtureOptions{windows: []silence.Window{w}})
	body := f.page(t, "/ui/events", http.StatusOK)
	i := strings.Index(body, `data-event="ev-broken-1"`)
	if i < 0 {
		t.Fatalf("the events page lists no ev-broken-1:\n%s", body)
	}
	row := body[i:]
	row = row[:strings.Index(row, "</tr>")]
	for _, want := range []string{`data-silenced-by="maintenance:morning-load"`, `silenced by maintenance:morning-load</a> (known flake)`} {
		if !strings.Contains(row, want) {
			t.Errorf("ev-broken-1's row lacks %s:\n%s", want, row)
		}
	}
	if n := strings.Count(body, `data-silenced-by=`); n != strings.Count(body, `data-silenced-by="maintenance:morning-load"`) {
		t.Errorf("%d events marked, not all by morning-load", n)
	}
}
