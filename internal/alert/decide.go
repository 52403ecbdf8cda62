package alert

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// Decision is what one route does with one event, its records read: send
// it, or not and why. It is the one decision the Deliverer's workers and
// the AWS alert dispatcher (internal/runtime/awsrt) both make.
type Decision struct {
	Send bool
	// Hash keys the event's sent record (with its period and type).
	Hash string
	// SilencedBy is the silence or maintenance window that covers the
	// event, when one does (Send is false).
	SilencedBy string
	// Why says why a routed, unsilenced event is not sent (suppressed).
	Why string
}

// Decide decides e for the route of sink with match m: the route's match
// (an all-clear of the default selection only after the sink alerted on
// the period), then the silences (silenced), then the sink's last
// delivery of the same text (an event id is sent once; a repeat within
// suppressFor is held back, none when it is negative).
func Decide(ctx context.Context, st store.Store, sink string, m Match, e event.Event,
	silenced func(event.Event) (string, bool), suppressFor time.Duration,
) (Decision, error) {
	verdict := m.Decide(e)
	if verdict == SendIfAlerted {
		alerted, err := alertedOn(ctx, st, sink, e)
		if err != nil {
			return Decision{}, err
		}
		if !alerted {
			verdict = Skip
		}
	}
	if verdict == Skip {
		return Decision{}, nil
	}
	if silenced != nil {
		if id, ok := silenced(e); ok {
			return Decision{SilencedBy: id}, nil
		}
	}
	hash := messageHash(e)
	why, err := suppressed(ctx, st, sink, e, hash, suppressFor)
	if err != nil {
		return Decision{}, err
	}
	return Decision{Send: why == "", Hash: hash, Why: why}, nil
}

// Delivered is what a delivery of e to sink (routed by m) records in the
// store: what was sent and, for a default route's problem, that the sink
// alerted on the period (which lets the period's all-clear through).
func (d Decision) Delivered(sink string, m Match, e event.Event) store.Change {
	c := store.Change{AlertsSent: []store.AlertSent{sentRecord(sink, e, d.Hash)}}
	if m.Default() && e.Date != "" && !IsAllClear(e.Type) {
		c.AlertsAlerted = []store.AlertAlerted{alertedRecord(sink, e)}
	}
	return c
}

// alertedOn reports whether sink delivered a problem for e's period.
func alertedOn(ctx context.Context, st store.Store, sink string, e event.Event) (bool, error) {
	if e.Date == "" {
		return false, nil
	}
	_, err := st.AlertAlertedGet(ctx, sink, eventPeriod(e))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return false, nil
	case err != nil:
		return false, fmt.Errorf("alert: sink %s: read alerted record: %w", sink, err)
	}
	return true, nil
}

// suppressed says why e must not be sent to sink again, or "". It looks
// at the last delivery of the same text (period, type, message): the same
// event id is never sent twice (an id always has one text and time), nor
// is a text again for an instant not after its last delivery; and a
// repeat within suppressFor of it is held back.
func suppressed(ctx context.Context, st store.Store, sink string, e event.Event, hash string, suppressFor time.Duration) (string, error) {
	last, err := st.AlertSentGet(ctx, sink, eventPeriod(e), e.Type, hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("alert: sink %s: read sent record: %w", sink, err)
	}
	switch {
	case last.EventID == e.ID:
		return "event already delivered", nil
	case !e.Time.After(last.At):
		// A copy of an event, or an out-of-order one, whose text went out
		// for a later instant already.
		return "identical alert already delivered for a later or the same time", nil
	case suppressFor > 0 && e.Time.Sub(last.At) < suppressFor:
		return "identical alert delivered " + e.Time.Sub(last.At).String() + " earlier", nil
	}
	return "", nil
}
