package alert

import (
	"context"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// DeadLetter is an alert a sink never accepted: it failed permanently or
// MaxAttempts times. The cursor moved past it, so later alerts flow; the
// dead letter stays in the store for an operator.
type DeadLetter struct {
	Sink       string     `json:"sink"`
	EventID    string     `json:"eventId"`
	Type       event.Type `json:"type"`
	PipelineID string     `json:"pipelineId"`
	ScheduleID string     `json:"scheduleId,omitempty"`
	Period     string     `json:"period,omitempty"`
	EventTime  time.Time  `json:"eventTime"`
	Attempts   int        `json:"attempts"`
	Error      string     `json:"error"` // the last error, as the sink returned it (no secrets)
	At         time.Time  `json:"at"`    // when it was given up
}

// DeadLetters lists every dead letter in the store, of every sink (also of
// sinks no longer configured: every sink that delivered has a cursor), by
// sink and then in the order they were given up.
func (d *Deliverer) DeadLetters(ctx context.Context) ([]DeadLetter, error) {
	return DeadLettersOf(ctx, d.st)
}

// DeadLettersOf lists the dead letters of every sink the store has a
// record of, read from the store alone (an AWS control plane's health).
func DeadLettersOf(ctx context.Context, st store.Store) ([]DeadLetter, error) {
	cursors, err := st.DeliveryCursorList(ctx)
	if err != nil {
		return nil, fmt.Errorf("alert: list dead letters: %w", err)
	}
	var out []DeadLetter
	for _, c := range cursors {
		dls, err := st.DeadLetterList(ctx, c.Sink)
		if err != nil {
			return nil, fmt.Errorf("alert: list dead letters of sink %s: %w", c.Sink, err)
		}
		for _, r := range dls {
			out = append(out, deadLetterOf(r))
		}
	}
	return out, nil
}
