package dashboard_test

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/interlockhq/interlock/internal/testenv/browser"
)

// session signs in with token through POST /sign-in, as the form does
// but from Go (no browser headers), and returns the session cookie the
// answer sets.
func (f *fixture) session(t *testing.T, token string) *http.Cookie {
	t.Helper()
	c := &http.Client{Timeout: 20 * time.Second, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.PostForm(f.srv.URL+"/sign-in", url.Values{"token": {token}, "next": {"/"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusSeeOther || len(resp.Cookies()) != 1 {
		t.Fatalf("POST /sign-in: %d with %d cookie(s), want 303 and the session", resp.StatusCode, len(resp.Cookies()))
	}
	return resp.Cookies()[0]
}

// useSession gives the browser the session cookie, as the sign-in
// answer would.
func useSession(t *testing.T, b *browser.Browser, base string, c *http.Cookie) {
	t.Helper()
	ctx, cancel := context.WithTimeout(b.Context(), browser.StepTimeout)
	defer cancel()
	yes := true
	if _, err := chromedp.Call(ctx, network.SetCookie, network.SetCookieParams{Name: c.Name, Value: c.Value, URL: base + "/", Path: "/",
		HTTPOnly: &yes, SameSite: network.CookieSameSiteStrict}); err != nil {
		t.Fatal(err)
	}
}

// TestDashboardAccess: with tokens, a visitor without a session gets the
// sign-in form, and signing in there as a reader lands on the page asked
// for; a reader's session shows no action, and the API refuses a
// reader's action sent from the page with the page's session and CSRF
// token; an admin's session shows the actions.
func TestDashboardAccess(t *testing.T) {
	b := browser.New(t)
	f := newFixture(t, true)

	b.Open(f.srv.URL + "/ui/pipelines/failed-job")
	if path := browser.Eval[string](b, `location.pathname`); path != "/sign-in" || !browser.Eval[bool](b, `!!document.getElementById('token')`) {
		t.Fatalf("a visitor without a session reaches %s, want the sign-in form", path)
	}
	b.Viewport(390, 844)
	if w := browser.Eval[int](b, `document.documentElement.scrollWidth`); w > 390 {
		t.Errorf("the sign-in page is %d px wide at a 390 px viewport", w)
	}
	b.Viewport(browser.Width, browser.Height)

	// The form, filled and submitted in the browser, signs the reader in
	// and lands on the page first asked for.
	b.Do(chromedp.SetValue(chromedp.ID("token"), readerToken), chromedp.Click(chromedp.CSS(`form button[type="submit"]`)))
	b.WaitFor("the pipeline page after signing in", `location.pathname === '/ui/pipelines/failed-job' && !!document.getElementById('pipeline')`)
	if role := browser.Eval[string](b, `document.body.dataset.role`); role != "reader" {
		t.Fatalf("with a reader's session, the page says %q", role)
	}
	if n := browser.Eval[int](b, `document.querySelectorAll('button[data-action], #actions, #action-rerun, #action-pause, #action-resume').length`); n != 0 {
		t.Fatalf("a reader sees %d action element(s)", n)
	}
	b.Screenshot("pipeline-reader")
	// The API refuses the reader's action anyway: a rerun sent from the
	// page with its session and CSRF token, as the buttons send theirs, is
	// refused for the role.
	answer := browser.Run(b, chromedp.Evaluate[string](`fetch('/v1/pipelines/failed-job/reruns', {method: 'POST', credentials: 'same-origin',
		headers: {'Content-Type': 'application/json', 'X-CSRF-Token': document.querySelector('meta[name="csrf-token"]').content},
		body: JSON.stringify({period: document.getElementById('pipeline').dataset.period, reason: 'reader'})}).then(r => r.text().then(t => r.status + ' ' + t))`, chromedp.EvalAwaitPromise))
	if !strings.HasPrefix(answer, "403 ") || strings.Contains(answer, "cross-origin") || strings.Contains(answer, "CSRF") {
		t.Fatalf("a reader's rerun from the page: %s, want 403 for the role", answer)
	}
	if n := f.eventTypes(t, "failed-job")["RERUN_ACCEPTED"] + f.eventTypes(t, "failed-job")["RERUN_REJECTED"]; n != 0 {
		t.Fatalf("a reader's rerun reached the engine (%d rerun event(s))", n)
	}

	// The operator (the person on call) and the admin see the actions.
	for _, who := range []struct{ role, token string }{{"operator", operatorToken}, {"admin", adminToken}} {
		useSession(t, b, f.srv.URL, f.session(t, who.token))
		b.Open(f.srv.URL + "/ui/pipelines/failed-job")
		if role := browser.Eval[string](b, `document.body.dataset.role`); role != who.role {
			t.Fatalf("with an %s's session, the page says %q", who.role, role)
		}
		for _, id := range []string{"action-rerun", "action-pause", "action-resume"} {
			if !browser.Eval[bool](b, fmt.Sprintf(`!!document.getElementById(%q)`, id)) {
				t.Errorf("an %s sees no #%s", who.role, id)
			}
		}
	}

	// Every page has a sign-out button; it ends the session, and the next
	// page asks for a token again.
	for _, page := range []string{"/", "/ui/events", "/ui/health", "/ui/graph", "/ui/silences", "/ui/pipelines/failed-job"} {
		b.Open(f.srv.URL + page)
		if !browser.Eval[bool](b, `!!document.querySelector('header form[action="/sign-out"] button#sign-out')`) {
			t.Errorf("%s has no sign-out button", page)
		}
	}
	b.Do(chromedp.Click(chromedp.ID("sign-out")))
	b.WaitFor("the sign-in form after signing out", `location.pathname === '/sign-in' && !!document.getElementById('token')`)
	b.Open(f.srv.URL + "/ui/events")
	if path := browser.Eval[string](b, `location.pathname`); path != "/sign-in" {
		t.Fatalf("after signing out, /ui/events is %s, want the sign-in form", path)
	}
}
