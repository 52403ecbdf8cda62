// Package web is the dashboard of `interlock serve`: server-rendered pages
// (html/template) over the engine and its store, with the CSS and the
// little JavaScript they use embedded in the binary. It decides nothing:
// the state of a period, the urgency order, the deadline to count down to
// and the grid's verdicts are internal/run's board decisions; this package
// reads their facts in bounded reads and renders them.
//
// It is mounted by the API (api.Options.Dashboard) at "GET /" and under
// "GET /ui/", behind the same authentication as every /v1 route, and asks
// api.CallerFrom who is looking: only an operator or an admin sees the action buttons,
// which POST to the /v1 routes with the CSRF token the page carries.
package web

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed assets
var assetFS embed.FS

// DefaultPageSize is how many pipelines an overview page shows.
const DefaultPageSize = 50

// Options configure the dashboard.
type Options struct {
	Engine *engine.Engine // required
	// Health reads the health page's report (api.Health.Report, what GET
	// /v1/health answers); nil: the page answers 501.
	Health func(context.Context) (api.HealthReport, error)
	Logger *slog.Logger // nil: discard
	// PageSize is how many pipelines an overview page shows (default
	// DefaultPageSize).
	PageSize int
	// NoLiveTail: the pages name no event stream, so they open none. A
	// server that cannot stream (the api function: a Lambda function
	// URL's buffered response) serves pages current at their load.
	NoLiveTail bool
}

type handler struct {
	eng      *engine.Engine
	health   func(context.Context) (api.HealthReport, error)
	log      *slog.Logger
	pageSize int
	noLive   bool
	pages    map[string]*template.Template
	mux      *http.ServeMux
}

// New returns the dashboard's handler.
func New(o Options) (http.Handler, error) {
	if o.Engine == nil {
		return nil, errors.New("web: Options.Engine is required")
	}
	h := &handler{eng: o.Engine, health: o.Health, log: o.Logger, pageSize: o.PageSize, noLive: o.NoLiveTail}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.pageSize <= 0 {
		h.pageSize = DefaultPageSize
	}
	pages, err := parsePages()
	if err != nil {
		return nil, err
	}
	h.pages = pages
	assets, err := fs.Sub(assetFS, "assets")
	if err != nil {
		return nil, err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", h.page(h.overview))
	mux.HandleFunc("GET /ui/pipelines/{id}", h.page(h.pipelinePage))
	mux.HandleFunc("GET /ui/pipelines/{id}/periods/{period}", h.page(h.periodPage))
	mux.HandleFunc("GET /ui/events", h.page(h.eventsPage))
	mux.HandleFunc("GET /ui/health", h.page(h.healthPage))
	mux.HandleFunc("GET /ui/graph", h.page(h.graphPage))
	mux.HandleFunc("GET /ui/silences", h.page(h.silencesPage))
	files := http.StripPrefix("/ui/assets/", http.FileServerFS(assets))
	mux.Handle("GET /ui/assets/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// The assets change only with the binary; a short cache keeps a
		// reload after an upgrade honest.
		w.Header().Set("Cache-Control", "public, max-age=300")
		// Files only: a directory (the folder itself, or any path ending
		// in a slash) is not listed.
		if strings.HasSuffix(r.URL.Path, "/") {
			http.NotFound(w, r)
			return
		}
		files.ServeHTTP(w, r)
	}))
	mux.HandleFunc("/", h.page(func(*http.Request) (*view, error) { return nil, notFound("no such page") }))
	h.mux = mux
	return h, nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

// pageError is an error with the status its page is answered with.
type pageError struct {
	status int
	msg    string
	// backHref and backText are the page to go back to; "" for the
	// overview.
	backHref, backText string
}

func (e *pageError) Error() string { return e.msg }

func notFound(format string, args ...any) error {
	return &pageError{status: http.StatusNotFound, msg: fmt.Sprintf(format, args...)}
}

func badRequest(format string, args ...any) error {
	return &pageError{status: http.StatusBadRequest, msg: fmt.Sprintf(format, args...)}
}

// view is what a page handler returns: the template to render and its
// data.
type view struct {
	name  string // template name (pages)
	title string
	nav   string // the navigation entry to mark current
	data  any
	// live is the stream the page follows (GET /v1/events/stream with its
	// filters); "" for none.
	live string
	// status answers the page with another status than 200 (a form that
	// is shown again with what is wrong: 400); 0 for 200.
	status int
}

// layout is the data every page template gets.
type layout struct {
	Title  string
	Nav    string
	Caller api.Caller
	// CanAct: the caller may use the action buttons (operator or admin).
	CanAct bool
	Now    time.Time
	Live   string
	// EventTypes are the catalogue's types, comma-separated: the stream
	// names each message by its type, and the script listens to each.
	EventTypes string
	// Problems are the health report's problems: a banner on every page
	// and a count on the Health link.
	Problems []healthProblem
	Page     any
}

// page adapts a page handler: it renders the view, or an error page.
func (h *handler) page(f func(*http.Request) (*view, error)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		v, err := f(r)
		caller := api.CallerFrom(r.Context())
		status := http.StatusOK
		if err == nil && v.status != 0 {
			status = v.status
		}
		if err != nil {
			status = http.StatusInternalServerError
			msg := "the page could not be read; the server's log says why"
			var pe *pageError
			back, backText := "/", "Back to the pipelines"
			if errors.As(err, &pe) {
				status, msg = pe.status, pe.msg
				if pe.backHref != "" {
					back, backText = pe.backHref, pe.backText
				}
			} else if errors.Is(err, engine.ErrUnknownPipeline) {
				status, msg = http.StatusNotFound, err.Error()
			} else {
				h.log.LogAttrs(r.Context(), slog.LevelError, "dashboard page failed", slog.String("path", r.URL.Path), slog.String("err", err.Error()))
			}
			v = &view{name: "error", title: http.StatusText(status), data: errorPage{Status: status, Message: msg, Back: back, BackText: backText}}
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		w.Header().Set("X-Content-Type-Options", "nosniff")
		if strings.HasPrefix(v.name, "fragment-") {
			w.WriteHeader(status)
			_ = h.pages[v.name].ExecuteTemplate(w, v.name, v.data)
			return
		}
		d := layout{Title: v.title, Nav: v.nav, Caller: caller, CanAct: caller.Role.Includes(pipeline.RoleOperator), Now: h.eng.Now().UTC(), Live: v.live, EventTypes: eventTypeList, Page: v.data}
		if h.noLive {
			d.Live = ""
		}
		if hp, ok := v.data.(healthPageData); ok {
			d.Problems = hp.Problems // read once
		} else {
			d.Problems = h.problems(r.Context())
		}
		var buf strings.Builder
		if err := h.pages[v.name].ExecuteTemplate(&buf, "layout", d); err != nil {
			h.log.LogAttrs(r.Context(), slog.LevelError, "dashboard template failed", slog.String("page", v.name), slog.String("err", err.Error()))
			http.Error(w, "the page could not be rendered", http.StatusInternalServerError)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write([]byte(buf.String()))
	}
}

// eventTypeList is every event type, comma-separated.
var eventTypeList = joined(event.Types(), ",")

type errorPage struct {
	Status         int
	Message        string
	Back, BackText string // the link back
}
