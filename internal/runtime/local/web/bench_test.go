package web_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/engine/enginebench"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
	"github.com/interlockhq/interlock/internal/runtime/local/web"
)

// BenchmarkOverview5000 measures the server's time for an overview page
// over 5,000 pipelines on SQLite (issue 15: under 200 ms a page): the
// watchdog benchmark's fixture — a third cron, a third with an absolute
// SLA, a third with a relative one; yesterday's runs completed, today's
// partly running — read through the API's handler as serve mounts it.
// The first page, a later page and a search are measured apart.
func BenchmarkOverview5000(b *testing.B) {
	durable := enginebench.SQLiteWatchdogStore(b, 5000, 0)
	eng := engine.New(engine.Options{Store: durable, Clock: clock.NewVirtual(enginebench.Now), Jobs: enginebench.NoJobs{}})
	if err := eng.Open(b.Context()); err != nil {
		b.Fatal(err)
	}
	dash, err := web.New(web.Options{Engine: eng})
	if err != nil {
		b.Fatal(err)
	}
	h, err := api.New(api.Options{Engine: eng, Dashboard: dash, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	get := func(b *testing.B, target string) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, target, nil))
		if rec.Code != http.StatusOK {
			b.Fatalf("%s: %d %s", target, rec.Code, rec.Body.String())
		}
	}
	get(b, "/") // parses every config once, as serve's first decisions do
	for _, c := range []struct{ name, target string }{
		{"first-page", "/"},
		{"page-50", "/?page=50"},
		{"search", "/?q=p12"},
		{"state", "/?state=running"},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				get(b, c.target)
			}
		})
	}
}
