package api_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

// whoami is the dashboard of these tests: it answers who asks.
var whoami = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	c := api.CallerFrom(r.Context())
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(map[string]string{"name": c.Name, "role": string(c.Role), "csrf": c.CSRF, "path": r.URL.Path})
})

type caller struct{ Name, Role, CSRF, Path string }

// signIn posts the sign-in form from this origin and returns the answer.
func signIn(t testing.TB, f *fixture, token, next string, header http.Header) *httptest.ResponseRecorder {
	t.Helper()
	h := http.Header{"Content-Type": {"application/x-www-form-urlencoded"}, "Origin": {"http://example.com"}, "Sec-Fetch-Site": {"same-origin"}}
	for k, v := range header {
		h[k] = v
	}
	return f.doWith(t, "POST", "/sign-in", h, url.Values{"token": {token}, "next": {next}}.Encode())
}

// sessionOf signs in with token and returns the session cookie.
func sessionOf(t testing.TB, f *fixture, token string) *http.Cookie {
	t.Helper()
	rec := signIn(t, f, token, "/", nil)
	if rec.Code != http.StatusSeeOther {
		t.Fatalf("sign-in: %d %s", rec.Code, rec.Body.String())
	}
	for _, c := range rec.Result().Cookies() {
		if c.Name == api.SessionCookie {
			return c
		}
	}
	t.Fatalf("sign-in set no session cookie: %v", rec.Header())
	return nil
}

// withCookie sends a request with the session cookie value and headers.
func withCookie(t testing.TB, f *fixture, method, target, cookie string, header http.Header, body string) *httptest.ResponseRecorder {
	t.Helper()
	h := http.Header{"Cookie": {api.SessionCookie + "=" + cookie}}
	for k, v := range header {
		h[k] = v
	}
	return f.doWith(t, method, target, h, body)
}

func whoIs(t testing.TB, rec *httptest.ResponseRecorder) caller {
	t.Helper()
	var c caller
	if rec.Code != http.StatusOK {
		t.Fatalf("dashboard: %d %s", rec.Code, rec.Body.String())
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &c); err != nil {
		t.Fatal(err)
	}
	return c
}

func TestSignInSetsASessionCookie(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens(), dashboard: whoami})
	rec := signIn(t, f, adminSecret, "/ui/pipelines/orders?tab=runs", nil)
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/ui/pipelines/orders?tab=runs" {
		t.Fatalf("sign-in: %d to %q, want 303 to the page asked for", rec.Code, rec.Header().Get("Location"))
	}
	set := rec.Header().Get("Set-Cookie")
	for _, attr := range []string{api.SessionCookie + "=", "Path=/", "HttpOnly", "SameSite=Strict", "Expires="} {
		if !strings.Contains(set, attr) {
			t.Errorf("Set-Cookie %q lacks %s", set, attr)
		}
	}
	if strings.Contains(set, "Secure") || strings.Contains(set, adminSecret) {
		t.Errorf("Set-Cookie %q: Secure over plain HTTP, or the secret in it", set)
	}
	c := rec.Result().Cookies()[0]
	if !c.Expires.Equal(t0.Add(api.DefaultSessionTTL)) {
		t.Errorf("session expires %v, want %v", c.Expires, t0.Add(api.DefaultSessionTTL))
	}
	// Behind a TLS-terminating proxy the cookie is Secure.
	rec = signIn(t, f, adminSecret, "/", http.Header{"X-Forwarded-Proto": {"https"}})
	if set := rec.Header().Get("Set-Cookie"); !strings.Contains(set, "; Secure") {
		t.Errorf("Set-Cookie behind TLS %q is not Secure", set)
	}

	// The cookie names the caller on pages and on the API.
	who := whoIs(t, withCookie(t, f, "GET", "/ui/events", c.Value, nil, ""))
	if who.Name != "ops" || who.Role != "admin" || who.CSRF == "" || who.Path != "/ui/events" {
		t.Errorf("caller %+v, want ops, admin, with a CSRF token", who)
	}
	want[map[string]any](t, withCookie(t, f, "GET", "/v1/pipelines", c.Value, nil, ""), http.StatusOK)
	// A bearer token names its caller without a CSRF token.
	rq := f.do(t, "GET", "/ui/", readerSecret, "")
	if who := whoIs(t, rq); who.Name != "dash" || who.CSRF != "" {
		t.Errorf("bearer caller %+v, want dash without a CSRF token", who)
	}
}

// A cookie that was forged, altered, made for another token, expired, or
// whose token was removed or changed, is refused: a 401 on the API, a
// redirect to the sign-in page on a page.
func TestSessionRefused(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens(), dashboard: whoami})
	reader := sessionOf(t, f, readerSecret).Value
	admin := sessionOf(t, f, adminSecret).Value
	rp, ap := strings.Split(reader, "."), strings.Split(admin, ".")
	flip := func(s string) string {
		b := []byte(s)
		if b[0] == 'A' {
			b[0] = 'B'
		} else {
			b[0] = 'A'
		}
		return string(b)
	}
	for name, v := range map[string]string{
		"reader's MAC under the admin's name":       strings.Join([]string{rp[0], ap[1], rp[2], rp[3]}, "."),
		"admin's MAC on the reader's expiry, later": strings.Join([]string{ap[0], ap[1], "9999999999", ap[3]}, "."),
		"altered MAC":  strings.Join([]string{rp[0], rp[1], rp[2], flip(rp[3])}, "."),
		"no MAC":       strings.Join(rp[:3], "."),
		"garbage":      "v1.x.y.z",
		"empty":        "",
		"the secret":   adminSecret,
		"v2 of a good": "v2." + strings.Join(ap[1:], "."),
	} {
		msg := wantError(t, withCookie(t, f, "GET", "/v1/pipelines", v, nil, ""), http.StatusUnauthorized, "unauthorized")
		if !strings.Contains(msg, "sign in again") {
			t.Errorf("%s: message %q", name, msg)
		}
		rec := withCookie(t, f, "GET", "/ui/pipelines/orders", v, nil, "")
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/sign-in?next=%2Fui%2Fpipelines%2Forders" {
			t.Errorf("%s: page answered %d to %q, want 303 to the sign-in page", name, rec.Code, rec.Header().Get("Location"))
		}
	}
	// Without any credentials too; the API stays JSON.
	rec := f.do(t, "GET", "/?state=failed", "", "")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/sign-in?next=%2F%3Fstate%3Dfailed" {
		t.Errorf("GET / without credentials: %d to %q", rec.Code, rec.Header().Get("Location"))
	}
	wantError(t, f.do(t, "GET", "/v1/pipelines", "", ""), http.StatusUnauthorized, "unauthorized")

	// Valid until it expires.
	f.clk.Advance(api.DefaultSessionTTL - time.Second)
	want[map[string]any](t, withCookie(t, f, "GET", "/v1/pipelines", reader, nil, ""), http.StatusOK)
	f.clk.Advance(time.Second)
	wantError(t, withCookie(t, f, "GET", "/v1/pipelines", reader, nil, ""), http.StatusUnauthorized, "unauthorized")

	// A session signed under a longer TTL than the server's now is refused.
	f2 := newFixture(t, fixtureOptions{tokens: testTokens()})
	fresh := sessionOf(t, f2, readerSecret).Value
	short, err := api.New(api.Options{Engine: f2.eng, Tokens: testTokens(), SessionTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	f2.h = short
	wantError(t, withCookie(t, f2, "GET", "/v1/pipelines", fresh, nil, ""), http.StatusUnauthorized, "unauthorized")

	// Removing the token, or changing its secret, ends its sessions.
	f3 := newFixture(t, fixtureOptions{tokens: testTokens()})
	s3 := sessionOf(t, f3, readerSecret).Value
	for name, tokens := range map[string][]api.Token{
		"removed": testTokens()[1:],
		"rotated": append([]api.Token{{Name: "dash", Role: pipeline.RoleReader, Secret: "rd-rotated-7c1e9a3b5d"}}, testTokens()[1:]...),
	} {
		h, err := api.New(api.Options{Engine: f3.eng, Tokens: tokens})
		if err != nil {
			t.Fatal(err)
		}
		f3.h = h
		wantError(t, withCookie(t, f3, "GET", "/v1/pipelines", s3, nil, ""), http.StatusUnauthorized, "unauthorized")
		_ = name
	}
	// The same tokens in a new process (a restart, another replica): the
	// session holds.
	h, err := api.New(api.Options{Engine: f3.eng, Tokens: testTokens()})
	if err != nil {
		t.Fatal(err)
	}
	f3.h = h
	want[map[string]any](t, withCookie(t, f3, "GET", "/v1/pipelines", s3, nil, ""), http.StatusOK)
}

// A state-changing request made with the session cookie needs the
// session's CSRF token in X-CSRF-Token and must not come from another
// origin.
func TestCSRF(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens(), dashboard: whoami})
	admin := sessionOf(t, f, adminSecret).Value
	csrf := whoIs(t, withCookie(t, f, "GET", "/", admin, nil, "")).CSRF
	other := whoIs(t, withCookie(t, f, "GET", "/", sessionOf(t, f, readerSecret).Value, nil, "")).CSRF
	if csrf == other {
		t.Fatal("two sessions share a CSRF token")
	}
	json := http.Header{"Content-Type": {"application/json"}}
	with := func(kv ...string) http.Header {
		h := json.Clone()
		for i := 0; i+1 < len(kv); i += 2 {
			h.Set(kv[i], kv[i+1])
		}
		return h
	}
	for _, tc := range []struct {
		name   string
		header http.Header
		why    string
	}{
		{"no CSRF header", with("Origin", "http://example.com"), "missing X-CSRF-Token"},
		{"wrong CSRF header", with(api.CSRFHeader, csrf+"x"), "wrong X-CSRF-Token"},
		{"another session's token", with(api.CSRFHeader, other), "wrong X-CSRF-Token"},
		{"cross-origin", with(api.CSRFHeader, csrf, "Origin", "https://evil.example"), "cross-origin"},
		{"cross-site fetch", with(api.CSRFHeader, csrf, "Sec-Fetch-Site", "cross-site"), "cross-origin"},
		{"same-site fetch", with(api.CSRFHeader, csrf, "Sec-Fetch-Site", "same-site"), "cross-origin"},
		{"null origin", with(api.CSRFHeader, csrf, "Origin", "null"), "cross-origin"},
	} {
		msg := wantError(t, withCookie(t, f, "POST", "/v1/pipelines/orders/pause", admin, tc.header, `{}`), http.StatusForbidden, "forbidden")
		if !strings.Contains(msg, tc.why) {
			t.Errorf("%s: message %q does not say %q", tc.name, msg, tc.why)
		}
	}
	if p := want[map[string]any](t, f.do(t, "GET", "/v1/pipelines/orders", adminSecret, ""), http.StatusOK); p["paused"] == true {
		t.Fatal("a refused request paused the pipeline")
	}
	// Right: the token, from this origin (or a proxy's), or no Origin.
	for _, h := range []http.Header{
		with(api.CSRFHeader, csrf, "Origin", "http://example.com", "Sec-Fetch-Site", "same-origin"),
		with(api.CSRFHeader, csrf, "Origin", "https://dash.example.org", "X-Forwarded-Host", "dash.example.org"),
		with(api.CSRFHeader, csrf),
	} {
		want[map[string]any](t, withCookie(t, f, "POST", "/v1/pipelines/orders/pause", admin, h, `{}`), http.StatusOK)
	}
	// A reader's session with the right token is still a reader.
	rd := sessionOf(t, f, readerSecret).Value
	rcsrf := whoIs(t, withCookie(t, f, "GET", "/", rd, nil, "")).CSRF
	wantError(t, withCookie(t, f, "POST", "/v1/pipelines/orders/resume", rd, with(api.CSRFHeader, rcsrf), ""), http.StatusForbidden, "forbidden")
	// Bearer tokens need no CSRF token (a page cannot make a browser send
	// one), also with a cookie beside.
	want[map[string]any](t, f.do(t, "POST", "/v1/pipelines/orders/resume", adminSecret, ""), http.StatusOK)
	h := with("Authorization", "Bearer "+adminSecret)
	want[map[string]any](t, withCookie(t, f, "POST", "/v1/pipelines/orders/resume", rd, h, ""), http.StatusOK)
}

// Without tokens (loopback only) every caller is the anonymous admin; a
// state-changing request a browser page makes still needs the CSRF token
// and this origin, so another local page cannot post to the API. Tools
// (no Origin, no Sec-Fetch-Site, no cookie) are not asked for one.
func TestAnonymousCSRF(t *testing.T) {
	f := newFixture(t, fixtureOptions{dashboard: whoami})
	who := whoIs(t, f.do(t, "GET", "/", "", ""))
	if who.Role != "admin" || who.CSRF == "" {
		t.Fatalf("anonymous caller %+v, want admin with a CSRF token", who)
	}
	json := http.Header{"Content-Type": {"application/json"}}
	want[map[string]any](t, f.doWith(t, "POST", "/v1/pipelines/orders/pause", json, `{}`), http.StatusOK)
	for _, tc := range []struct {
		kv  []string
		why string
	}{
		{[]string{"Origin", "http://evil.example"}, "cross-origin"},
		{[]string{"Sec-Fetch-Site", "cross-site", api.CSRFHeader, who.CSRF}, "cross-origin"},
		{[]string{"Origin", "http://example.com"}, "missing X-CSRF-Token"},
		{[]string{"Origin", "http://example.com", api.CSRFHeader, "nope"}, "wrong X-CSRF-Token"},
	} {
		h := json.Clone()
		for i := 0; i < len(tc.kv); i += 2 {
			h.Set(tc.kv[i], tc.kv[i+1])
		}
		msg := wantError(t, f.doWith(t, "POST", "/v1/pipelines/orders/resume", h, ""), http.StatusForbidden, "forbidden")
		if !strings.Contains(msg, tc.why) {
			t.Errorf("%v: message %q does not say %q", tc.kv, msg, tc.why)
		}
	}
	h := json.Clone()
	h.Set("Origin", "http://example.com")
	h.Set(api.CSRFHeader, who.CSRF)
	want[map[string]any](t, f.doWith(t, "POST", "/v1/pipelines/orders/resume", h, ""), http.StatusOK)
	// No sign-in to do: the form sends the browser on.
	if rec := f.do(t, "GET", "/sign-in?next=/ui/events", "", ""); rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/ui/events" {
		t.Errorf("GET /sign-in without tokens: %d to %q", rec.Code, rec.Header().Get("Location"))
	}
}

// The sign-in form returns to a path of this server only.
func TestSignInRefusesOpenRedirects(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	for next, to := range map[string]string{
		"":                              "/",
		"/ui/events?type=JOB_FAILED":    "/ui/events?type=JOB_FAILED",
		"/ui/pipelines/a%2Fb":           "/ui/pipelines/a%2Fb",
		"https://evil.example/":         "/",
		"//evil.example/":               "/",
		"///evil.example/":              "/",
		"/\\evil.example":               "/",
		"\\\\evil.example":              "/",
		"/\t/evil.example":              "/",
		"/ui/\r\nSet-Cookie: x=1":       "/",
		"javascript:alert(1)":           "/",
		"evil.example":                  "/",
		"/sign-in?next=//evil":          "/",
		"/ui/#\x15":                     "/",
		"/ui/#\x7f":                     "/",
		"/%0a":                          "/%0a",
		"http:/evil.example":            "/",
		"/" + strings.Repeat("a", 3000): "/",
		// The redirect cleans the path: a backslash moved into second
		// place is "//evil.example" to a browser.
		`/./\evil.example`:         "/",
		`/x/../\evil.example`:      "/",
		`/a/b/../../\evil.example`: "/",
		`/.//\evil.example`:        "/",
		`/./\/evil.example`:        "/",
		`/ui/a\b`:                  "/",
		"/./ui/events":             "/ui/events",
	} {
		rec := signIn(t, f, readerSecret, next, nil)
		if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != to {
			t.Errorf("next %q: %d to %q, want 303 to %q", next, rec.Code, rec.Header().Get("Location"), to)
		}
	}
	// The same through GET /sign-in?next=… on a server without tokens,
	// which sends the browser on at once.
	open := newFixture(t, fixtureOptions{})
	for _, next := range []string{`/./\evil.example`, `/x/../\evil.example`, `/a/b/../../\evil.example`, `/.//\evil.example`, `/./\/evil.example`} {
		rec := open.do(t, "GET", "/sign-in?next="+url.QueryEscape(next), "", "")
		if loc := rec.Header().Get("Location"); rec.Code != http.StatusSeeOther || loc != "/" {
			t.Errorf("GET /sign-in?next=%q: %d to %q, want 303 to /", next, rec.Code, loc)
		}
	}
}

// A wrong token shows the form again with an error that tells nothing of
// what was wrong; failures are limited per client address.
func TestSignInFailuresAreLimited(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	msgOf := func(rec *httptest.ResponseRecorder) string {
		b := rec.Body.String()
		i := strings.Index(b, `<p class="error" role="alert">`)
		if i < 0 {
			t.Fatalf("no error on the form: %s", b)
		}
		return b[i : i+strings.Index(b[i:], "</p>")]
	}
	var first string
	for i, tok := range []string{"wrong", readerSecret[:len(readerSecret)-1], readerSecret + "x", "", strings.ToUpper(readerSecret)} {
		rec := signIn(t, f, tok, "/ui/health", nil)
		if rec.Code != http.StatusUnauthorized || rec.Header().Get("Set-Cookie") != "" {
			t.Fatalf("failure %d: %d, cookie %q", i, rec.Code, rec.Header().Get("Set-Cookie"))
		}
		if i == 0 {
			first = msgOf(rec)
		} else if msgOf(rec) != first {
			t.Errorf("failure %d says %q, the first %q: the message tells the failures apart", i, msgOf(rec), first)
		}
		if !strings.Contains(rec.Body.String(), `value="/ui/health"`) {
			t.Errorf("the form again lost next")
		}
	}
	// The sixth try is refused without looking at the token, even a good
	// one; another address is not held up.
	rec := signIn(t, f, readerSecret, "/", nil)
	if rec.Code != http.StatusTooManyRequests || rec.Header().Get("Retry-After") != "60" || rec.Header().Get("Set-Cookie") != "" {
		t.Fatalf("sixth try: %d Retry-After %q", rec.Code, rec.Header().Get("Retry-After"))
	}
	other := httptest.NewRequest("POST", "/sign-in", strings.NewReader("token="+readerSecret))
	other.RemoteAddr = "192.0.2.9:4000"
	other.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	orec := httptest.NewRecorder()
	f.h.ServeHTTP(orec, other)
	if orec.Code != http.StatusSeeOther {
		t.Errorf("another address: %d", orec.Code)
	}
	// One try comes back per minute.
	f.clk.Advance(time.Minute)
	if rec := signIn(t, f, "wrong", "/", nil); rec.Code != http.StatusUnauthorized {
		t.Fatalf("a minute later: %d, want the form again", rec.Code)
	}
	if rec := signIn(t, f, readerSecret, "/", nil); rec.Code != http.StatusTooManyRequests {
		t.Fatalf("right after that failure: %d, want 429", rec.Code)
	}
	if !strings.Contains(f.logs.String(), `"msg":"sign-in failed"`) || strings.Contains(f.logs.String(), readerSecret) {
		t.Error("failures are not logged, or a token is")
	}
}

// Other refusals of the form: a post from another origin, one not sent
// as a form.
func TestSignInFormRefusals(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	if rec := signIn(t, f, readerSecret, "/", http.Header{"Origin": {"https://evil.example"}}); rec.Code != http.StatusForbidden || rec.Header().Get("Set-Cookie") != "" {
		t.Errorf("cross-origin sign-in: %d", rec.Code)
	}
	if rec := signIn(t, f, readerSecret, "/", http.Header{"Content-Type": {"application/json"}}); rec.Code != http.StatusUnsupportedMediaType {
		t.Errorf("JSON sign-in: %d", rec.Code)
	}
	big := url.Values{"token": {strings.Repeat("a", 10<<10)}}.Encode()
	rec := f.doWith(t, "POST", "/sign-in", http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}, big)
	if rec.Code != http.StatusBadRequest {
		t.Errorf("oversized form: %d", rec.Code)
	}
}

func TestSignOutDeletesTheCookie(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	c := sessionOf(t, f, readerSecret).Value
	rec := withCookie(t, f, "POST", "/sign-out", c, http.Header{"Origin": {"http://example.com"}}, "")
	set := rec.Header().Get("Set-Cookie")
	if rec.Code != http.StatusSeeOther || rec.Header().Get("Location") != "/sign-in" || !strings.Contains(set, api.SessionCookie+"=;") || !strings.Contains(set, "Max-Age=0") {
		t.Errorf("sign-out: %d to %q, Set-Cookie %q", rec.Code, rec.Header().Get("Location"), set)
	}
	wantError(t, withCookie(t, f, "POST", "/sign-out", c, http.Header{"Origin": {"https://evil.example"}}, ""), http.StatusForbidden, "forbidden")
}

// Every answer carries the security headers: the sign-in page, a
// dashboard page, an asset, the JSON API and its errors.
func TestSecurityHeaders(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens(), dashboard: whoami})
	page := f.do(t, "GET", "/sign-in?next=/ui/health", "", "")
	if page.Code != http.StatusOK || !strings.HasPrefix(page.Header().Get("Content-Type"), "text/html") ||
		!strings.Contains(page.Body.String(), `href="/ui/assets/app.css"`) || !strings.Contains(page.Body.String(), `name="next" value="/ui/health"`) {
		t.Fatalf("sign-in form: %d %s", page.Code, page.Body.String())
	}
	for name, rec := range map[string]*httptest.ResponseRecorder{
		"sign-in":  page,
		"page":     f.do(t, "GET", "/ui/health", readerSecret, ""),
		"asset":    f.do(t, "GET", "/ui/assets/app.css", "", ""),
		"redirect": f.do(t, "GET", "/", "", ""),
		"JSON":     f.do(t, "GET", "/v1/pipelines", readerSecret, ""),
		"error":    f.do(t, "GET", "/v1/nothing", readerSecret, ""),
	} {
		h := rec.Header()
		if h.Get("Content-Security-Policy") != api.ContentSecurityPolicy || h.Get("X-Content-Type-Options") != "nosniff" ||
			h.Get("Referrer-Policy") != "same-origin" || h.Get("X-Frame-Options") != "DENY" {
			t.Errorf("%s: headers %v", name, h)
		}
	}
	if !strings.Contains(api.ContentSecurityPolicy, "script-src 'self';") || strings.Contains(api.ContentSecurityPolicy, "unsafe") {
		t.Errorf("CSP %q", api.ContentSecurityPolicy)
	}
	// The assets are open (the sign-in page uses them); pages are not.
	if who := whoIs(t, f.do(t, "GET", "/ui/assets/app.css", "", "")); who.Name != "" || who.Path != "/ui/assets/app.css" {
		t.Errorf("asset caller %+v", who)
	}
	// A token in the form is never echoed back.
	if rec := signIn(t, f, "<script>alert(1)</script>", `"><script>`, nil); strings.Contains(rec.Body.String(), "<script>") {
		t.Errorf("the form echoed markup: %s", rec.Body.String())
	}
}

// FuzzSignInForm posts random form bodies: no panic, never a 5xx, a
// redirect only to a path of this server, and a session cookie only for
// a body that names a token.
func FuzzSignInForm(f *testing.F) {
	fx := newFixture(f, fixtureOptions{tokens: testTokens()})
	for _, s := range []string{"token=" + readerSecret + "&next=/ui/", "token=%zz", "next=//evil&token=" + adminSecret, "token=a;b", "token=" + readerSecret + "&token=x", "", "&&&="} {
		f.Add(s, "application/x-www-form-urlencoded")
	}
	f.Add("token="+readerSecret, "application/x-www-form-urlencoded; charset=utf-8")
	f.Add("token="+readerSecret, "multipart/form-data; boundary=x")
	f.Fuzz(func(t *testing.T, body, ct string) {
		rec := fx.doWith(t, "POST", "/sign-in", http.Header{"Content-Type": {ct}}, body)
		if rec.Code >= 500 {
			t.Fatalf("%q: %d %s", body, rec.Code, rec.Body.String())
		}
		if loc := rec.Header().Get("Location"); loc != "" && (!strings.HasPrefix(loc, "/") || strings.HasPrefix(loc, "//") || strings.Contains(loc, "\\")) {
			t.Fatalf("%q: redirect to %q", body, loc)
		}
		if rec.Header().Get("Set-Cookie") != "" {
			q, err := url.ParseQuery(body)
			tok := strings.TrimSpace(q.Get("token"))
			if err != nil || (tok != readerSecret && tok != writerSecret && tok != adminSecret) {
				t.Fatalf("%q (%s): a session without a token", body, ct)
			}
		}
	})
}
