package api

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

// Metrics are Interlock's Prometheus metrics, in a registry of their own
// (never the global one, so tests and several servers in one process do
// not collide). Every method is safe for concurrent use and does nothing
// on a nil *Metrics, so optional callers need no checks.
//
// The metrics:
//
//   - interlock_sensor_writes_total{pipeline,changed}: counter of sensor
//     writes acknowledged through the API; changed="true" when the content
//     was new data, "false" for an identical re-write.
//   - interlock_sensor_write_seconds: histogram of the time from a parsed
//     sensor write to the engine's durable decision on it (the product
//     spec's "sensor write → trigger decision", p99 target 20 ms).
//   - interlock_http_requests_total{route,code}: counter of API requests by
//     route pattern ("unmatched" when none matched) and status code.
//   - interlock_runs{state}: gauge of runs by state: every non-terminal run,
//     and the terminal runs (COMPLETED, FAILED_FINAL) of periods from the
//     previous UTC day on. Refreshed by Observe.
//   - interlock_events_total{type}: counter of events recorded, by type, as
//     the caller feeds them to CountEvents (the event router, which reads
//     the event log once).
//   - interlock_watchdog_last_pass_timestamp_seconds: gauge, Unix time of the
//     last watchdog pass; 0 when it never ran. Alert on
//     time() - this > a few watchdog intervals.
//   - interlock_alert_delivery_failures_total{sink}: counter of failed alert
//     deliveries by sink name, fed by AlertDeliveryFailed; every sink named
//     by KnowSinks is exported at zero from the start.
//   - interlock_retention_deleted_total{kind}: counter of records the
//     retention sweep deleted (CountExpired), every kind at zero from the
//     start.
//   - interlock_lineage_events_total{outcome}: counter of OpenLineage run
//     events received at POST /api/v1/lineage (CountLineage): "written"
//     (new data for at least one pipeline), "unchanged" (matched, but
//     stale or identical everywhere: a replay), "unmatched" (no pipeline
//     listens: acknowledged, not stored) and "invalid" (refused with a
//     400); every outcome at zero from the start.
//
// The registry also holds the standard Go runtime and process collectors.
type Metrics struct {
	reg *prometheus.Registry
	clk clock.Clock

	sensorWrites       *prometheus.CounterVec
	sensorWriteSeconds prometheus.Histogram
	httpRequests       *prometheus.CounterVec
	runs               *prometheus.GaugeVec
	events             *prometheus.CounterVec
	watchdogLastPass   prometheus.Gauge
	alertFailures      *prometheus.CounterVec
	expired            *prometheus.CounterVec
	lineageEvents      *prometheus.CounterVec
}

// counterVec is a counter of the given name and help with labels.
func counterVec(name, help string, labels ...string) *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
}

// NewMetrics returns the metrics in a fresh registry. clk dates the
// window of terminal runs that Observe counts (the engine is a clock);
// with nil, Observe counts only the non-terminal runs.
func NewMetrics(clk clock.Clock) *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		clk: clk,
		sensorWrites: counterVec("interlock_sensor_writes_total",
			"Sensor writes acknowledged through the API, by pipeline and whether the content was new (changed).", "pipeline", "changed"),
		sensorWriteSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Name:    "interlock_sensor_write_seconds",
			Help:    "Time from a parsed sensor write to the engine's durable decision on it.",
			Buckets: []float64{.0005, .001, .0025, .005, .01, .02, .05, .1, .25, .5, 1, 2.5, 5},
		}),
		httpRequests: counterVec("interlock_http_requests_total",
			"API requests by route pattern and status code.", "route", "code"),
		runs: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "interlock_runs",
			Help: "Runs by state: every non-terminal run, and terminal runs of periods from the previous UTC day on.",
		}, []string{"state"}),
		events: counterVec("interlock_events_total",
			"Events recorded, by type.", "type"),
		watchdogLastPass: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "interlock_watchdog_last_pass_timestamp_seconds",
			Help: "Unix time of the last watchdog pass; 0 when it never ran.",
		}),
		alertFailures: counterVec("interlock_alert_delivery_failures_total",
			"Failed alert deliveries by sink.", "sink"),
		expired: counterVec("interlock_retention_deleted_total",
			"Records deleted by the retention sweep, by kind (sensors, runs, ledger, baselines, markers, events, alert_threads, alerts_sent, alerts_alerted, dead_letters).", "kind"),
		lineageEvents: counterVec("interlock_lineage_events_total",
			"OpenLineage run events received, by outcome (written, unchanged, unmatched, invalid).", "outcome"),
	}
	m.reg.MustRegister(m.sensorWrites, m.sensorWriteSeconds, m.httpRequests, m.runs, m.events, m.watchdogLastPass, m.alertFailures, m.expired, m.lineageEvents,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	// Every state and event type exists from the start, at zero, so a
	// rate() or an absent() alert works before the first occurrence.
	for _, st := range run.States() {
		m.runs.WithLabelValues(string(st))
	}
	for _, t := range event.Types() {
		m.events.WithLabelValues(string(t))
	}
	for _, k := range expiredKinds {
		m.expired.WithLabelValues(k)
	}
	for _, o := range lineageOutcomes {
		m.lineageEvents.WithLabelValues(o)
	}
	return m
}

// expiredKinds are the kinds store.ExpireResult counts (store.go).
var expiredKinds = []string{"sensors", "runs", "ledger", "baselines", "markers", "events", "alert_threads", "alerts_sent", "alerts_alerted", "dead_letters"}

// CountExpired counts what one batch of the retention sweep deleted.
func (m *Metrics) CountExpired(res store.ExpireResult) {
	if m == nil {
		return
	}
	for k, n := range res.Deleted {
		m.expired.WithLabelValues(k).Add(float64(n))
	}
}

// The outcomes of interlock_lineage_events_total.
const (
	LineageWritten   = "written"
	LineageUnchanged = "unchanged"
	LineageUnmatched = "unmatched"
	LineageInvalid   = "invalid"
)

var lineageOutcomes = []string{LineageWritten, LineageUnchanged, LineageUnmatched, LineageInvalid}

// CountLineage counts one OpenLineage event by outcome.
func (m *Metrics) CountLineage(outcome string) {
	if m == nil {
		return
	}
	m.lineageEvents.WithLabelValues(outcome).Inc()
}

// Registry is the registry the metrics live in, for a caller that adds
// its own collectors.
func (m *Metrics) Registry() *prometheus.Registry { return m.reg }

// Handler serves the registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
}

// ObserveSensorWrite counts an acknowledged sensor write and how long the
// engine took to decide on it.
func (m *Metrics) ObserveSensorWrite(pipelineID string, changed bool, took time.Duration) {
	if m == nil {
		return
	}
	m.sensorWrites.WithLabelValues(pipelineID, strconv.FormatBool(changed)).Inc()
	m.sensorWriteSeconds.Observe(took.Seconds())
}

// CountEvents counts recorded events by type. The caller that reads the
// event log (the alert router) feeds each event once.
func (m *Metrics) CountEvents(evs ...event.Event) {
	if m == nil {
		return
	}
	for _, e := range evs {
		m.events.WithLabelValues(string(e.Type)).Inc()
	}
}

// KnowSinks exports interlock_alert_delivery_failures_total at zero for
// each named sink, so the series exists (and rate() or absent() alerts
// work) before the first failure.
func (m *Metrics) KnowSinks(names ...string) {
	if m == nil {
		return
	}
	for _, n := range names {
		m.alertFailures.WithLabelValues(n)
	}
}

// AlertDeliveryFailed counts one failed delivery to a sink.
func (m *Metrics) AlertDeliveryFailed(sink string) {
	if m == nil {
		return
	}
	m.alertFailures.WithLabelValues(sink).Inc()
}

// ObserveWatchdogPass records when the watchdog last ran (ok false: never).
func (m *Metrics) ObserveWatchdogPass(at time.Time, ok bool) {
	if m == nil {
		return
	}
	if !ok {
		m.watchdogLastPass.Set(0)
		return
	}
	m.watchdogLastPass.Set(float64(at.UnixNano()) / 1e9)
}

// Observe refreshes interlock_runs from the store with two bounded reads:
// the non-terminal runs, and the runs of periods from the previous UTC day
// on, of which only the terminal ones are counted (the others are in the
// first read already, whatever their period).
func (m *Metrics) Observe(ctx context.Context, st store.Store) error {
	if m == nil {
		return nil
	}
	active, err := st.RunList(ctx, store.RunListParams{ActiveOnly: true})
	if err != nil {
		return fmt.Errorf("metrics: active runs: %w", err)
	}
	counts := map[run.State]int{}
	for _, r := range active {
		counts[r.State]++
	}
	if m.clk != nil {
		from := schedule.DateOf(m.clk.Now().Add(-24*time.Hour), time.UTC).String()
		recent, err := st.RunList(ctx, store.RunListParams{PeriodFrom: from})
		if err != nil {
			return fmt.Errorf("metrics: recent runs: %w", err)
		}
		for _, r := range recent {
			if r.State.Terminal() {
				counts[r.State]++
			}
		}
	}
	for _, s := range run.States() {
		m.runs.WithLabelValues(string(s)).Set(float64(counts[s]))
	}
	return nil
}

// refresh brings the gauges up to date before a scrape.
func (m *Metrics) refresh(ctx context.Context, e *engine.Engine) error {
	if err := m.Observe(ctx, e.Store()); err != nil {
		return err
	}
	// Every pipeline's write counters exist, at zero, before its first
	// write.
	ids, err := e.Pipelines(ctx)
	if err != nil {
		return fmt.Errorf("metrics: pipelines: %w", err)
	}
	for _, id := range ids {
		m.sensorWrites.WithLabelValues(id, "true")
		m.sensorWrites.WithLabelValues(id, "false")
	}
	at, ok, err := e.LastWatchdogPass(ctx)
	if err != nil {
		return fmt.Errorf("metrics: last watchdog pass: %w", err)
	}
	m.ObserveWatchdogPass(at, ok)
	return nil
}

// knowRoute exports a route's request counter at zero (code 200) from the
// start.
func (m *Metrics) knowRoute(route string) {
	if m == nil {
		return
	}
	m.httpRequests.WithLabelValues(route, "200")
}

func (m *Metrics) countRequest(route string, status int) {
	if m == nil {
		return
	}
	m.httpRequests.WithLabelValues(route, strconv.Itoa(status)).Inc()
}

// stopwatch starts measuring elapsed real time and returns a function
// that reads it. It is the only place this package reads real
// time, and only to measure latency (the sensor-write histogram and the
// request log's duration): nothing is decided or stamped with it — that
// is the engine clock's job. It uses the monotonic clock, so a wall-clock
// step does not distort a measurement.
func stopwatch() func() time.Duration {
	return prometheus.NewTimer(nil).ObserveDuration
}
