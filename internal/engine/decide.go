package engine

import "github.com/interlockhq/interlock/internal/decide"

// Every input is one call of package decide (decide.SensorWrite, Step,
// Timer, the operator's entries, …): the engine loads the needs, calls
// it and commits.

// loadedPipeline is what one decision knows about its pipeline.
type loadedPipeline = decide.Pipeline
