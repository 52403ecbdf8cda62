package store

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"github.com/interlockhq/interlock/internal/backfill"
)

// Backfill is an operator's request to run a range of a pipeline's past
// periods, with each period's progress (package backfill decides; the
// engine's backfill timer moves it). It is one record per backfill, read
// by key or by pipeline: a backfill holds at most backfill.MaxPeriods
// periods, so the record stays small (a DynamoDB item holds 400 KB). A
// backfill is never expired: it is the account of what was asked.
type Backfill struct {
	PipelineID string
	ID         string // "1", "2", … per pipeline
	Version    int64  // the store's: moved by every write
	From, To   string // the range's ends, canonical periods
	Only       backfill.Only
	MaxActive  int
	Reverse    bool
	// RequestedAt also bounds the SLA exemption of the periods it starts
	// (sla.BackfillExempt).
	RequestedAt time.Time
	RequestedBy string
	State       backfill.State
	EndedAt     time.Time // when it completed or was cancelled; zero while running
	// Periods are the range's periods in run order (oldest first, newest
	// first when Reverse), each with its state.
	Periods []backfill.Period
}

// BackfillWrite puts a backfill with the same version rule as
// PipelineWrite: ExpectVersion 0 means it must not exist; otherwise the
// stored Version must equal it.
type BackfillWrite struct {
	Backfill      Backfill
	ExpectVersion int64
}

// backfillBody is the part of a Backfill the backends store as one JSON
// document beside its keys, version and request time.
type backfillBody struct {
	From        string               `json:"from"`
	To          string               `json:"to"`
	Only        backfill.Only        `json:"only"`
	MaxActive   int                  `json:"maxActive"`
	Reverse     bool                 `json:"reverse,omitempty"`
	RequestedBy string               `json:"requestedBy,omitempty"`
	State       backfill.State       `json:"state"`
	EndedAt     int64                `json:"endedAt,omitempty"` // Unix nanoseconds
	Periods     []backfillPeriodBody `json:"periods"`
}

type backfillPeriodBody struct {
	Period string               `json:"p"`
	State  backfill.PeriodState `json:"s"`
	Reason string               `json:"r,omitempty"`
}

// EncodeBackfillBody renders what the backends store of b besides its
// pipeline, id, version and RequestedAt.
func EncodeBackfillBody(b Backfill) ([]byte, error) {
	body := backfillBody{From: b.From, To: b.To, Only: b.Only, MaxActive: b.MaxActive, Reverse: b.Reverse,
		RequestedBy: b.RequestedBy, State: b.State, Periods: make([]backfillPeriodBody, len(b.Periods))}
	if !b.EndedAt.IsZero() {
		body.EndedAt = b.EndedAt.UnixNano()
	}
	for i, p := range b.Periods {
		body.Periods[i] = backfillPeriodBody{Period: p.Period, State: p.State, Reason: p.Reason}
	}
	return json.Marshal(body)
}

// DecodeBackfillBody fills b from a stored body, refusing states it does
// not know (a body written by a newer version, or damaged).
func DecodeBackfillBody(data []byte, b *Backfill) error {
	var body backfillBody
	if err := json.Unmarshal(data, &body); err != nil {
		return fmt.Errorf("backfill %s/%s: %w", b.PipelineID, b.ID, err)
	}
	if !slices.Contains(backfill.States(), body.State) {
		return fmt.Errorf("backfill %s/%s: unknown state %q", b.PipelineID, b.ID, body.State)
	}
	b.From, b.To, b.Only, b.MaxActive, b.Reverse = body.From, body.To, body.Only, body.MaxActive, body.Reverse
	b.RequestedBy, b.State = body.RequestedBy, body.State
	b.EndedAt = time.Time{}
	if body.EndedAt != 0 {
		b.EndedAt = time.Unix(0, body.EndedAt).UTC()
	}
	b.Periods = make([]backfill.Period, len(body.Periods))
	for i, p := range body.Periods {
		if !slices.Contains(backfill.PeriodStates(), p.State) {
			return fmt.Errorf("backfill %s/%s: period %s: unknown state %q", b.PipelineID, b.ID, p.Period, p.State)
		}
		b.Periods[i] = backfill.Period{Period: p.Period, State: p.State, Reason: p.Reason}
	}
	return nil
}
