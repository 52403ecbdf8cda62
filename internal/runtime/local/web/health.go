package web

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

type healthPageData struct {
	Report api.HealthReport
	Now    time.Time
	// Problems is what needs someone: the banner's lines (healthProblems).
	Problems []healthProblem
}

// healthProblem is one thing the health report says needs someone, as the
// banner of every page and the health page's summary say it.
type healthProblem struct {
	Kind   string // watchdog, sink, refused
	Text   string
	Anchor string // the health page's section: watchdog, sinks, refused
}

// healthProblems lists what needs someone in a health report: a watchdog
// that is late or has failing checks; each sink that is failing (its
// newest alert was given up and none went through since) or holds dead
// letters, or has alerts waiting and never delivered one; the refused
// pipeline files.
func healthProblems(rep api.HealthReport) []healthProblem {
	var out []healthProblem
	w := rep.Watchdog
	switch {
	case w.Late && w.LastPass == nil:
		out = append(out, healthProblem{Kind: "watchdog", Anchor: "watchdog", Text: "the watchdog is late: it never ran — nobody is watching"})
	case w.Late:
		out = append(out, healthProblem{Kind: "watchdog", Anchor: "watchdog", Text: fmt.Sprintf("the watchdog is late: its last pass was %s ago — nobody is watching", durText(rep.Now.Sub(*w.LastPass)))})
	}
	if len(w.Degraded) > 0 {
		out = append(out, healthProblem{Kind: "watchdog", Anchor: "watchdog", Text: fmt.Sprintf("watchdog checks failing: %s", joined(w.Degraded, ", "))})
	}
	for _, s := range rep.Sinks {
		if text := sinkProblem(s); text != "" {
			out = append(out, healthProblem{Kind: "sink", Anchor: "sinks", Text: text})
		}
	}
	if n := len(rep.RefusedConfigs); n > 0 {
		out = append(out, healthProblem{Kind: "refused", Anchor: "refused", Text: fmt.Sprintf("%d refused pipeline file%s", n, plural(n))})
	}
	return out
}

// sinkProblem says what is wrong with a sink's delivery, "" when nothing.
func sinkProblem(s alert.SinkStatus) string {
	dead := ""
	if s.DeadLetters > 0 {
		dead = fmt.Sprintf(" (%d dead letter%s)", s.DeadLetters, plural(s.DeadLetters))
	}
	switch {
	case s.Failing != nil:
		return fmt.Sprintf("alert sink %s is failing: %d attempt%s since %s failed (%s)%s", s.Sink, s.Failing.Attempts, plural(s.Failing.Attempts),
			s.Failing.Since.UTC().Format("15:04:05Z"), s.Failing.LastError, dead)
	case s.LastDeadLetter != nil && (s.LastSuccess == nil || !s.LastSuccess.After(s.LastDeadLetter.At)):
		return fmt.Sprintf("alert sink %s is failing: its last alert was given up%s", s.Sink, dead)
	case s.DeadLetters > 0:
		return fmt.Sprintf("alert sink %s has dead letters%s", s.Sink, dead)
	case s.Configured && s.LastSuccess == nil && s.Backlog > 0:
		return fmt.Sprintf("alert sink %s has %d alert%s waiting and none delivered", s.Sink, s.Backlog, plural(s.Backlog))
	}
	return ""
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

// problems reads the health report for the banner of every page: nil
// without a report, or when it cannot be read (the log says why; the page
// itself still renders).
func (h *handler) problems(ctx context.Context) []healthProblem {
	if h.health == nil {
		return nil
	}
	rep, err := h.health(ctx)
	if err != nil {
		h.log.LogAttrs(ctx, slog.LevelWarn, "dashboard banner: health report unread", slog.String("err", err.Error()))
		return nil
	}
	return healthProblems(rep)
}

// healthPage is /ui/health: the health report (api.Health.Report, what GET
// /v1/health answers) as a page.
func (h *handler) healthPage(r *http.Request) (*view, error) {
	if h.health == nil {
		return nil, &pageError{status: http.StatusNotImplemented, msg: "this server has no health report"}
	}
	rep, err := h.health(r.Context())
	if err != nil {
		return nil, err
	}
	d := healthPageData{Report: rep, Now: rep.Now.UTC(), Problems: healthProblems(rep)}
	return &view{name: "health", title: "Health", nav: "health", data: d, live: "/v1/events/stream"}, nil
}
