package awsrt

import (
	"context"
	"io"
	"log/slog"
	"maps"
	"os"
	"slices"
	"sort"
	"sync"

	"github.com/aws/aws-lambda-go/events"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/emf"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// MetricsNamespace is the CloudWatch namespace of the functions' metrics.
const MetricsNamespace = "Interlock"

// EnvEnvironment names the deployment (the module's var.environment): the
// Environment dimension of every metric. Unset: the metrics have no
// Environment dimension.
const EnvEnvironment = "INTERLOCK_ENVIRONMENT"

// The functions' own metrics (unit Count), besides one per event type.
// Each function emits its own at every invocation, zeros included, so an
// alarm or a graph has a data point per invocation.
const (
	// MetricRecordsFailed: the records or messages of a batch the
	// function named for redelivery (partial batch response).
	MetricRecordsFailed = "RecordsFailed"
	// MetricWatchdogPasses: 1 per watchdog pass (the local
	// interlock_watchdog_last_pass_timestamp_seconds).
	MetricWatchdogPasses = "WatchdogPasses"
	// MetricWatchdogFindings: what a pass found.
	MetricWatchdogFindings = "WatchdogFindings"
	// MetricWatchdogChecksFailed: the checks of a pass that failed (the
	// pass is degraded; WATCHDOG_DEGRADED is also counted as an event).
	MetricWatchdogChecksFailed = "WatchdogChecksFailed"
	// MetricAlertsDelivered: alerts a sink accepted (their sent records).
	MetricAlertsDelivered = "AlertsDelivered"
	// MetricAlertsDeadLettered: alerts refused for good (their dead
	// letters).
	MetricAlertsDeadLettered = "AlertsDeadLettered"
	// MetricAlertDeliveryFailures: alert messages that failed and will be
	// received again (the local interlock_alert_delivery_failures_total).
	MetricAlertDeliveryFailures = "AlertDeliveryFailures"
)

// ownMetrics are the metrics each function emits at every invocation.
var ownMetrics = map[string][]string{
	FnStreamRouter:    {MetricRecordsFailed},
	FnOrchestrator:    {},
	FnSLAMonitor:      {MetricRecordsFailed},
	FnWatchdog:        {MetricWatchdogPasses, MetricWatchdogFindings, MetricWatchdogChecksFailed},
	FnAlertDispatcher: {MetricAlertsDelivered, MetricAlertsDeadLettered, MetricAlertDeliveryFailures},
}

// MetricNames lists the functions' own metric names, sorted; the other
// metrics are the event types (event.Types).
func MetricNames() []string {
	seen := map[string]float64{}
	for _, names := range ownMetrics {
		for _, n := range names {
			seen[n] = 0
		}
	}
	return sortedKeys(seen)
}

// MeteredFunctions lists the functions that write metrics, sorted.
func MeteredFunctions() []string { return slices.Sorted(maps.Keys(ownMetrics)) }

// Meter counts what one invocation of a function did and writes it, at
// the invocation's end, as one EMF log line (Flush): the events the
// engine committed, by type — the same hook and the same family as the
// local /metrics' interlock_events_total{type} — and the function's own
// metrics. Lambda processes one invocation at a time per process, so the
// counts between two flushes are one invocation's.
//
// Dimensions: the event-type metrics have {Environment} (an event is
// committed once, by whichever function decided it); the function's own
// metrics have {Environment, Function} and {Environment}. No pipeline id:
// a dimension value is a metric of its own (cost), and the events name
// their pipelines on the bus and in the logs.
//
// Every method does nothing on a nil *Meter.
type Meter struct {
	function, environment string
	w                     io.Writer
	clk                   clock.Clock
	log                   *slog.Logger

	mu     sync.Mutex
	own    map[string]float64
	events map[event.Type]float64
}

// NewMeter is function's meter, writing to w (nil: stdout, where Lambda
// takes EMF lines from) and stamping each line with clk (nil: the real
// clock); a line it cannot write is logged to log (nil: discarded).
func NewMeter(function, environment string, w io.Writer, clk clock.Clock, log *slog.Logger) *Meter {
	if w == nil {
		w = os.Stdout
	}
	if clk == nil {
		clk = clock.Real{}
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Meter{function: function, environment: environment, w: w, clk: clk, log: log}
	m.reset()
	return m
}

// meterFromEnv is function's meter on stdout, its environment from
// INTERLOCK_ENVIRONMENT.
func meterFromEnv(env Env, function string, log *slog.Logger) *Meter {
	return NewMeter(function, env.Get(EnvEnvironment), nil, nil, log)
}

// watchedMeter is meterFromEnv's meter counting the events eng commits.
func watchedMeter(env Env, function string, eng *engine.Engine, log *slog.Logger) *Meter {
	m := meterFromEnv(env, function, log)
	m.Watch(eng)
	return m
}

func (m *Meter) reset() {
	m.own = map[string]float64{}
	for _, n := range ownMetrics[m.function] {
		m.own[n] = 0
	}
	m.events = map[event.Type]float64{}
}

// Watch counts the events of every commit of eng (the engine's
// OnEventsCommitted hook, as the local serve counts them).
func (m *Meter) Watch(eng *engine.Engine) {
	if m == nil || eng == nil {
		return
	}
	eng.OnEventsCommitted(m.CountEvents)
}

// CountEvents counts committed events by type.
func (m *Meter) CountEvents(evs []event.Event) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, e := range evs {
		m.events[e.Type]++
	}
}

// Add adds n to one of the function's own metrics.
func (m *Meter) Add(name string, n int) {
	if m == nil {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.own[name] += float64(n)
}

// Document is what the meter counted since the last flush, stamped now.
func (m *Meter) Document() emf.Document {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.document()
}

func (m *Meter) document() emf.Document {
	d := emf.Document{Timestamp: m.clk.Now(), Dimensions: map[string]string{"Function": m.function}, Values: map[string]float64{}}
	env, fnSets := []string{"Function"}, [][]string{{"Function"}}
	if m.environment != "" {
		d.Dimensions["Environment"] = m.environment
		env, fnSets = []string{"Environment"}, [][]string{{"Environment", "Function"}, {"Environment"}}
	}
	own := sortedKeys(m.own)
	for _, chunk := range chunks(own) {
		dir := emf.Directive{Namespace: MetricsNamespace, Dimensions: fnSets}
		for _, n := range chunk {
			dir.Metrics = append(dir.Metrics, emf.Metric{Name: n, Unit: emf.Count})
			d.Values[n] = m.own[n]
		}
		d.Directives = append(d.Directives, dir)
	}
	types := make([]string, 0, len(m.events))
	for t := range m.events {
		types = append(types, string(t))
	}
	sort.Strings(types)
	for _, chunk := range chunks(types) {
		dir := emf.Directive{Namespace: MetricsNamespace, Dimensions: [][]string{env}}
		for _, t := range chunk {
			dir.Metrics = append(dir.Metrics, emf.Metric{Name: t, Unit: emf.Count})
			d.Values[t] = m.events[event.Type(t)]
		}
		d.Directives = append(d.Directives, dir)
	}
	return d
}

// Flush writes what the meter counted since the last flush as one EMF
// line and starts counting afresh. Nothing counted and no own metrics
// (an orchestrator step that committed no event): no line.
func (m *Meter) Flush() {
	if m == nil {
		return
	}
	m.mu.Lock()
	d := m.document()
	m.reset()
	m.mu.Unlock()
	if len(d.Directives) == 0 {
		return
	}
	if err := d.Write(m.w); err != nil {
		m.log.Warn("metrics: the EMF line was not written", "function", m.function, "err", err)
	}
}

// Store is st with the alert records it commits counted: each sent
// record an alert delivered, each dead letter an alert dead-lettered.
func (m *Meter) Store(st store.Store) store.Store {
	if m == nil {
		return st
	}
	return meteredStore{Store: st, m: m}
}

type meteredStore struct {
	store.Store
	m *Meter
}

func (s meteredStore) Commit(ctx context.Context, c store.Change) error {
	if err := s.Store.Commit(ctx, c); err != nil {
		return err
	}
	s.m.Add(MetricAlertsDelivered, len(c.AlertsSent))
	s.m.Add(MetricAlertsDeadLettered, len(c.DeadLetters))
	return nil
}

// Metered is h with m flushed after every invocation, having counted
// from h's answer what the answer says: the records or messages a batch
// names for redelivery, a watchdog pass's findings and failed checks.
func Metered[I, O any](m *Meter, h func(context.Context, I) (O, error)) func(context.Context, I) (O, error) {
	if m == nil {
		return h
	}
	return func(ctx context.Context, in I) (O, error) {
		out, err := h(ctx, in)
		switch o := any(out).(type) {
		case events.DynamoDBEventResponse:
			m.Add(MetricRecordsFailed, len(o.BatchItemFailures))
		case events.SQSEventResponse:
			if m.function == FnAlertDispatcher {
				m.Add(MetricAlertDeliveryFailures, len(o.BatchItemFailures))
			} else {
				m.Add(MetricRecordsFailed, len(o.BatchItemFailures))
			}
		case WatchdogResult:
			m.Add(MetricWatchdogPasses, 1)
			m.Add(MetricWatchdogFindings, o.Findings)
			m.Add(MetricWatchdogChecksFailed, len(o.Failed))
		}
		m.Flush()
		return out, err
	}
}

func sortedKeys(m map[string]float64) []string { return slices.Sorted(maps.Keys(m)) }

// chunks splits names into runs of at most emf.MaxMetrics.
func chunks(names []string) [][]string {
	var out [][]string
	for len(names) > emf.MaxMetrics {
		out = append(out, names[:emf.MaxMetrics])
		names = names[emf.MaxMetrics:]
	}
	if len(names) > 0 {
		out = append(out, names)
	}
	return out
}
