package store

import (
	"context"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
)

// SensorFactsReader is what a store may offer beside the port: the first
// facts of a sensor decision — the pipeline's row, the sensor's stored
// state, the runs the decision will look at when the caller can name them,
// and (on a store others write sensors into) the sensor's inbox item — read
// in one request. DynamoDB offers it (one BatchGetItem: a sensor write
// decides in at most three calls); SQLite does not need it (its reads are
// local) and the engine reads those facts one by one there.
//
// It answers exactly what the port's single reads would (PipelineGet,
// SensorGet, RunGet), read strongly consistent; storetest checks that.
type SensorFactsReader interface {
	SensorFacts(ctx context.Context, p SensorFactsParams) (SensorFacts, error)
}

// SensorFactsParams names what SensorFacts reads.
type SensorFactsParams struct {
	PipelineID, Key string
	// Runs are read too (a key named twice is read once). A key that
	// turns out not to be the decision's costs a read and is ignored.
	Runs []run.Key
	// Inbox asks for the sensor's inbox item too: the item anyone writes
	// (DynamoDB's SENSOR#<key>), distinct from the stored state Commit
	// keeps. A store without an inbox answers InboxErr ErrNotFound.
	Inbox bool
}

// SensorFacts is what SensorFacts read. A record that does not exist is
// absent (its *Found false, not in Runs): no ErrNotFound.
type SensorFacts struct {
	Pipeline      Pipeline
	PipelineFound bool
	Sensor        Sensor
	SensorFound   bool
	Runs          map[run.Key]run.Run // the asked-for runs that exist
	// Inbox is the inbox item's content (with Params.Inbox); InboxErr is
	// ErrNotFound when there is none, or the store's error for an item of
	// a bad shape (DynamoDB: *ItemError).
	Inbox    sensor.Object
	InboxErr error
}
