// Package record holds the stored records the pure core decides from as
// they are (the watchdog's snapshot holds them): a sensor as written and a
// period's marker. They are the store port's records (store.Sensor and
// store.Marker are these), kept below it so that a decision can take them
// without importing the port. It does no I/O and decides nothing.
package record

import (
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
)

// Sensor is a stored sensor. ChangedAt is when Interlock last received
// different content; an identical re-write only moves WrittenAt.
type Sensor struct {
	PipelineID string
	Key        string
	Data       sensor.Object
	Version    int64
	ChangedAt  time.Time
	WrittenAt  time.Time
	// Watched: the watchdog reads this sensor (its pipeline's trigger
	// matches the key: run.Watched, decided by the engine at each write
	// from the config it decided with). Only watched sensors are in the
	// index of changes across pipelines (store.SensorListChangedParams.Watched),
	// so the watchdog's read follows trigger data, not every sensor.
	Watched bool
}

// Record returns the sensor in the form rules read.
func (s Sensor) Record() sensor.Record {
	return sensor.Record{Key: s.Key, Data: s.Data, ReceivedAt: s.ChangedAt}
}

// Marker is a durable fact about a period, keyed by kind: the first
// trigger-sensor arrival, an alert already sent (dedup), a dry-run
// would-trigger. Markers are how "alert once" survives restarts.
type Marker struct {
	Key    run.Key
	Kind   string
	At     time.Time
	Detail sensor.Object
}
