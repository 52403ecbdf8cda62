package alert

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"github.com/interlockhq/interlock/internal/textsafe"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// Saving the cursor after events a sink skipped (not routed, suppressed)
// is deferred until this many events or this long, so a busy log does not
// cost a commit per event per sink. Replaying skipped events after a
// restart is harmless: their verdict depends only on markers that change
// with deliveries, and every delivery saves the cursor.
const (
	idleSaveEvents = 512
	idleSaveAfter  = 30 * time.Second
	// commitTimeout bounds the cursor commit after a delivery. It does not
	// inherit the caller's cancellation: once a sink has accepted an
	// alert, recording that is what prevents a resend.
	commitTimeout = 10 * time.Second
)

// worker delivers to one sink.
type worker struct {
	d     *Deliverer
	route Route
	name  string
	wake  chan struct{}

	mu      sync.Mutex   // one sweep at a time (Run and DeliverPending may overlap)
	pos     store.Cursor // every event pos has passed is done, in memory
	saved   store.Cursor // the durable cursor
	savedAt time.Time
	skipped int         // events pos passed since saved
	lease   store.Lease // the sink's lease as this worker last wrote it; zero: not held
	// delivered and failing are the sink's delivery state, saved with
	// its cursor (store.DeliveryCursor): when it last accepted an alert,
	// and its current run of failed attempts.
	delivered time.Time
	failing   store.SinkFailing
	// unrecorded is the alert whose outcome the sink gave but whose
	// record did not commit (a connection cut mid-commit, a database
	// restarting): a sweep that reaches it again records it instead of
	// sending it again. Memory only: a process that dies with it sends
	// the alert again after its restart (at least once).
	unrecorded *unrecorded
}

// unrecorded is an alert sent (or given up) and not yet recorded.
type unrecorded struct {
	id       string
	dec      Decision
	attempts int
	failure  error
}

func (w *worker) setSaved(c store.Cursor, at time.Time) {
	w.pos, w.saved, w.savedAt, w.skipped = c, c, at, 0
}

// loaded takes the sink's stored cursor and delivery state.
func (w *worker) loaded(c store.DeliveryCursor) {
	w.setSaved(c.Cursor, c.At)
	w.delivered, w.failing = c.DeliveredAt, c.Failing
}

// cursorWrite is the sink's cursor at c, saved at at, with its delivery
// state.
func (w *worker) cursorWrite(c store.Cursor, at time.Time) store.DeliveryCursorWrite {
	return store.DeliveryCursorWrite{Cursor: store.DeliveryCursor{Sink: w.name, Cursor: c, At: at, DeliveredAt: w.delivered, Failing: w.failing}}
}

// skip marks e done without a delivery.
func (w *worker) skip(e event.Event) {
	w.pos = w.pos.Advance(e)
	w.skipped++
}

func (w *worker) loop(ctx context.Context) {
	for {
		if err := w.sweep(ctx, false); errors.Is(err, errLeaseLost) {
			w.d.log.Info("alert sweep stopped", "sink", w.name, "why", err)
		} else if err != nil && ctx.Err() == nil {
			w.d.log.Error("alert delivery sweep failed", "sink", w.name, "err", err)
		}
		t := time.NewTimer(w.d.o.PollInterval)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-w.wake:
		case <-t.C:
		}
		t.Stop()
	}
}

// sweep handles every event after the cursor. With force, skipped events
// are saved at the end whatever their number.
func (w *worker) sweep(ctx context.Context, force bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	held, continuous, err := w.hold(ctx)
	switch {
	case err != nil:
		return err
	case !held:
		return nil // another process delivers this sink
	case !continuous:
		// Taken (again): the previous holder may have moved the cursor.
		c, err := w.d.cursor(ctx, w.name)
		if err != nil {
			w.lease = store.Lease{}
			return err
		}
		w.loaded(c)
	}
	for {
		page, err := w.d.st.EventList(ctx, store.EventListParams{After: w.pos, Limit: w.d.o.BatchSize})
		if err != nil {
			return fmt.Errorf("alert: sink %s: read events after %s: %w", w.name, w.pos, err)
		}
		silenced, err := w.silences(ctx, page.Events)
		if err != nil {
			return fmt.Errorf("alert: sink %s: read silences: %w", w.name, err)
		}
		for _, e := range page.Events {
			if err := w.handle(ctx, e, silenced); err != nil {
				return err
			}
		}
		if len(page.Events) < w.d.o.BatchSize {
			break
		}
		if err := w.saveIdle(ctx, false); err != nil {
			return err
		}
	}
	return w.saveIdle(ctx, force)
}

// saveIdle saves a cursor that moved over skipped events only.
func (w *worker) saveIdle(ctx context.Context, force bool) error {
	if w.pos == w.saved {
		return nil
	}
	now := w.d.clk.Now()
	if !force && w.skipped < idleSaveEvents && now.Sub(w.savedAt) < idleSaveAfter {
		return nil
	}
	r := w.renewal()
	err := w.d.st.Commit(ctx, store.Change{DeliveryCursors: []store.DeliveryCursorWrite{w.cursorWrite(w.pos, now)}, Leases: r})
	w.committed(r, err)
	if err != nil {
		return fmt.Errorf("alert: sink %s: save cursor %s: %w", w.name, w.pos, err)
	}
	w.setSaved(w.pos, now)
	return nil
}

// silences reads what silences the events of a page: one read of the
// stored silences, from the page's earliest event on.
func (w *worker) silences(ctx context.Context, evs []event.Event) (func(event.Event) (string, bool), error) {
	if w.d.o.Silences == nil || len(evs) == 0 {
		return func(event.Event) (string, bool) { return "", false }, nil
	}
	since := evs[0].Time
	for _, e := range evs {
		if e.Time.Before(since) {
			since = e.Time
		}
	}
	return w.d.o.Silences.Silenced(ctx, since)
}

// handle takes one event: skip it, suppress it, or deliver it (retrying)
// and record the outcome with the cursor. An event a silence or a window
// covers (silenced) is skipped, and the log says which silenced it.
func (w *worker) handle(ctx context.Context, e event.Event, silenced func(event.Event) (string, bool)) error {
	if u := w.unrecorded; u != nil && u.id == e.ID {
		// Sent before, its record failed: record it, do not send again.
		return w.record(ctx, e, u.dec, u.attempts, u.failure)
	}
	dec, err := Decide(ctx, w.d.st, w.name, w.route.Match, e, silenced, w.d.o.SuppressFor)
	switch {
	case err != nil:
		return err
	case dec.SilencedBy != "":
		w.d.log.Info("alert silenced", "sink", w.name, "event", e.ID, "type", e.Type, "pipeline", e.PipelineID, "date", e.Date, "silence", dec.SilencedBy)
		w.skip(e)
		return nil
	case dec.Why != "":
		w.d.log.Debug("alert suppressed", "sink", w.name, "event", e.ID, "type", e.Type, "pipeline", e.PipelineID, "date", e.Date, "why", dec.Why)
		w.skip(e)
		return nil
	case !dec.Send:
		w.skip(e)
		return nil
	}

	attempts, failure, err := w.attempt(ctx, NewAlert(e, w.name))
	if err != nil {
		return err
	}
	return w.record(ctx, e, dec, attempts, failure)
}

// record commits the outcome of e's delivery (failure nil: the sink
// accepted it) with the cursor past it. When the commit fails, the outcome
// is kept for the next sweep to record (unrecorded).
func (w *worker) record(ctx context.Context, e event.Event, dec Decision, attempts int, failure error) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), commitTimeout)
	defer cancel()
	now := w.d.clk.Now()
	pos := w.pos.Advance(e)
	r := w.renewal()
	// A delivery ends the sink's run of failures; so does a dead letter
	// (it is the record of that failure from then on).
	prevDelivered, prevFailing := w.delivered, w.failing
	if failure == nil {
		w.delivered = now
	}
	w.failing = store.SinkFailing{}
	c := store.Change{DeliveryCursors: []store.DeliveryCursorWrite{w.cursorWrite(pos, now)}, Leases: r}
	if failure == nil {
		rec := dec.Delivered(w.name, w.route.Match, e)
		c.AlertsSent, c.AlertsAlerted = rec.AlertsSent, rec.AlertsAlerted
	} else {
		c.DeadLetters = []store.DeadLetter{NewDeadLetter(w.name, e, attempts, failure, now).record()}
	}
	err := w.d.st.Commit(ctx, c)
	w.committed(r, err)
	if err != nil {
		// The alert went out (or was given up) but the cursor did not
		// move: this process's next sweep that reaches the event records
		// it; a process that took the lease meanwhile, or this one
		// restarted, sends it again (at least once).
		w.delivered, w.failing = prevDelivered, prevFailing
		w.unrecorded = &unrecorded{id: e.ID, dec: dec, attempts: attempts, failure: failure}
		return fmt.Errorf("alert: sink %s: record event %s: %w", w.name, e.ID, err)
	}
	w.unrecorded = nil
	w.setSaved(pos, now)
	if failure != nil {
		w.d.log.Error("alert dead-lettered", "sink", w.name, "event", e.ID, "type", e.Type,
			"pipeline", e.PipelineID, "date", e.Date, "attempts", attempts, "err", failure)
		if w.d.o.OnFailure != nil {
			w.d.o.OnFailure(w.name)
		}
		return nil
	}
	w.d.log.Debug("alert delivered", "sink", w.name, "event", e.ID, "type", e.Type, "attempts", attempts)
	return nil
}

// attempt delivers a until the sink accepts it, calls the failure
// permanent, or MaxAttempts is reached; failure is the last error then.
// err is set only when ctx ended: the event stays pending.
func (w *worker) attempt(ctx context.Context, a Alert) (attempts int, failure, err error) {
	for attempts = 1; ; attempts++ {
		if attempts > 1 {
			// A retry only by the lease's holder: after a long backoff
			// another process may deliver this sink now.
			if held, continuous, err := w.hold(ctx); err != nil {
				return attempts, nil, err
			} else if !held || !continuous {
				w.lease = store.Lease{}
				return attempts, nil, errLeaseLost
			}
		}
		retry, derr := deliver(ctx, w.route.Sink, a, attempts)
		if derr == nil {
			return attempts, nil, nil
		}
		if ctx.Err() != nil {
			return attempts, nil, ctx.Err()
		}
		if !retry || attempts >= w.d.o.MaxAttempts {
			return attempts, derr, nil
		}
		if err := w.recordFailing(ctx, derr); err != nil {
			return attempts, nil, err
		}
		wait := w.backoff(attempts)
		if ra, ok := RetryAfter(derr); ok {
			wait = max(wait, min(ra, w.d.o.MaxBackoff))
		}
		w.d.log.Warn("alert delivery failed, will retry", "sink", w.name, "event", a.Event.ID, "type", a.Event.Type,
			"attempt", attempts, "in", wait, "err", derr)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return attempts, nil, ctx.Err()
		case <-t.C:
		}
	}
}

// backoff is the wait after the n-th failed attempt: MinBackoff doubled
// n-1 times, capped at MaxBackoff, then jittered to between half and all
// of it, so sinks that failed together do not retry together.
func (w *worker) backoff(n int) time.Duration {
	d := w.d.o.MinBackoff
	for i := 1; i < n && d < w.d.o.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, w.d.o.MaxBackoff)
	half := d / 2
	return half + rand.N(d-half+1)
}

// maxErrorText bounds the error kept in a dead letter.
const maxErrorText = 2000

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return textsafe.Prefix(s, n) + textsafe.Mark
}

// messageHash identifies an alert's message for repeat suppression; with
// the period and type it keys the sent record.
func messageHash(e event.Event) string {
	sum := sha256.Sum256([]byte(e.Message))
	return hex.EncodeToString(sum[:12])
}

// recordFailing saves, with the cursor where it is, that the sink's
// attempt at its next alert failed (the start of the run of failures,
// how many, the last error), so the health every replica reads says at
// once that the sink is failing, not only once the alert is given up. A
// store that cannot take it ends the sweep, like a cursor that cannot be
// saved.
func (w *worker) recordFailing(ctx context.Context, derr error) error {
	now := w.d.clk.Now()
	prev := w.failing
	if w.failing.Since.IsZero() {
		w.failing.Since = now
	}
	w.failing.Attempts++
	w.failing.Error = derr.Error()
	r := w.renewal()
	err := w.d.st.Commit(ctx, store.Change{DeliveryCursors: []store.DeliveryCursorWrite{w.cursorWrite(w.saved, w.savedAt)}, Leases: r})
	w.committed(r, err)
	if err != nil {
		w.failing = prev
		return fmt.Errorf("alert: sink %s: record its failing attempt: %w", w.name, err)
	}
	return nil
}
