package alert

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// Delivery defaults.
const (
	DefaultMaxAttempts  = 8
	DefaultMinBackoff   = time.Second
	DefaultMaxBackoff   = 5 * time.Minute
	DefaultSuppressFor  = time.Hour
	DefaultPollInterval = 5 * time.Second
	DefaultBatchSize    = 256
	// DefaultLeaseTTL is how long a sink's lease lasts unrenewed: the
	// longest another process waits to take over a sink whose deliverer
	// died.
	DefaultLeaseTTL = 30 * time.Second
)

// Options configure a Deliverer. Zero fields take the defaults above.
type Options struct {
	Store  store.Store
	Clock  clock.Clock
	Routes []Route
	Logger *slog.Logger // nil: discard

	// MaxAttempts is how many times one event is tried on one sink before
	// it is dead-lettered. A failure the sink calls permanent
	// (retry=false) is dead-lettered at once.
	MaxAttempts int
	// MinBackoff and MaxBackoff bound the wait between attempts: it
	// doubles from MinBackoff up to MaxBackoff, with jitter, and is at
	// least what the destination asked for (Retry-After) up to MaxBackoff.
	MinBackoff time.Duration
	MaxBackoff time.Duration
	// SuppressFor is the window within which a repeat of an alert already
	// delivered to the sink — same pipeline, schedule, period, type and
	// message — is not sent again; measured between event times, so a
	// backlog is judged as it happened. Negative: no repeat suppression
	// (an event id seen twice is still sent once).
	SuppressFor time.Duration
	// PollInterval is how often Run looks at the log when nothing calls
	// Notify.
	PollInterval time.Duration
	// BatchSize is how many events one read takes.
	BatchSize int
	// FromStart makes a sink that has no cursor yet (a new sink in the
	// config) start at the beginning of the log. By default it starts at
	// the log's current end: adding a Slack channel must not replay months
	// of history into it. A new store's log is empty, so there both agree.
	FromStart bool
	// Holder names this process among those sharing the store (serve
	// replicas): each sink is delivered by the one holding its lease
	// (internal/lease, "alert-sink/<name>"), so an alert goes out once per
	// sink however many processes run. A stable name (host and listen
	// address) lets a restarted process keep its lease at once; empty: a
	// random one, and a restart waits up to LeaseTTL for its old lease.
	Holder string
	// Silences says which events a silence or maintenance window covers
	// (internal/silence): those are stored and shown but not sent. It is
	// asked once per page of events a sweep reads, never per event. Nil:
	// nothing is silenced.
	Silences Silencer
	// LeaseTTL is how long a sink's lease lasts unrenewed (0:
	// DefaultLeaseTTL); it is renewed with every cursor commit and at
	// least every half of it.
	LeaseTTL time.Duration
	// OnFailure, when set, is called with the sink name for every
	// dead-lettered alert (a metric). Sinks run concurrently: it may be
	// called from several goroutines at once.
	OnFailure func(sink string)
}

// Deliverer moves events from the event log to the sinks: per sink, at
// least once, in log order (each pipeline's events in commit order). Each
// sink has a durable cursor (store.Cursor: per event shard, the last event
// it is done with); an event is done when it was delivered, or
// was not for this sink (route, suppression), or was dead-lettered. The
// cursor is advanced in the same commit as the facts that delivery
// established (what was sent, that the period alerted, the dead letter).
//
// Delivery semantics. The only window for a duplicate is a crash after a
// sink accepted an alert and before the cursor commit; the alert is then
// sent again after the restart — once, since the next success moves the
// cursor. A process whose cursor commit failed while it lives (a
// connection cut, the database restarting) keeps the outcome and records
// it at its next sweep instead of sending again. Sinks close that window where they
// can: the file sink recognises the event id of its last line and skips
// it (exactly once); webhook receivers deduplicate on the
// X-Interlock-Event-Id header; a Slack re-post can happen (Slack has no
// idempotency key) and is the accepted cost of never losing an alert.
// Within the Deliverer an event id is sent once per sink even if the log
// held it twice.
//
// Several processes may deliver from one store (serve replicas): each sink
// is delivered by the process holding its lease, and every cursor commit
// renews that lease under its version, so a process that lost it records
// nothing more (internal/lease). The only duplicate left is the one above:
// a process that stalls past its lease after a sink accepted an alert and
// before its commit. It reads the time only from its clock; backoff waits
// use timers.
type Deliverer struct {
	st      store.Store
	clk     clock.Clock
	log     *slog.Logger
	o       Options
	workers []*worker
}

// positiveOr is v, or def when v is not above zero (an option left unset).
func positiveOr[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// NewDeliverer checks o, loads each sink's cursor and records one, at the
// end of the log (or its start with FromStart), for a sink that has none.
// Create it before anything appends events the sinks must see.
func NewDeliverer(ctx context.Context, o Options) (*Deliverer, error) {
	if o.Store == nil || o.Clock == nil {
		return nil, errors.New("alert: a Deliverer needs a store and a clock")
	}
	o.MaxAttempts = positiveOr(o.MaxAttempts, DefaultMaxAttempts)
	o.MinBackoff = positiveOr(o.MinBackoff, DefaultMinBackoff)
	o.MaxBackoff = positiveOr(o.MaxBackoff, DefaultMaxBackoff)
	o.MaxBackoff = max(o.MaxBackoff, o.MinBackoff)
	if o.SuppressFor == 0 {
		o.SuppressFor = DefaultSuppressFor
	}
	o.PollInterval = positiveOr(o.PollInterval, DefaultPollInterval)
	o.BatchSize = positiveOr(o.BatchSize, DefaultBatchSize)
	o.LeaseTTL = positiveOr(o.LeaseTTL, DefaultLeaseTTL)
	if o.Holder == "" {
		o.Holder = randomHolder()
	}
	d := &Deliverer{st: o.Store, clk: o.Clock, log: o.Logger, o: o}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	seen := map[string]bool{}
	for i, r := range o.Routes {
		if r.Sink == nil {
			return nil, fmt.Errorf("alert: route %d has no sink", i)
		}
		name := r.Sink.Name()
		switch {
		case name == "":
			return nil, fmt.Errorf("alert: route %d: the sink has no name", i)
		case seen[name]:
			return nil, fmt.Errorf("alert: two routes deliver to sink %q: sink names must be unique", name)
		}
		seen[name] = true
		d.workers = append(d.workers, &worker{d: d, route: r, name: name, wake: make(chan struct{}, 1)})
	}
	if err := d.loadCursors(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// loadCursors reads every sink's cursor and starts the missing ones.
func (d *Deliverer) loadCursors(ctx context.Context) error {
	var missing []*worker
	var known store.Cursor // the furthest existing cursors: the log's end is at least there
	for _, w := range d.workers {
		c, err := d.cursor(ctx, w.name)
		switch {
		case errors.Is(err, store.ErrNotFound):
			missing = append(missing, w)
			continue
		case err != nil:
			return err
		}
		w.loaded(c)
		for i := range known {
			known[i] = max(known[i], c.Cursor[i])
		}
	}
	if len(missing) == 0 {
		return nil
	}
	var start store.Cursor
	if !d.o.FromStart {
		var err error
		if start, err = d.logEnd(ctx, known); err != nil {
			return err
		}
	}
	now := d.clk.Now()
	for _, w := range missing {
		cw := w.cursorWrite(start, now)
		cw.IfAbsent = true
		err := d.st.Commit(ctx, store.Change{DeliveryCursors: []store.DeliveryCursorWrite{cw}})
		switch {
		case errors.Is(err, store.ErrConflict): // started meanwhile: use it
			c, err := d.cursor(ctx, w.name)
			if err != nil {
				return err
			}
			w.loaded(c)
		case err != nil:
			return fmt.Errorf("alert: start cursor of sink %s: %w", w.name, err)
		default:
			w.setSaved(start, now)
			d.log.Info("alert sink has no cursor yet: starting one", "sink", w.name, "after", start.String(), "fromStart", d.o.FromStart)
		}
	}
	return nil
}

// cursor reads a sink's saved cursor and when it was saved.
func (d *Deliverer) cursor(ctx context.Context, sink string) (store.DeliveryCursor, error) {
	c, err := d.st.DeliveryCursorGet(ctx, sink)
	if err != nil {
		return store.DeliveryCursor{}, fmt.Errorf("alert: read cursor of sink %s: %w", sink, err)
	}
	return c, nil
}

// logEnd returns the cursor at the end of the log, reading forward from
// from (a cursor known to be passed).
func (d *Deliverer) logEnd(ctx context.Context, from store.Cursor) (store.Cursor, error) {
	const size = 1000
	for {
		page, err := d.st.EventList(ctx, store.EventListParams{After: from, Limit: size})
		if err != nil {
			return store.Cursor{}, fmt.Errorf("alert: find the end of the event log: %w", err)
		}
		from = page.Next
		if len(page.Events) < size {
			return from, nil
		}
	}
}

// Notify wakes Run: new events may be in the log. It never blocks.
func (d *Deliverer) Notify() {
	for _, w := range d.workers {
		select {
		case w.wake <- struct{}{}:
		default:
		}
	}
}

// Run delivers until ctx ends: each sink on its own, so a sink that is
// down (and waiting between retries) does not hold the others up. After
// each sweep a sink waits for Notify or the poll interval. A failed sweep
// (the store is unavailable) is logged and tried again.
func (d *Deliverer) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, w := range d.workers {
		wg.Go(func() { w.loop(ctx) })
	}
	wg.Wait()
}

// DeliverPending makes one synchronous sweep: every sink takes every
// event after its cursor, retrying and dead-lettering as Run does, and the
// cursors are saved. Sinks are swept concurrently; the errors (a store
// failure, ctx ended) are joined.
func (d *Deliverer) DeliverPending(ctx context.Context) error {
	errs := make([]error, len(d.workers))
	var wg sync.WaitGroup
	for i, w := range d.workers {
		wg.Go(func() { errs[i] = w.sweep(ctx, true) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// Silencer tells which events are silenced (the engine's silences and
// maintenance windows). Silenced reads what may cover events at or after
// since, once, and returns the match: the silence's or window's id.
type Silencer interface {
	Silenced(ctx context.Context, since time.Time) (func(event.Event) (id string, ok bool), error)
}
