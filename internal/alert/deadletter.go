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
	Sink       string
	EventID    string
	Seq        int64
	Type       event.Type
	PipelineID string
	ScheduleID string
	Period     string
	EventTime  time.Time
	Attempts   int
	Error      string    // the last error, as the sink returned it (no secrets)
	At         time.Time // when it was given up
}

// DeadLetters lists every dead letter in the store, of every sink (also of
// sinks no longer configured), by sink and then log order.
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
		return cmp.Or(cmp.Compare(a.Sink, b.Sink), cmp.Compare(a.Seq, b.Seq))
	})
	return out, nil
}
