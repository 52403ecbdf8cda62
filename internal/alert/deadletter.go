package alert

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
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
// sinks no longer configured), by sink and then in the order they were
// given up.
func (d *Deliverer) DeadLetters(ctx context.Context) ([]DeadLetter, error) {
	ms, err := d.st.MarkerList(ctx, store.MarkerListParams{PipelineID: nsDelivery})
	if err != nil {
		return nil, fmt.Errorf("alert: list dead letters: %w", err)
	}
	var out []DeadLetter
	for _, m := range ms {
		if id, ok := strings.CutPrefix(m.Kind, kindDeadPrefix); ok {
			out = append(out, decodeDead(m, id))
		}
	}
	slices.SortFunc(out, func(a, b DeadLetter) int {
		return cmp.Or(cmp.Compare(a.Sink, b.Sink), a.At.Compare(b.At), a.EventTime.Compare(b.EventTime), cmp.Compare(a.EventID, b.EventID))
	})
	return out, nil
}
