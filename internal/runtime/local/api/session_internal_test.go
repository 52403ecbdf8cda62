package api

import (
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/pipeline"
)

var fuzzNow = time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)

func fuzzAuth(t testing.TB) *authenticator {
	a, err := newAuthenticator([]Token{
		{Name: "dash", Role: pipeline.RoleReader, Secret: "rd-3f9c1a7e5b2d4c80aa"},
		{Name: "ops", Role: pipeline.RoleAdmin, Secret: "ad-5d7a9e1c3b8f2d64cc"},
	}, clock.NewVirtual(fuzzNow), time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// FuzzSessionCookie: no cookie value panics the parser or the check, and
// the only values accepted are the ones newSession signs (byte for byte:
// no second spelling of a session verifies).
func FuzzSessionCookie(f *testing.F) {
	a := fuzzAuth(f)
	good := newSession(a.tokens[0].sessionKey, "dash", fuzzNow.Add(30*time.Minute))
	for _, s := range []string{good, "", "v1", "v1...", "v1.ZGFzaA.1773130200.", good + "=", strings.Replace(good, "v1.", "v1.=", 1),
		"v1.ZGFzaA.+1773130200." + strings.Split(good, ".")[3], "v1.ZGFzaA.01773130200." + strings.Split(good, ".")[3]} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		i, ok := a.verifySession(v, fuzzNow)
		if !ok {
			return
		}
		s, parsed := parseSession(v)
		if !parsed {
			t.Fatalf("%q verified but does not parse", v)
		}
		if again := newSession(a.tokens[i].sessionKey, s.name, s.expires); again != v {
			t.Fatalf("%q verified, but the session it names is spelt %q", v, again)
		}
	})
}

// FuzzSafeNext: whatever a sign-in form sends as next, the browser is
// sent to a path of this server.
func FuzzSafeNext(f *testing.F) {
	for _, s := range []string{"/", "/ui/events?x=1", "//evil", "/\\evil", "https://evil", "/%2F%2Fevil", "/\t/evil", "\x00", "/a/../..//evil", "/.//evil",
		`/./\evil.example`, `/x/../\evil.example`, `/a/b/../../\evil.example`, `/.//\evil.example`, `/./\/evil.example`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, next string) {
		got := safeNext(next)
		if got != "/" && got != next {
			t.Fatalf("safeNext(%q) = %q: neither the path nor /", next, got)
		}
		if !strings.HasPrefix(got, "/") || strings.HasPrefix(got, "//") || strings.HasPrefix(got, "/\\") || strings.ContainsFunc(got, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
			t.Fatalf("safeNext(%q) = %q", next, got)
		}
		// As a browser resolves it against this server: still this server.
		base, _ := url.Parse("https://interlock.example/sign-in")
		ref, err := url.Parse(got)
		if err != nil {
			t.Fatalf("safeNext(%q) = %q does not parse: %v", next, got, err)
		}
		if u := base.ResolveReference(ref); u.Host != "interlock.example" || u.Scheme != "https" {
			t.Fatalf("safeNext(%q) = %q leads to %s", next, got, u)
		}
		// What the browser follows is the redirect's Location, which
		// http.Redirect cleans, read with every backslash as a slash.
		rec := httptest.NewRecorder()
		http.Redirect(rec, httptest.NewRequest("POST", "/sign-in", nil), got, http.StatusSeeOther)
		loc := strings.ReplaceAll(rec.Header().Get("Location"), `\`, "/")
		if strings.HasPrefix(loc, "//") {
			t.Fatalf("safeNext(%q) = %q is sent as %q: another host to a browser", next, got, rec.Header().Get("Location"))
		}
		if ref, err := url.Parse(loc); err == nil {
			if u := base.ResolveReference(ref); u.Host != "interlock.example" {
				t.Fatalf("safeNext(%q) = %q is sent as %q, which leads to %s", next, got, loc, u)
			}
		}
	})
}
