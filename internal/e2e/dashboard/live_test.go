package dashboard_test

import (
	"fmt"
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
