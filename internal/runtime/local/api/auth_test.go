package api_test

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

// route is one route of the API with a body it accepts, the least role it
// needs ("" for open routes) and its answer to a caller allowed (0: 200).
type route struct {
	method, path, body string
	need               pipeline.Role
	ok                 int
}

// status is the answer rt gives a caller it allows.
func (rt route) status() int {
	if rt.ok == 0 {
		return http.StatusOK
	}
	return rt.ok
}

var routes = []route{
	{"PUT", "/v1/pipelines/orders/sensors/k", `{"count": 1}`, pipeline.RoleWriter, 0},
	{"GET", "/v1/pipelines/orders/sensors", "", pipeline.RoleReader, 0},
	{"GET", "/v1/pipelines", "", pipeline.RoleReader, 0},
	{"GET", "/v1/pipelines/orders", "", pipeline.RoleReader, 0},
	{"GET", "/v1/pipelines/orders/runs", "", pipeline.RoleReader, 0},
	{"GET", "/v1/pipelines/orders/explain", "", pipeline.RoleReader, 0},
	{"POST", "/v1/pipelines/orders/reruns", `{"period": "2026-03-01"}`, pipeline.RoleOperator, 0},
	{"POST", "/v1/pipelines/orders/pause", "", pipeline.RoleOperator, 0},
	{"POST", "/v1/pipelines/orders/resume", "", pipeline.RoleOperator, 0},
	{"POST", "/v1/pipelines/nightly/backfills", `{"from": "2026-03-06", "to": "2026-03-08", "dryRun": true}`, pipeline.RoleOperator, 0},
	{"GET", "/v1/pipelines/nightly/backfills", "", pipeline.RoleReader, 0},
	{"GET", "/v1/pipelines/nightly/backfills/7", "", pipeline.RoleReader, http.StatusNotFound},
	{"DELETE", "/v1/pipelines/nightly/backfills/7", "", pipeline.RoleOperator, http.StatusNotFound},
	{"POST", "/v1/silences", `{"pipelines": ["orders"], "duration": "1h", "comment": "on call"}`, pipeline.RoleOperator, http.StatusCreated},
	{"POST", "/v1/silences", `{"owners": ["sales"], "duration": "1h", "comment": "a team"}`, pipeline.RoleOperator, http.StatusCreated},
	// A silence that reaches every pipeline is the admin's alone.
	{"POST", "/v1/silences", `{"types": ["SLA_BREACH"], "duration": "1h", "comment": "all"}`, pipeline.RoleAdmin, http.StatusCreated},
	{"POST", "/v1/silences", `{"pipelines": ["*"], "duration": "1h", "comment": "all"}`, pipeline.RoleAdmin, http.StatusCreated},
	{"GET", "/v1/silences", "", pipeline.RoleReader, 0},
	{"DELETE", "/v1/silences/nope", "", pipeline.RoleOperator, http.StatusNotFound},
	{"GET", "/v1/graph", "", pipeline.RoleReader, 0},
	{"GET", "/v1/health", "", pipeline.RoleReader, 0},
	{"GET", "/v1/alerts/dead-letters", "", pipeline.RoleReader, 0},
	{"GET", "/v1/events", "", pipeline.RoleReader, 0},
	{"GET", "/metrics", "", pipeline.RoleReader, 0},
	{"GET", "/healthz", "", "", 0},
	{"GET", "/readyz", "", "", 0},
}

// TestRoleMatrix: every route against no token, an unknown token and each
// role: 401 with a Bearer challenge, 403, or served.
func TestRoleMatrix(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	callers := []struct {
		name, token string
		role        pipeline.Role
	}{
		{"no token", "", ""},
		{"unknown token", "rd-3f9c1a7e5b2d4c80ab", ""},
		{"reader", readerSecret, pipeline.RoleReader},
		{"writer", writerSecret, pipeline.RoleWriter},
		{"operator", operatorSecret, pipeline.RoleOperator},
		{"admin", adminSecret, pipeline.RoleAdmin},
	}
	for _, rt := range routes {
		for _, c := range callers {
			t.Run(rt.method+" "+rt.path+" as "+c.name, func(t *testing.T) {
				rec := f.do(t, rt.method, rt.path, c.token, rt.body)
				switch {
				case rt.need == "":
					if rec.Code != rt.status() {
						t.Fatalf("open route: %d %s", rec.Code, rec.Body)
					}
				case c.role == "":
					wantError(t, rec, http.StatusUnauthorized, "unauthorized")
					if ch := rec.Header().Get("WWW-Authenticate"); !strings.HasPrefix(ch, "Bearer") {
						t.Fatalf("401 without a Bearer challenge: %q", ch)
					}
				case !c.role.Includes(rt.need):
					msg := wantError(t, rec, http.StatusForbidden, "forbidden")
					// It names a role the caller lacks: the route's, or the
					// first gate's (operator, for a silence of everything).
					named := false
					for _, r := range pipeline.Roles() {
						named = named || !c.role.Includes(r) && strings.Contains(msg, "needs "+string(r)) || strings.Contains(msg, "needs the "+string(r))
					}
					if !named {
						t.Fatalf("403 message %q does not say what is needed", msg)
					}
				default:
					if rec.Code != rt.status() {
						t.Fatalf("allowed: %d %s, want %d", rec.Code, rec.Body, rt.status())
					}
				}
			})
		}
	}
}

// TestWithoutTokensEverythingIsAllowed, the API then being loopback-only.
func TestWithoutTokensEverythingIsAllowed(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	for _, rt := range routes {
		if rec := f.do(t, rt.method, rt.path, "", rt.body); rec.Code != rt.status() {
			t.Errorf("%s %s: %d %s", rt.method, rt.path, rec.Code, rec.Body)
		}
	}
}

func TestBearerHeaderForms(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	for header, code := range map[string]int{
		"Bearer " + readerSecret:        200,
		"bearer " + readerSecret:        200,
		"Bearer  " + readerSecret + " ": 200,
		"Basic " + readerSecret:         401,
		readerSecret:                    401,
		"Bearer":                        401,
		"Bearer " + readerSecret + "x":  401,
		"Bearer " + readerSecret[:10]:   401,
	} {
		req, _ := http.NewRequest("GET", "/v1/pipelines", nil)
		req.Header.Set("Authorization", header)
		rec := httptest.NewRecorder()
		f.h.ServeHTTP(rec, req)
		if rec.Code != code {
			t.Errorf("Authorization %q: %d, want %d", strings.ReplaceAll(header, readerSecret, "<reader>"), rec.Code, code)
		}
	}
}

// TestNoTokenEverLeaks: whatever is sent — right tokens, wrong ones, in
// headers, paths, queries and bodies — no secret comes back in a response
// (body or header) and none is logged.
func TestNoTokenEverLeaks(t *testing.T) {
	f := newFixture(t, fixtureOptions{tokens: testTokens()})
	bogus := "zz-leak-canary-0123456789"
	secrets := []string{readerSecret, writerSecret, adminSecret, bogus}
	var responses strings.Builder
	for _, rt := range routes {
		for _, tok := range secrets {
			bodies := []string{rt.body, `{"token": "` + tok + `"}`, tok}
			if rt.method == "PUT" {
				bodies = bodies[:1] // a sensor body is data, stored and listed as sent
			}
			for _, body := range bodies {
				rec := f.do(t, rt.method, rt.path+"?token="+tok, tok, body)
				fmt.Fprintf(&responses, "%d %v %s\n", rec.Code, rec.Header(), rec.Body)
				rec = f.do(t, rt.method, rt.path, tok, body)
				fmt.Fprintf(&responses, "%d %v %s\n", rec.Code, rec.Header(), rec.Body)
			}
		}
	}
	// Bad tokens and a panic-free 405 and 404 with a token in the path.
	for _, tok := range secrets {
		rec := f.do(t, "DELETE", "/v1/pipelines/"+tok, tok, "")
		fmt.Fprintf(&responses, "%d %v %s\n", rec.Code, rec.Header(), rec.Body)
		rec = f.do(t, "GET", "/v2/"+tok, tok, "")
		fmt.Fprintf(&responses, "%d %v %s\n", rec.Code, rec.Header(), rec.Body)
	}
	logs := f.logs.String()
	if !strings.Contains(logs, `"token":"ops"`) {
		t.Fatalf("the request log does not name the caller's token:\n%s", logs)
	}
	for _, s := range secrets[:3] {
		if i := strings.Index(responses.String(), s); i >= 0 {
			t.Errorf("a response contains a token value: %s", responses.String()[max(0, i-300):i+50])
		}
		if strings.Contains(logs, s) {
			t.Errorf("the log contains a token value")
		}
	}
	// A token printed or logged by mistake is redacted.
	var buf syncBuffer
	tok := testTokens()[2]
	slog.New(slog.NewTextHandler(&buf, nil)).Info("oops", "token", tok, "secret", tok.Secret)
	for _, out := range []string{buf.String(), fmt.Sprint(tok), fmt.Sprintf("%+v %#v %s %v", tok, tok, tok.Secret, tok.Secret)} {
		if strings.Contains(out, adminSecret) {
			t.Errorf("token value printed: %s", out)
		}
	}
}

func TestResolveTokens(t *testing.T) {
	env := map[string]string{"INTERLOCK_ETL": "etl-secret-1", "INTERLOCK_EMPTY": " ", "INTERLOCK_SPACE": "two words", "INTERLOCK_DUP": "file-secret-1"}
	files := map[string]string{"/run/secrets/ops": "file-secret-1\n", "/run/secrets/empty": "\n"}
	lookupEnv := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	readFile := func(p string) ([]byte, error) {
		if v, ok := files[p]; ok {
			return []byte(v), nil
		}
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrNotExist}
	}
	settings := func(tokens ...pipeline.Token) *pipeline.Settings {
		s := pipeline.DefaultSettings()
		s.Server.Tokens = tokens
		return s
	}

	got, err := api.ResolveTokens(settings(
		pipeline.Token{Name: "etl", Role: pipeline.RoleWriter, TokenEnv: "INTERLOCK_ETL"},
		pipeline.Token{Name: "ops", Role: pipeline.RoleAdmin, TokenFile: "/run/secrets/ops"},
	), lookupEnv, readFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "etl" || got[0].Role != pipeline.RoleWriter || got[0].Secret != "etl-secret-1" ||
		got[1].Name != "ops" || got[1].Secret != "file-secret-1" {
		t.Fatalf("resolved %+v", got)
	}

	for _, tc := range []struct {
		name     string
		tok      pipeline.Token
		mentions []string
	}{
		{"unset variable", pipeline.Token{Name: "a", Role: pipeline.RoleReader, TokenEnv: "INTERLOCK_NOPE"}, []string{`"a"`, "INTERLOCK_NOPE", "not set"}},
		{"empty variable", pipeline.Token{Name: "b", Role: pipeline.RoleReader, TokenEnv: "INTERLOCK_EMPTY"}, []string{`"b"`, "INTERLOCK_EMPTY", "empty"}},
		{"value with spaces", pipeline.Token{Name: "c", Role: pipeline.RoleReader, TokenEnv: "INTERLOCK_SPACE"}, []string{`"c"`, "INTERLOCK_SPACE", "spaces"}},
		{"missing file", pipeline.Token{Name: "d", Role: pipeline.RoleReader, TokenFile: "/run/secrets/nope"}, []string{`"d"`, "/run/secrets/nope", "not exist"}},
		{"empty file", pipeline.Token{Name: "e", Role: pipeline.RoleReader, TokenFile: "/run/secrets/empty"}, []string{`"e"`, "/run/secrets/empty", "empty"}},
		{"same value twice", pipeline.Token{Name: "f", Role: pipeline.RoleReader, TokenEnv: "INTERLOCK_DUP"}, []string{`"f"`, `"ops"`, "same value"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := api.ResolveTokens(settings(pipeline.Token{Name: "ops", Role: pipeline.RoleAdmin, TokenFile: "/run/secrets/ops"}, tc.tok), lookupEnv, readFile)
			if !errors.Is(err, api.ErrToken) {
				t.Fatalf("error %v, want ErrToken", err)
			}
			for _, m := range tc.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("error %q does not mention %s", err, m)
				}
			}
			for _, v := range []string{"two words", "file-secret-1", "etl-secret-1"} {
				if strings.Contains(err.Error(), v) {
					t.Errorf("error %q contains a token value", err)
				}
			}
		})
	}

	// Every problem at once.
	_, err = api.ResolveTokens(settings(
		pipeline.Token{Name: "a", Role: pipeline.RoleReader, TokenEnv: "INTERLOCK_NOPE"},
		pipeline.Token{Name: "d", Role: pipeline.RoleReader, TokenFile: "/run/secrets/nope"},
	), lookupEnv, readFile)
	if err == nil || !strings.Contains(err.Error(), "INTERLOCK_NOPE") || !strings.Contains(err.Error(), "/run/secrets/nope") {
		t.Fatalf("error %v, want both problems", err)
	}

	if got, err := api.ResolveTokens(settings(), lookupEnv, readFile); err != nil || len(got) != 0 {
		t.Fatalf("no tokens: %v %v", got, err)
	}
}

func TestNewRefusesAnOpenAPIBeyondLoopback(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	settings := func(addr string, tokens ...pipeline.Token) *pipeline.Settings {
		s := pipeline.DefaultSettings()
		s.Server.Addr = addr
		s.Server.Tokens = tokens
		return s
	}
	etl := pipeline.Token{Name: "etl", Role: pipeline.RoleWriter, TokenEnv: "INTERLOCK_ETL"}
	for _, tc := range []struct {
		name     string
		opts     api.Options
		mentions string // "" when New must accept
	}{
		{"loopback without tokens", api.Options{Engine: f.eng, Settings: settings("127.0.0.1:7070")}, ""},
		{"localhost without tokens", api.Options{Engine: f.eng, Settings: settings("localhost:7070")}, ""},
		{"IPv6 loopback without tokens", api.Options{Engine: f.eng, Settings: settings("[::1]:7070")}, ""},
		{"all interfaces with tokens", api.Options{Engine: f.eng, Settings: settings("0.0.0.0:7070", etl), Tokens: testTokens()}, ""},
		{"default settings", api.Options{Engine: f.eng}, ""},
		{"all interfaces without tokens", api.Options{Engine: f.eng, Settings: settings("0.0.0.0:7070")}, "0.0.0.0:7070"},
		{"empty host without tokens", api.Options{Engine: f.eng, Settings: settings(":7070")}, "tokens"},
		{"tokens configured, none resolved", api.Options{Engine: f.eng, Settings: settings("127.0.0.1:7070", etl)}, "resolved"},
		{"no engine", api.Options{}, "Engine"},
		{"token without a role", api.Options{Engine: f.eng, Tokens: []api.Token{{Name: "x", Secret: "s"}}}, `"x"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, err := api.New(tc.opts)
			if tc.mentions == "" {
				if err != nil || h == nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.mentions) {
				t.Fatalf("error %v, want one mentioning %s", err, tc.mentions)
			}
		})
	}
}
