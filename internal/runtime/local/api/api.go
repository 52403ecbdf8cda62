package api

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/pipeline"
)

// Options configure the API handler.
type Options struct {
	Engine   *engine.Engine     // required
	Settings *pipeline.Settings // nil: the defaults of an empty interlock.yaml
	// Tokens are the resolved bearer tokens (see ResolveTokens). With none,
	// every request is allowed, and New refuses unless server.addr is a
	// loopback address.
	Tokens []Token
	Logger *slog.Logger // nil: discard
	// Metrics is where the API counts requests and sensor writes and what
	// /metrics serves; nil: New makes its own.
	Metrics *Metrics
	// Ready reports whether the process is ready to serve (/readyz); nil:
	// always ready.
	Ready func() error
	// Addr is the address the server really listens on when it differs
	// from server.addr (serve --addr); the loopback rule applies to it.
	Addr string
	// DeadLetters lists the alerts no sink accepted (GET
	// /v1/alerts/dead-letters); nil: the route answers an empty list.
	DeadLetters func(context.Context) ([]alert.DeadLetter, error)
	// Dashboard serves the web dashboard's pages: "GET /" and everything
	// under "GET /ui/", for readers (CallerFrom says who asks). nil: no
	// dashboard, those paths are 404.
	Dashboard http.Handler
	// SessionTTL is how long a dashboard session lasts (0:
	// DefaultSessionTTL).
	SessionTTL time.Duration
	// Streams wakes the event streams (GET /v1/events/stream) when the
	// engine commits events, and ends them at shutdown; nil: streams poll
	// the store only, and end when their client goes.
	Streams *EventStreams
	// Health reads GET /v1/health; nil: one over Engine, Settings and
	// DeadLetters (no sinks, no refused files).
	Health *Health
}

// server holds what the handlers share.
type server struct {
	eng      *engine.Engine
	log      *slog.Logger
	metrics  *Metrics
	ready    func() error
	maxBody  int64
	auth     *authenticator
	explain  explainer
	metricsH http.Handler
	dead     func(context.Context) ([]alert.DeadLetter, error)
	// dashboard serves the web pages; nil: none.
	dashboard http.Handler
	healthR   *Health
	limiter   *limiter // failed sign-ins per client address
	stream    *EventStreams
}

// New returns the API handler. It refuses a configuration that would
// expose an unauthenticated API beyond this machine, and one whose
// settings name tokens that were not resolved (which would otherwise
// silently open the API).
func New(o Options) (http.Handler, error) {
	if o.Engine == nil {
		return nil, errors.New("api: Options.Engine is required")
	}
	settings := o.Settings
	if settings == nil {
		settings = pipeline.DefaultSettings()
	}
	if n := len(settings.Server.Tokens); n > 0 && len(o.Tokens) == 0 {
		return nil, fmt.Errorf("api: server.tokens names %d token(s) but none was resolved; refusing to serve without authentication", n)
	}
	addr := settings.Server.Addr
	if o.Addr != "" {
		addr = o.Addr
	}
	if len(o.Tokens) == 0 && !loopbackAddr(addr) {
		return nil, fmt.Errorf("api: address %q is reachable from other machines, which needs server.tokens; without tokens bind to 127.0.0.1", addr)
	}
	auth, err := newAuthenticator(o.Tokens, o.Engine, o.SessionTTL)
	if err != nil {
		return nil, err
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := o.Metrics
	if m == nil {
		m = NewMetrics(o.Engine)
	}
	maxBody := settings.Server.MaxBodyBytes
	if maxBody <= 0 {
		maxBody = pipeline.DefaultMaxBodyBytes
	}
	s := &server{
		eng:      o.Engine,
		log:      log,
		metrics:  m,
		ready:    o.Ready,
		maxBody:  maxBody,
		auth:     auth,
		explain:  engineExplainer(o.Engine),
		dead:     o.DeadLetters,
		metricsH: m.Handler(),

		dashboard: o.Dashboard,
		healthR:   o.Health,
		limiter:   newLimiter(),
		stream:    o.Streams,
	}
	if s.stream == nil {
		s.stream = NewEventStreams()
	}
	if s.healthR == nil {
		s.healthR = &Health{Engine: o.Engine, Settings: settings, DeadLetters: o.DeadLetters}
	}
	return s.outer(s.routes()), nil
}

// routes registers every route with the role it needs. Role "" is open.
func (s *server) routes() *http.ServeMux {
	mux := http.NewServeMux()
	handle := func(pattern string, role pipeline.Role, h handlerFunc) {
		mux.Handle(pattern, s.route(role, h))
		s.metrics.knowRoute(pattern)
	}
	handle("PUT /v1/pipelines/{id}/sensors/{key}", pipeline.RoleWriter, s.putSensor)
	handle("POST "+LineagePath, pipeline.RoleWriter, s.postLineage)
	handle("GET /v1/pipelines/{id}/sensors", pipeline.RoleReader, s.listSensors)
	handle("GET /v1/pipelines", pipeline.RoleReader, answer(s.listPipelines))
	handle("GET /v1/pipelines/{id}", pipeline.RoleReader, answer(s.getPipeline))
	handle("GET /v1/pipelines/{id}/runs", pipeline.RoleReader, s.listRuns)
	handle("GET /v1/pipelines/{id}/explain", pipeline.RoleReader, s.explainPeriod)
	handle("POST /v1/pipelines/{id}/reruns", pipeline.RoleOperator, s.requestRerun)
	handle("POST /v1/pipelines/{id}/pause", pipeline.RoleOperator, s.pause)
	handle("POST /v1/pipelines/{id}/resume", pipeline.RoleOperator, s.resume)
	handle("POST /v1/pipelines/{id}/backfills", pipeline.RoleOperator, s.requestBackfill)
	handle("GET /v1/pipelines/{id}/backfills", pipeline.RoleReader, answer(s.listBackfills))
	handle("GET /v1/pipelines/{id}/backfills/{bid}", pipeline.RoleReader, s.getBackfill)
	handle("DELETE /v1/pipelines/{id}/backfills/{bid}", pipeline.RoleOperator, s.cancelBackfill)
	handle("GET /v1/graph", pipeline.RoleReader, answer(s.graph))
	handle("GET /v1/events", pipeline.RoleReader, s.listEvents)
	handle("POST /v1/silences", pipeline.RoleOperator, s.createSilence)
	handle("GET /v1/silences", pipeline.RoleReader, s.listSilences)
	handle("DELETE /v1/silences/{id}", pipeline.RoleOperator, answer(s.expireSilence))
	handle("GET /v1/alerts/dead-letters", pipeline.RoleReader, answer(s.listDeadLetters))
	handle("GET /v1/health", pipeline.RoleReader, answer(s.health))
	handle("GET /v1/events/stream", pipeline.RoleReader, s.streamEvents)
	// The dashboard's pages: a browser without a valid session is sent to
	// sign in instead of getting a JSON 401. Its assets hold no data and
	// are open, so the sign-in page can use them.
	page := func(pattern string, role pipeline.Role, h handlerFunc) {
		mux.Handle(pattern, s.pageRoute(role, h))
		s.metrics.knowRoute(pattern)
	}
	if o := s.dashboard; o != nil {
		serve := func(w http.ResponseWriter, r *http.Request) error {
			o.ServeHTTP(w, r)
			return nil
		}
		page("GET /{$}", pipeline.RoleReader, serve)
		page("GET /ui/", pipeline.RoleReader, serve)
		handle("GET /ui/assets/", "", serve)
	}
	page("GET /sign-in", "", s.signInForm)
	page("POST /sign-in", "", s.signIn)
	page("POST /sign-out", "", s.signOut)
	handle("GET /healthz", "", s.healthz)
	handle("GET /readyz", "", s.readyz)
	metricsRole := pipeline.Role("")
	if s.auth.enabled() {
		metricsRole = pipeline.RoleReader
	}
	handle("GET /metrics", metricsRole, s.serveMetrics)
	return mux
}

// loopbackAddr reports whether host:port binds to this machine only, as
// the settings loader judges it.
func loopbackAddr(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false
	}
	if host == "localhost" {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.IsLoopback()
}
