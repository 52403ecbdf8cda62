package dynamodb

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// The port's reads, each on the key or index docs/aws.md names for it.

// maxText is above every character a key holds: the upper end of a
// begins-with range that also has a lower bound.
const maxText = "\U0010FFFF"

func (s *Store) PipelineGet(ctx context.Context, id string) (store.Pipeline, error) {
	return getAs(ctx, s, s.t.Control, pipelinePK(id), skConfig, decodePipeline)
}

func (s *Store) PipelineList(ctx context.Context) ([]store.Pipeline, error) {
	shards, err := s.queryShards(ctx, func(n int) queryRange {
		return queryRange{table: s.t.Control, index: idxPipelines, pk: fmt.Sprintf("PIPELINES#%d", n)}
	}, nil)
	if err != nil {
		return nil, err
	}
	return decodeSorted(slices.Concat(shards...), decodePipeline, func(a, b store.Pipeline) int { return strings.Compare(a.ID, b.ID) })
}

func (s *Store) CalendarGet(ctx context.Context, name string) (store.Calendar, error) {
	return getAs(ctx, s, s.t.Control, pkCalendars, skCalendarPrefix+name, decodeCalendar)
}

func (s *Store) CalendarList(ctx context.Context) ([]store.Calendar, error) {
	items, err := s.queryAll(ctx, queryRange{table: s.t.Control, pk: pkCalendars,
		cond: "begins_with(#sk, :a)", values: []string{skCalendarPrefix}})
	if err != nil {
		return nil, err
	}
	return decodeSorted(items, decodeCalendar, func(a, b store.Calendar) int { return strings.Compare(a.Name, b.Name) })
}

func (s *Store) SensorGet(ctx context.Context, pipelineID, key string) (store.Sensor, error) {
	return getAs(ctx, s, s.t.Control, pipelinePK(pipelineID), sensorStateSK(key), decodeSensor)
}

func (s *Store) SensorList(ctx context.Context, pipelineID string) ([]store.Sensor, error) {
	return s.SensorListPrefix(ctx, store.SensorListPrefixParams{PipelineID: pipelineID})
}

func (s *Store) SensorListPrefix(ctx context.Context, p store.SensorListPrefixParams) ([]store.Sensor, error) {
	items, err := s.queryAll(ctx, queryRange{table: s.t.Control, pk: pipelinePK(p.PipelineID),
		cond: "begins_with(#sk, :a)", values: []string{sensorStateSK(p.Prefix)}})
	if err != nil {
		return nil, err
	}
	return sortedSensors(items)
}

func (s *Store) SensorGetMany(ctx context.Context, p store.SensorGetManyParams) ([]store.Sensor, error) {
	seen := map[string]bool{}
	var keys []item
	for _, k := range p.Keys {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, keyOf(pipelinePK(p.PipelineID), sensorStateSK(k)))
		}
	}
	items, err := s.batchGet(ctx, s.t.Control, keys)
	if err != nil {
		return nil, err
	}
	return sortedSensors(items)
}

func sortedSensors(items []item) ([]store.Sensor, error) {
	return decodeSorted(items, decodeSensor, func(a, b store.Sensor) int {
		return cmp.Or(strings.Compare(a.PipelineID, b.PipelineID), strings.Compare(a.Key, b.Key))
	})
}

func (s *Store) SensorListChanged(ctx context.Context, p store.SensorListChangedParams) ([]store.Sensor, error) {
	if _, err := p.Index(); err != nil {
		return nil, err
	}
	var cond string
	var values []string
	if !p.Since.IsZero() {
		cond, values = "#sk >= :a", []string{sortTime(p.Since)}
	}
	var items []item
	var err error
	if p.PipelineID != "" {
		// The local index's order is the answer's: changed at, then key.
		err = s.query(ctx, queryRange{table: s.t.Control, index: lsiChanged, pk: pipelinePK(p.PipelineID), cond: cond, values: values},
			func(it item) bool { items = append(items, it); return p.Limit <= 0 || len(items) < p.Limit })
	} else {
		// Each shard in the answer's order: its first Limit hold its part
		// of the answer.
		var shards [][]item
		shards, err = s.queryShards(ctx, func(n int) queryRange {
			return queryRange{table: s.t.Control, index: idxSensorsChanged, pk: fmt.Sprintf("SENSORCHG#%d", n), cond: cond, values: values}
		}, func(got []item) bool { return p.Limit > 0 && len(got) >= p.Limit })
		items = slices.Concat(shards...)
	}
	if err != nil {
		return nil, err
	}
	xs, err := decodeSorted(items, decodeSensor, func(a, b store.Sensor) int {
		return cmp.Or(a.ChangedAt.Compare(b.ChangedAt), strings.Compare(a.PipelineID, b.PipelineID), strings.Compare(a.Key, b.Key))
	})
	return limited(xs, p.Limit), err
}

// decodeSorted decodes items (decodeAll) into the order a list read
// answers in: order compares two records as the port orders them.
func decodeSorted[T any](items []item, dec func(item) (T, error), order func(a, b T) int) ([]T, error) {
	xs, err := decodeAll(items, dec)
	slices.SortFunc(xs, order)
	return xs, err
}

func limited[T any](xs []T, limit int) []T {
	if limit > 0 && len(xs) > limit {
		return xs[:limit]
	}
	return xs
}

func (s *Store) RunGet(ctx context.Context, k run.Key) (run.Run, error) {
	return getAs(ctx, s, s.t.Control, pipelinePK(k.PipelineID), runSK(k.ScheduleID, k.Period), decodeRun)
}

// RunList reads the one index p names (store.RunListParams.Index), newest
// period first. Indexes ordered by period are read from the newest and
// stop once Limit runs and every run of the last period are in (ties are
// ordered here, by pipeline and schedule).
func (s *Store) RunList(ctx context.Context, p store.RunListParams) ([]run.Run, error) {
	idx, err := p.Index()
	if err != nil {
		return nil, err
	}
	var items []item
	collect := func(got []item) bool { return enoughByPeriod(got, p.Limit) }
	switch idx {
	case store.IndexRunsOfPipeline, store.IndexActiveOfPipeline:
		q := s.pipelineRuns(p, idx == store.IndexActiveOfPipeline)
		err = s.query(ctx, q, func(it item) bool { items = append(items, it); return !collect(items) })
	case store.IndexActiveRuns, store.IndexRunsByPeriod, store.IndexRunsByUpdate:
		var shards [][]item
		shards, err = s.queryShards(ctx, func(n int) queryRange {
			switch idx {
			case store.IndexActiveRuns:
				return queryRange{table: s.t.Control, index: idxActiveRuns, pk: fmt.Sprintf("ACTIVE#%d", n), desc: true}
			case store.IndexRunsByPeriod:
				return queryRange{table: s.t.Control, index: idxRunsByPeriod, pk: fmt.Sprintf("RUNS#%d", n), desc: true,
					cond: "#sk >= :a", values: []string{p.PeriodFrom}}
			}
			// By update time: the answer's order is not the index's, so
			// every run updated since is read.
			return queryRange{table: s.t.Control, index: idxRunsByUpdate, pk: fmt.Sprintf("RUNUPD#%d", n),
				cond: "#sk >= :a", values: []string{sortTime(p.UpdatedSince)}}
		}, func(got []item) bool { return idx != store.IndexRunsByUpdate && collect(got) })
		items = slices.Concat(shards...)
	case store.IndexScan:
		items, err = s.scanPrefix(ctx, s.t.Control, skRunPrefix)
	default:
		return nil, fmt.Errorf("dynamodb: runs: no read for index %q", idx)
	}
	if err != nil {
		return nil, err
	}
	rs, err := decodeSorted(items, decodeRun, func(a, b run.Run) int {
		return cmp.Or(strings.Compare(b.Period, a.Period), strings.Compare(a.PipelineID, b.PipelineID), strings.Compare(a.ScheduleID, b.ScheduleID))
	})
	return limited(rs, p.Limit), err
}

// enoughByPeriod reports whether items, read newest period first, hold
// limit runs and every run of the period of the limit-th one.
func enoughByPeriod(items []item, limit int) bool {
	if limit <= 0 || len(items) <= limit {
		return false
	}
	period := func(it item) string { return readItem(it).text(aPeriod) }
	return period(items[len(items)-1]) != period(items[limit-1])
}

// pipelineRuns is the range of one pipeline's runs p asks for: with a
// schedule, the table's own range TRIGGER#<schedule>#…; otherwise the
// local index by period (or by active period). The schedule of an active
// read is a filter over the pipeline's active runs (few).
func (s *Store) pipelineRuns(p store.RunListParams, active bool) queryRange {
	pk := pipelinePK(p.PipelineID)
	if p.ScheduleID != "" && !active {
		q := queryRange{table: s.t.Control, pk: pk, desc: true}
		prefix := skRunPrefix + p.ScheduleID + "#"
		switch {
		case p.Period != "":
			q.cond, q.values = "#sk = :a", []string{prefix + p.Period}
		case p.PeriodFrom != "" || p.PeriodTo != "":
			to := maxText
			if p.PeriodTo != "" {
				to = p.PeriodTo
			}
			q.cond, q.values = "#sk BETWEEN :a AND :b", []string{prefix + p.PeriodFrom, prefix + to}
		default:
			q.cond, q.values = "begins_with(#sk, :a)", []string{prefix}
		}
		return q
	}
	q := queryRange{table: s.t.Control, index: lsiPeriod, pk: pk, desc: true}
	if active {
		q.index = lsiActive
	}
	switch {
	case p.Period != "":
		q.cond, q.values = "begins_with(#sk, :a)", []string{p.Period + "#"}
	case p.PeriodTo != "":
		// The index's key is "<period>#<schedule>": every key of the
		// last period sorts before its period followed by maxText.
		from := cmp.Or(p.PeriodFrom, " ") // below every period; a key condition takes no empty string
		q.cond, q.values = "#sk BETWEEN :a AND :b", []string{from, p.PeriodTo + "#" + maxText}
	case p.PeriodFrom != "":
		q.cond, q.values = "#sk >= :a", []string{p.PeriodFrom}
	}
	if p.ScheduleID != "" {
		q.filter = "#fs = :fs"
		q.filterNames = map[string]string{"#fs": aSchedule}
		q.filterValues = map[string]types.AttributeValue{":fs": strAttr(p.ScheduleID)}
	}
	return q
}

func (s *Store) LedgerList(ctx context.Context, k run.Key) ([]store.LedgerEntry, error) {
	items, err := s.queryAll(ctx, queryRange{table: s.t.Rerun, pk: pipelinePK(k.PipelineID),
		cond: "begins_with(#sk, :a)", values: []string{ledgerPrefix(k)}})
	if err != nil {
		return nil, err
	}
	return decodeSorted(items, decodeLedger, func(a, b store.LedgerEntry) int { return cmp.Compare(a.Seq, b.Seq) })
}

func (s *Store) BaselineGet(ctx context.Context, k run.Key) (store.Baseline, error) {
	return getAs(ctx, s, s.t.Control, pipelinePK(k.PipelineID), baselineSK(k), decodeBaseline)
}

func (s *Store) MarkerGet(ctx context.Context, k run.Key, kind string) (store.Marker, error) {
	return getAs(ctx, s, s.t.Control, pipelinePK(k.PipelineID), markerSK(k, kind), decodeMarker)
}

func (s *Store) MarkerListOf(ctx context.Context, k run.Key) ([]store.Marker, error) {
	items, err := s.queryAll(ctx, queryRange{table: s.t.Control, pk: pipelinePK(k.PipelineID),
		cond: "begins_with(#sk, :a)", values: []string{markerPrefix(k)}})
	if err != nil {
		return nil, err
	}
	return decodeSorted(items, decodeMarker, func(a, b store.Marker) int { return strings.Compare(a.Kind, b.Kind) })
}

func (s *Store) MarkerList(ctx context.Context, p store.MarkerListParams) ([]store.Marker, error) {
	idx, err := p.Index()
	if err != nil {
		return nil, err
	}
	var items []item
	switch idx {
	case store.IndexMarkersByPeriod, store.IndexMarkersByWrite:
		var shards [][]item
		shards, err = s.queryShards(ctx, func(n int) queryRange {
			if idx == store.IndexMarkersByPeriod {
				return queryRange{table: s.t.Control, index: idxMarkersByPeriod, pk: fmt.Sprintf("MARKERS#%d", n),
					cond: "#sk >= :a", values: []string{p.PeriodFrom}}
			}
			return queryRange{table: s.t.Control, index: idxMarkersByWrite, pk: fmt.Sprintf("MARKERW#%d", n),
				cond: "#sk >= :a", values: []string{sortTime(p.Since)}}
		}, nil)
		items = slices.Concat(shards...)
	case store.IndexScan:
		items, err = s.scanPrefix(ctx, s.t.Control, skMarkerPrefix)
	default:
		return nil, fmt.Errorf("dynamodb: markers: no read for index %q", idx)
	}
	if err != nil {
		return nil, err
	}
	return decodeSorted(items, decodeMarker, func(a, b store.Marker) int {
		return cmp.Or(strings.Compare(a.Key.PipelineID, b.Key.PipelineID), strings.Compare(a.Key.ScheduleID, b.Key.ScheduleID),
			strings.Compare(a.Key.Period, b.Key.Period), strings.Compare(a.Kind, b.Kind))
	})
}

func (s *Store) TimerGet(ctx context.Context, key string) (store.Timer, error) {
	return getAs(ctx, s, s.t.Control, timerPK(key), skTimer, decodeTimer)
}

// timerShards reads the timers index per shard in due order (due time,
// then key: the order of its sort key), each shard stopping at limit.
func (s *Store) timerShards(ctx context.Context, shard func(n int) queryRange, limit int) ([]store.Timer, error) {
	shards, err := s.queryShards(ctx, shard, func(got []item) bool { return limit > 0 && len(got) >= limit })
	if err != nil {
		return nil, err
	}
	ts, err := decodeSorted(slices.Concat(shards...), decodeTimer, func(a, b store.Timer) int { return cmp.Or(a.DueAt.Compare(b.DueAt), strings.Compare(a.Key, b.Key)) })
	return limited(ts, limit), err
}

func (s *Store) TimerListDue(ctx context.Context, now time.Time, limit int) ([]store.Timer, error) {
	// "<due>$" is above every "<due>#<key>" of that instant.
	upTo := sortTime(now) + "$"
	return s.timerShards(ctx, func(n int) queryRange {
		return queryRange{table: s.t.Control, index: idxTimersDue, pk: fmt.Sprintf("DUE#%d", n), cond: "#sk < :a", values: []string{upTo}}
	}, limit)
}

func (s *Store) TimerNext(ctx context.Context) (store.Timer, error) {
	ts, err := s.timerShards(ctx, func(n int) queryRange {
		return queryRange{table: s.t.Control, index: idxTimersDue, pk: fmt.Sprintf("DUE#%d", n)}
	}, 1)
	if err != nil {
		return store.Timer{}, err
	}
	if len(ts) == 0 {
		return store.Timer{}, store.ErrNotFound
	}
	return ts[0], nil
}

func (s *Store) TimerList(ctx context.Context, p store.TimerListParams) ([]store.Timer, error) {
	return s.timerShards(ctx, func(n int) queryRange {
		if p.Kind != "" {
			return queryRange{table: s.t.Control, index: idxTimersByKind, pk: fmt.Sprintf("KIND#%s#%d", p.Kind, n)}
		}
		return queryRange{table: s.t.Control, index: idxTimersDue, pk: fmt.Sprintf("DUE#%d", n)}
	}, 0)
}

// Alert delivery bookkeeping: each record by its key within its sink.

func (s *Store) DeliveryCursorGet(ctx context.Context, sink string) (store.DeliveryCursor, error) {
	return getAs(ctx, s, s.t.Events, pkAlertCursors, sink, decodeDeliveryCursor)
}

func (s *Store) DeliveryCursorList(ctx context.Context) ([]store.DeliveryCursor, error) {
	items, err := s.queryAll(ctx, queryRange{table: s.t.Events, pk: pkAlertCursors})
	if err != nil {
		return nil, err
	}
	return decodeSorted(items, decodeDeliveryCursor, func(a, b store.DeliveryCursor) int { return strings.Compare(a.Sink, b.Sink) })
}

func (s *Store) DeadLetterList(ctx context.Context, sink string) ([]store.DeadLetter, error) {
	items, err := s.queryAll(ctx, queryRange{table: s.t.Events, pk: sinkPK(sink),
		cond: "begins_with(#sk, :a)", values: []string{skDeadPrefix}})
	if err != nil {
		return nil, err
	}
	return decodeSorted(items, decodeDeadLetter, func(a, b store.DeadLetter) int {
		return cmp.Or(a.At.Compare(b.At), a.EventTime.Compare(b.EventTime), strings.Compare(a.EventID, b.EventID))
	})
}

func (s *Store) AlertThreadGet(ctx context.Context, sink string, k run.Key) (store.AlertThread, error) {
	return getAs(ctx, s, s.t.Events, sinkPK(sink), threadSK(k), decodeThread)
}

func (s *Store) AlertSentGet(ctx context.Context, sink string, k run.Key, typ event.Type, hash string) (store.AlertSent, error) {
	return getAs(ctx, s, s.t.Events, sinkPK(sink), sentSK(k, string(typ), hash), decodeSent)
}

func (s *Store) AlertAlertedGet(ctx context.Context, sink string, k run.Key) (store.AlertAlerted, error) {
	return getAs(ctx, s, s.t.Events, sinkPK(sink), alertedSK(k), decodeAlerted)
}
