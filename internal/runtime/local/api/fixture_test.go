package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/interlockhq/interlock/internal/alert"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
	"github.com/interlockhq/interlock/internal/trigger"
)

// t0 is a Tuesday, 04:00 in New York (EDT since 8 March).
var t0 = time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)

// orders starts on its trigger sensor; its rules pass as soon as the
// sensor exists, so a write moves the period's run to TRIGGERING.
const ordersYAML = `
pipeline: {id: orders, owner: sales, description: order intake}
schedule:
  trigger: {key: orders-landed, check: exists}
validation:
  rules: [{key: orders-landed, check: exists}]
sla: {deadline: "10:00", expectedDuration: 30m}
job: {type: glue, config: {jobName: orders}, pollInterval: 1m}
`

// nightly runs on a cron in New York time.
const nightlyYAML = `
pipeline: {id: nightly, owner: platform}
schedule: {cron: "0 6 * * *", timezone: America/New_York}
validation: {rules: [{key: landed, check: exists}]}
job: {type: glue, config: {jobName: nightly}}
`

// The test tokens. Their values must never appear in a response or a log.
const (
	readerSecret   = "rd-3f9c1a7e5b2d4c80aa"
	writerSecret   = "wr-8b2e6d0f4a1c3e57bb"
	operatorSecret = "op-2c4e6a8b0d1f3e59dd"
	adminSecret    = "ad-5d7a9e1c3b8f2d64cc"
)

func testTokens() []api.Token {
	return []api.Token{
		{Name: "dash", Role: pipeline.RoleReader, Secret: readerSecret},
		{Name: "etl", Role: pipeline.RoleWriter, Secret: writerSecret},
		{Name: "oncall", Role: pipeline.RoleOperator, Secret: operatorSecret},
		{Name: "ops", Role: pipeline.RoleAdmin, Secret: adminSecret},
	}
}

// noJobs is the job system of the tests: no test runs the engine's timers,
// so nothing is ever started; if something were, it would be visible.
type noJobs struct{}

func (noJobs) Start(context.Context, trigger.Request) (trigger.Started, error) {
	return trigger.Started{JobRunID: "never"}, nil
}

func (noJobs) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{Status: trigger.StatusRunning}, nil
}

// syncBuffer is a log sink safe for concurrent writers.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

type fixture struct {
	clk     *clock.Virtual
	st      store.Store
	eng     *engine.Engine
	metrics *api.Metrics
	logs    *syncBuffer
	h       http.Handler
	dbPath  string // the SQLite file, for a second engine on it
}

type fixtureOptions struct {
	tokens []api.Token
	ready  func() error
	dead   func(context.Context) ([]alert.DeadLetter, error)
	// dashboard is mounted at / and /ui/; nil: none.
	dashboard http.Handler
	streams   *api.EventStreams
}

// newFixture starts a real engine on a SQLite store in a temporary
// directory, on a virtual clock at t0, with orders and nightly loaded,
// and the API in front of it.
func newFixture(t testing.TB, fo fixtureOptions) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{clk: clock.NewVirtual(t0), logs: &syncBuffer{}}
	log := slog.New(slog.NewJSONHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	f.dbPath = filepath.Join(t.TempDir(), "api.db")
	st, err := sqlite.Open(ctx, f.dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	f.st = st
	f.eng = engine.New(engine.Options{Store: st, Clock: f.clk, Jobs: noJobs{}, Logger: log})
	if err := f.eng.Open(ctx); err != nil {
		t.Fatal(err)
	}
	for file, doc := range map[string]string{"orders.yaml": ordersYAML, "nightly.yaml": nightlyYAML} {
		if _, err := f.eng.ApplyConfig(ctx, file, []byte(doc)); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
	}
	settings := pipeline.DefaultSettings()
	settings.Server.MaxBodyBytes = 1024
	f.metrics = api.NewMetrics(f.eng)
	h, err := api.New(api.Options{Engine: f.eng, Settings: settings, Tokens: fo.tokens, Logger: log, Metrics: f.metrics, Ready: fo.ready, DeadLetters: fo.dead,
		Dashboard: fo.dashboard, Streams: fo.streams})
	if err != nil {
		t.Fatal(err)
	}
	f.h = h
	return f
}

// do sends a request straight to the handler. token "" sends none.
func (f *fixture) do(t testing.TB, method, target, token, body string) *httptest.ResponseRecorder {
	t.Helper()
	header := http.Header{}
	if token != "" {
		header.Set("Authorization", "Bearer "+token)
	}
	return f.doWith(t, method, target, header, body)
}

// doWith sends a request with exactly the given headers straight to the
// handler.
func (f *fixture) doWith(t testing.TB, method, target string, header http.Header, body string) *httptest.ResponseRecorder {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req := httptest.NewRequest(method, target, rd)
	for name, values := range header {
		req.Header[name] = values
	}
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	return rec
}

// want checks the status and returns the decoded JSON body.
func want[T any](t testing.TB, rec *httptest.ResponseRecorder, status int) T {
	t.Helper()
	var v T
	if rec.Code != status {
		t.Fatalf("status %d, want %d; body %s", rec.Code, status, rec.Body.String())
	}
	if ct := rec.Header().Get("Content-Type"); ct != "application/json" {
		t.Fatalf("Content-Type %q, want application/json; body %s", ct, rec.Body.String())
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &v); err != nil {
		t.Fatalf("decode %s: %v", rec.Body.String(), err)
	}
	return v
}

// apiErr is the error shape every failure has.
type apiErr struct {
	Error struct {
		Code    string `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// wantError checks an error response's status and code and returns its
// message.
func wantError(t testing.TB, rec *httptest.ResponseRecorder, status int, code string) string {
	t.Helper()
	e := want[apiErr](t, rec, status)
	if e.Error.Code != code {
		t.Fatalf("error code %q, want %q (message %q)", e.Error.Code, code, e.Error.Message)
	}
	if e.Error.Message == "" {
		t.Fatal("error without a message")
	}
	return e.Error.Message
}
