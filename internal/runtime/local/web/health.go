package web

import (
	"net/http"
	"time"

	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

type healthPageData struct {
	Report api.HealthReport
	Now    time.Time
	// Problems counts what needs someone: a late or degraded watchdog, a
	// sink with dead letters or without a success, refused files.
	Problems int
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
	d := healthPageData{Report: rep, Now: rep.Now.UTC()}
	if rep.Watchdog.Late || len(rep.Watchdog.Degraded) > 0 {
		d.Problems++
	}
	for _, s := range rep.Sinks {
		if s.DeadLetters > 0 || (s.Configured && s.LastSuccess == nil && s.Backlog > 0) {
			d.Problems++
		}
	}
	d.Problems += len(rep.RefusedConfigs)
	return &view{name: "health", title: "Health", nav: "health", data: d, live: "/v1/events/stream"}, nil
}
