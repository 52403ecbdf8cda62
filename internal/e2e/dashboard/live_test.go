package dashboard_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/interlockhq/interlock/internal/testenv/browser"
)

// TestDashboardLive: a sensor write through the API turns its row green
// on an open overview, without a reload (the page follows GET
// /v1/events/stream).
func TestDashboardLive(t *testing.T) {
	b := browser.New(t)
	f := newFixture(t, false)
	b.Open(f.srv.URL + "/")
	if s := rowStates(b)["live-feed"]; s != "waiting" {
		t.Fatalf("live-feed is %q before its sensor, want waiting", s)
	}
	count := func(state string) string {
		return browser.Eval[string](b, fmt.Sprintf(`document.getElementById('count-%s').dataset.count`, state))
	}
	waiting, succeeded := count("waiting"), count("succeeded")
	b.Do(chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`))
	b.WaitFor("the live stream to connect", `document.getElementById('live-status').dataset.live === 'on'`)
	f.sensor(t, "live-feed", "landed", `{"rows": 1}`)
	b.WaitFor("live-feed's row to turn succeeded", `document.querySelector('tr[data-pipeline="live-feed"]').dataset.state === 'succeeded'`)
	if !browser.Eval[bool](b, `window.__sameDocument === true`) {
		t.Fatal("the page reloaded; the row should change in place")
	}
	// The counts at the top follow: one fewer waiting, one more succeeded.
	if w, s := count("waiting"), count("succeeded"); w != decr(t, waiting) || s != incr(t, succeeded) {
		t.Fatalf("after the live change the counts are waiting %s, succeeded %s; want %s and %s", w, s, decr(t, waiting), incr(t, succeeded))
	}
	color := browser.Eval[string](b, `getComputedStyle(document.querySelector('tr[data-pipeline="live-feed"] .state')).backgroundColor`)
	if !greenish(color) {
		t.Fatalf("a succeeded state is drawn in %s, want a green", color)
	}
	b.Screenshot("live-update")

	t.Run("events: newest first, live at the top", func(t *testing.T) {
		b := b.For(t)
		b.Open(f.srv.URL + "/ui/events")
		b.WaitFor("the live stream to connect", `document.getElementById('live-status').dataset.live === 'on'`)
		f.sensor(t, "waiting-data", "landed", `{"rows": 2}`)
		f.waitRun(t, "waiting-data", "COMPLETED")
		ids := f.eventIDs(t, "waiting-data")
		slices.Reverse(ids)
		b.WaitFor("waiting-data's last event live", `!!document.querySelector('#events-body tr[data-event="`+ids[0]+`"]')`)
		// Added live, newest first, above what the page opened with.
		if got := browser.Eval[[]string](b, `Array.from(document.querySelectorAll('#events-body tr[data-pipeline="waiting-data"]'), r => r.dataset.event)`); !slices.Equal(got, ids) {
			t.Fatalf("waiting-data's events read %v on the page, want newest first %v", got, ids)
		}
		if above := browser.Eval[int](b, `(() => { const rows = Array.from(document.querySelectorAll('#events-body tr'));
			return rows.findIndex(r => r.dataset.pipeline === 'waiting-data') < rows.findIndex(r => r.dataset.pipeline === 'live-feed') ? 1 : 0; })()`); above != 1 {
			t.Fatal("the live events are not above the ones the page opened with")
		}
		// Times never increase down the page.
		if bad := browser.Eval[string](b, `(() => {
			const ts = Array.from(document.querySelectorAll('#events-body tr td:first-child'), td => td.textContent.trim());
			for (let i = 1; i < ts.length; i++) if (ts[i] > ts[i-1]) return ts[i-1] + ' above ' + ts[i];
			return '';
		})()`); bad != "" {
			t.Fatalf("the events are not newest first: %s", bad)
		}
		// An older range offers the way back to the live tail.
		b.Open(f.srv.URL + "/ui/events?until=1m")
		b.Do(chromedp.Click(chromedp.ID("jump-now")))
		b.WaitFor("the live tail", `location.search === '' && document.getElementById('live-status').dataset.live === 'on'`)
	})

	t.Run("a health banner on every page", func(t *testing.T) {
		b := b.For(t)
		for _, page := range []string{"/", "/ui/events", "/ui/pipelines/live-feed", "/ui/silences", "/ui/graph", "/ui/health"} {
			b.Open(f.srv.URL + page)
			got := browser.Eval[string](b, `(() => { const b = document.getElementById('health-banner'), n = document.getElementById('nav-health-count');
				return b && n ? b.querySelector('li[data-problem="refused"]').innerText + ' | ' + n.textContent : 'none'; })()`)
			if got != "1 refused pipeline file | 1" {
				t.Errorf("%s: the banner and the Health link's count read %q", page, got)
			}
		}
		b.Do(chromedp.Click(chromedp.CSS(`#health-banner li[data-problem="refused"] a`)))
		b.WaitFor("the refused file on the health page", `location.hash === '#refused' && !!document.querySelector('#refused .refused-file')`)
	})

	t.Run("events: a bad filter keeps the form and says why", func(t *testing.T) {
		b := b.For(t)
		b.Open(f.srv.URL + "/ui/events")
		b.Do(chromedp.SetValue(chromedp.ID("ev-pipeline"), "live-feed"), chromedp.SetValue(chromedp.ID("ev-type"), "JOB_EXPLODED"),
			chromedp.Click(chromedp.ID("ev-submit")))
		b.WaitFor("the filter's answer", `!!document.getElementById('ev-type-error')`)
		got := browser.Eval[string](b, `[document.getElementById('ev-pipeline').value, document.getElementById('ev-type').value,
			document.getElementById('ev-type').getAttribute('aria-invalid'), document.getElementById('ev-type-error').textContent].join(' | ')`)
		if got != `live-feed | JOB_EXPLODED | true | type: "JOB_EXPLODED" is not an event type (for example SLA_BREACH, JOB_FAILED)` {
			t.Fatalf("after a bad filter the form reads %q", got)
		}
		b.Screenshot("events-bad-filter")
	})
}

// greenish says whether a CSS rgb()/rgba() colour is mostly green.
func greenish(css string) bool {
	var r, g, bl int
	s := strings.TrimSuffix(strings.TrimPrefix(strings.TrimPrefix(css, "rgba("), "rgb("), ")")
	if _, err := fmt.Sscanf(strings.ReplaceAll(s, ",", " "), "%d %d %d", &r, &g, &bl); err != nil {
		return false
	}
	return g > r && g > bl
}

func incr(t *testing.T, n string) string { return addTo(t, n, 1) }
func decr(t *testing.T, n string) string { return addTo(t, n, -1) }

func addTo(t *testing.T, n string, by int) string {
	t.Helper()
	v, err := strconv.Atoi(n)
	if err != nil {
		t.Fatalf("a count reads %q", n)
	}
	return strconv.Itoa(v + by)
}
