package store

import (
	"errors"
	"fmt"
)

// ErrUnservedRead: a list read combines filters that no single key or
// index serves on every backend (DynamoDB queries one key range of one
// index; anything else would be a filter over what it read, whose cost
// grows with what it skipped). It is a bug in the caller; nothing was
// read.
var ErrUnservedRead = errors.New("store: read not served by one index")

// Index names the key or index that serves a list read: the rows of the
// table in docs/architecture.md, which says what each is on SQLite,
// PostgreSQL and DynamoDB. A cross-pipeline read names an index whose
// DynamoDB partition key is sharded, so no read or write lands on one
// hot key.
type Index string

// The indexes of list reads.
const (
	IndexRunsOfPipeline    Index = "runs of a pipeline"          // (pipeline, schedule, period)
	IndexActiveOfPipeline  Index = "active runs of a pipeline"   // (pipeline, period) while active
	IndexActiveRuns        Index = "active runs"                 // sharded: (shard, pipeline, period) while active
	IndexRunsByPeriod      Index = "runs by period"              // sharded: (shard, period)
	IndexRunsByUpdate      Index = "runs by update"              // sharded: (shard, updated at)
	IndexMarkersByPeriod   Index = "markers by period"           // sharded: (shard, period, kind)
	IndexMarkersByWrite    Index = "markers by write"            // sharded: (shard, at)
	IndexSensorsByChange   Index = "watched sensors by change"   // sharded: (shard, changed at), watched sensors only
	IndexSensorsOfPipeline Index = "sensors of a pipeline"       // (pipeline, changed at)
	IndexScan              Index = "scan (tests and tools only)" // no production read may use it
)

// Index says which index serves p, or ErrUnservedRead. A read scoped to a
// pipeline may narrow it by schedule, period or period range, and to the
// active runs; a read across pipelines takes exactly one range — active
// runs, periods from, or updated since — because each is its own index.
// No filter at all is a scan, for storetest's snapshots and tools.
func (p RunListParams) Index() (Index, error) {
	if p.Period != "" && (p.PeriodFrom != "" || p.PeriodTo != "") {
		return "", fmt.Errorf("%w: runs: Period and a period range together", ErrUnservedRead)
	}
	if p.PeriodTo != "" && p.PipelineID == "" {
		return "", fmt.Errorf("%w: runs: PeriodTo needs the pipeline", ErrUnservedRead)
	}
	if p.PipelineID != "" {
		switch {
		case !p.UpdatedSince.IsZero():
			return "", fmt.Errorf("%w: runs: UpdatedSince is a read across pipelines; it takes no pipeline", ErrUnservedRead)
		case p.ActiveOnly:
			return IndexActiveOfPipeline, nil
		default:
			return IndexRunsOfPipeline, nil
		}
	}
	if p.ScheduleID != "" || p.Period != "" {
		return "", fmt.Errorf("%w: runs: a schedule or a period needs the pipeline", ErrUnservedRead)
	}
	var ranges []Index
	if p.ActiveOnly {
		ranges = append(ranges, IndexActiveRuns)
	}
	if p.PeriodFrom != "" {
		ranges = append(ranges, IndexRunsByPeriod)
	}
	if !p.UpdatedSince.IsZero() {
		ranges = append(ranges, IndexRunsByUpdate)
	}
	switch len(ranges) {
	case 0:
		return IndexScan, nil
	case 1:
		return ranges[0], nil
	}
	return "", fmt.Errorf("%w: runs across pipelines: one of ActiveOnly, PeriodFrom and UpdatedSince, not %d", ErrUnservedRead, len(ranges))
}

// Index says which index serves p, or ErrUnservedRead: markers of recent
// periods, or markers written since — one range, as RunListParams.
func (p MarkerListParams) Index() (Index, error) {
	switch {
	case p.PeriodFrom != "" && !p.Since.IsZero():
		return "", fmt.Errorf("%w: markers: PeriodFrom and Since together", ErrUnservedRead)
	case p.PeriodFrom != "":
		return IndexMarkersByPeriod, nil
	case !p.Since.IsZero():
		return IndexMarkersByWrite, nil
	}
	return IndexScan, nil
}

// Index says which index serves p, or ErrUnservedRead: one pipeline's
// sensors by change time, or every pipeline's watched sensors (the
// cross-pipeline index holds those only, so the read must say Watched,
// and a pipeline's read, whose index holds every sensor, must not).
func (p SensorListChangedParams) Index() (Index, error) {
	switch {
	case p.PipelineID != "" && p.Watched:
		return "", fmt.Errorf("%w: sensors: Watched is the read across pipelines; it takes no pipeline", ErrUnservedRead)
	case p.PipelineID != "":
		return IndexSensorsOfPipeline, nil
	case !p.Watched:
		return "", fmt.Errorf("%w: sensors across pipelines: their index holds watched sensors only; set Watched", ErrUnservedRead)
	}
	return IndexSensorsByChange, nil
}
