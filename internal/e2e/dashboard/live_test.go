package dashboard_test

import (
	"fmt"
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
	b.Do(chromedp.Evaluate[chromedp.Void](`window.__sameDocument = true`))
	b.WaitFor("the live stream to connect", `document.getElementById('live-status').dataset.live === 'on'`)
	f.sensor(t, "live-feed", "landed", `{"rows": 1}`)
	b.WaitFor("live-feed's row to turn succeeded", `document.querySelector('tr[data-pipeline="live-feed"]').dataset.state === 'succeeded'`)
	if !browser.Eval[bool](b, `window.__sameDocument === true`) {
		t.Fatal("the page reloaded; the row should change in place")
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
