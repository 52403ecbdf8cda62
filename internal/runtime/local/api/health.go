package api

import (
	"log/slog"
	"net/http"
)

type statusBody struct {
	Status string `json:"status"`
}

// healthz says the process is up and serving HTTP; nothing more.
func (s *server) healthz(w http.ResponseWriter, _ *http.Request) error {
	writeJSON(w, http.StatusOK, statusBody{Status: "ok"})
	return nil
}

// readyz says whether the process is ready to take work (Options.Ready):
// 503 with the reason when it is not.
func (s *server) readyz(w http.ResponseWriter, _ *http.Request) error {
	if s.ready != nil {
		if err := s.ready(); err != nil {
			return errorf(http.StatusServiceUnavailable, codeNotReady, "not ready: %v", err)
		}
	}
	writeJSON(w, http.StatusOK, statusBody{Status: "ready"})
	return nil
}

// serveMetrics refreshes the gauges read from the store, then serves the
// registry. A failed refresh is logged and the last values are served: a
// scrape that fails entirely would hide every other metric too.
func (s *server) serveMetrics(w http.ResponseWriter, r *http.Request) error {
	if err := s.metrics.refresh(r.Context(), s.eng); err != nil {
		s.log.LogAttrs(r.Context(), slog.LevelWarn, "metrics refresh failed", slog.String("err", err.Error()))
	}
	s.metricsH.ServeHTTP(w, r)
	return nil
}
