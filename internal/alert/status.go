package alert

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/store"
)

// StatusScan is how many events after a sink's cursor Status looks at to
// count its backlog: beyond it the backlog is reported as "at least".
const StatusScan = 1000

// SinkStatus is how delivery to one sink stands, read from the store only
// (so every replica sharing it answers the same, whichever holds the
// sink's lease).
type SinkStatus struct {
	Sink string `json:"sink"`
	// Configured: a route of interlock.yaml delivers to it. A sink no
	// longer configured is listed while the store keeps its cursor.
	Configured bool `json:"configured"`
	// Backlog counts the events after the sink's durable cursor that its
	// route takes (all-clears counted, though some will not be sent),
	// looking at StatusScan events at most; BacklogMore says there may
	// be more. 0 for a sink no longer configured (nothing reads it).
	Backlog     int  `json:"backlog"`
	BacklogMore bool `json:"backlogMore,omitempty"`
	// CursorAt is when the cursor last moved (a delivery, a dead letter,
	// or events not for the sink); nil before the sink has one.
	CursorAt *time.Time `json:"cursorAt,omitempty"`
	// LastSuccess is when the sink last accepted an alert; nil when it
	// never did (a cursor that only started, or moved over events not
	// for it, is no success).
	LastSuccess *time.Time `json:"lastSuccess,omitempty"`
	// Failing is the sink's current run of failed attempts at its next
	// alert (since when, how many, the last error); nil when its last
	// attempt succeeded or none was made. A sink failing on every attempt
	// is reported at its first failure, not once its alert is given up.
	Failing *SinkFailing `json:"failing,omitempty"`
	// DeadLetters counts the sink's dead letters; LastDeadLetter is the
	// newest, with its reason.
	DeadLetters    int         `json:"deadLetters"`
	LastDeadLetter *DeadLetter `json:"lastDeadLetter,omitempty"`
}

// SinkFailing is a sink's current run of failed delivery attempts.
type SinkFailing struct {
	Since     time.Time `json:"since"`
	Attempts  int       `json:"attempts"`
	LastError string    `json:"lastError"`
}

// Status reports every configured sink, in route order, then the sinks
// the store still has a cursor of that are no longer configured, by name.
func (d *Deliverer) Status(ctx context.Context) ([]SinkStatus, error) {
	cursors, byName, err := cursorIndex(ctx, d.st)
	if err != nil {
		return nil, err
	}
	var out []SinkStatus
	for _, w := range d.workers {
		c, ok := byName[w.name]
		delete(byName, w.name)
		s, err := d.sinkStatus(ctx, w, c, ok)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	for _, c := range cursors {
		if _, left := byName[c.Sink]; !left {
			continue
		}
		s, err := d.sinkStatus(ctx, nil, c, true)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// sinkStatus reads one sink's status; w is nil for a sink no longer
// configured, hasCursor false before the sink has a cursor.
func (d *Deliverer) sinkStatus(ctx context.Context, w *worker, c store.DeliveryCursor, hasCursor bool) (SinkStatus, error) {
	name := c.Sink
	if w != nil {
		name = w.name
	}
	s, err := recordedStatus(ctx, d.st, name, w != nil, c, hasCursor)
	if err != nil || w == nil || !hasCursor {
		return s, err
	}
	page, err := d.st.EventList(ctx, store.EventListParams{After: c.Cursor, Limit: StatusScan})
	if err != nil {
		return s, fmt.Errorf("alert: backlog of sink %s: %w", s.Sink, err)
	}
	for _, e := range page.Events {
		if w.route.Match.Decide(e) != Skip {
			s.Backlog++
		}
	}
	s.BacklogMore = len(page.Events) == StatusScan
	return s, nil
}

// recordedStatus is what the store records of a sink: its dead letters
// and, with its cursor record (hasCursor), when that moved, its last
// success and its current run of failures.
func recordedStatus(ctx context.Context, st store.Store, name string, configured bool, c store.DeliveryCursor, hasCursor bool) (SinkStatus, error) {
	s := SinkStatus{Sink: name, Configured: configured}
	dls, err := st.DeadLetterList(ctx, s.Sink)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return s, fmt.Errorf("alert: dead letters of sink %s: %w", s.Sink, err)
	}
	s.DeadLetters = len(dls)
	if n := len(dls); n > 0 {
		dl := deadLetterOf(dls[n-1])
		s.LastDeadLetter = &dl
	}
	if !hasCursor {
		return s, nil
	}
	at := c.At
	s.CursorAt = &at
	if !c.DeliveredAt.IsZero() {
		delivered := c.DeliveredAt
		s.LastSuccess = &delivered
	}
	if !c.Failing.Since.IsZero() {
		s.Failing = &SinkFailing{Since: c.Failing.Since, Attempts: c.Failing.Attempts, LastError: c.Failing.Error}
	}
	return s, nil
}

// StoredStatus reports the sinks from the store alone, for a process that
// delivers nothing itself (an AWS control plane: the deployment's
// alert-dispatcher records each sink's state, DeliveryState): the
// configured sinks, in that order, then every other sink the store has a
// record of, by name. There is no backlog: a dispatcher keeps no cursor
// over the log (its queue is the backlog).
func StoredStatus(ctx context.Context, st store.Store, configured []string) ([]SinkStatus, error) {
	cursors, byName, err := cursorIndex(ctx, st)
	if err != nil {
		return nil, err
	}
	var out []SinkStatus
	seen := map[string]bool{}
	for _, name := range configured {
		if seen[name] {
			continue
		}
		seen[name] = true
		c, ok := byName[name]
		s, err := recordedStatus(ctx, st, name, true, c, ok)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	for _, c := range cursors {
		if seen[c.Sink] {
			continue
		}
		s, err := recordedStatus(ctx, st, c.Sink, false, c, true)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, nil
}

// DeliveryState is the record a sink's delivery attempt leaves (the local
// worker's rule, for a deliverer that keeps no state between attempts:
// the AWS alert-dispatcher): prev is the sink's record before it (zero:
// none), at the attempt's instant. A delivery sets the last success and
// ends the run of failures; a dead letter ends it too (it is the record
// of that failure from then on); a failure to be retried (retry) extends
// it — its start kept, one more attempt, the last error.
func DeliveryState(prev store.DeliveryCursor, sink string, at time.Time, derr error, retry bool) store.DeliveryCursor {
	c := prev
	c.Sink, c.At = sink, at
	switch {
	case derr == nil:
		c.DeliveredAt, c.Failing = at, store.SinkFailing{}
	case retry:
		if c.Failing.Since.IsZero() {
			c.Failing.Since = at
		}
		c.Failing.Attempts++
		c.Failing.Error = clip(derr.Error(), maxErrorText)
	default:
		c.Failing = store.SinkFailing{}
	}
	return c
}

// cursorIndex is every delivery cursor the store holds, in its order and
// by sink.
func cursorIndex(ctx context.Context, st store.Store) ([]store.DeliveryCursor, map[string]store.DeliveryCursor, error) {
	cursors, err := st.DeliveryCursorList(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("alert: sink status: %w", err)
	}
	byName := make(map[string]store.DeliveryCursor, len(cursors))
	for _, c := range cursors {
		byName[c.Sink] = c
	}
	return cursors, byName, nil
}
