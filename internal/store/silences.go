package store

import (
	"time"

	"github.com/interlockhq/interlock/internal/silence"
)

// Silence is a stored silence (internal/silence): an operator's request
// not to be paged about matching events until its end. It is written
// with the port's version rule (SilenceWrite): created with
// ExpectVersion 0, expired early by a write at the version read, so two
// operators expiring one silence at once record one expiry.
//
// Silences are few (a handful active, the recently ended ones kept for
// the dashboard): SilenceList reads them all at once — one partition on
// DynamoDB, one index range on SQLite and PostgreSQL. Retention deletes
// a silence whose end (silence.Silence.End) is before
// ExpireParams.Before, like an event of that time.
type Silence struct {
	silence.Silence
	Version int64
}

// SilenceWrite puts a silence with the same version rule as
// PipelineWrite.
type SilenceWrite struct {
	Silence       Silence
	ExpectVersion int64
}

// SilenceListParams filters SilenceList.
type SilenceListParams struct {
	// EndedSince keeps the silences whose end (EndsAt, or ExpiredAt when
	// earlier) is at or after it: those still active at it and those
	// that ended since. Zero keeps every stored silence.
	EndedSince time.Time
}
