package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

var _ store.FactsReader = (*Store)(nil)

// factsQueries bounds the Queries (markers, ledgers, range reads) one
// Facts call runs at once: a decision names a few periods; a caller that
// names many does not open a connection per period.
const factsQueries = 8

// Facts reads q's records with point keys — pipeline rows, sensor states,
// inbox items, runs, timers, baselines: all in the control table — in one
// BatchGetItem (batchGet: at most 100 keys a call, unprocessed keys
// retried), and each period's markers and ledger with a Query of its
// sort-key range (MarkerListOf, LedgerList), and each range read with its
// single read's Queries (RunList, SensorListPrefix, SensorListChanged,
// BackfillList: every page), issued concurrently with it.
// Every read is strongly consistent: each answers what the single read
// would; DynamoDB has no snapshot across items, and the commit's
// conditions hold the decision to what it read.
func (s *Store) Facts(ctx context.Context, q store.FactsQuery) (store.Facts, error) {
	if err := q.Check(); err != nil {
		return store.Facts{}, fmt.Errorf("dynamodb: read %w", err)
	}
	q = q.Unique()
	f := store.NewFacts()
	var b pointReads
	for _, id := range q.Pipelines {
		b.add(pipelinePK(id), skConfig, func(it item) (err error) { f.Pipelines[id], err = decodePipeline(it); return err })
	}
	for _, r := range q.Sensors {
		b.add(pipelinePK(r.PipelineID), sensorStateSK(r.Key), func(it item) (err error) { f.Sensors[r], err = decodeSensor(it); return err })
	}
	for _, r := range q.Inboxes {
		f.Inboxes[r] = store.InboxItem{Err: store.ErrNotFound}
		// An item of a bad shape is the inbox's answer, not the read's.
		b.add(pipelinePK(r.PipelineID), skSensorPrefix+r.Key, func(it item) error {
			data, err := decodeInbox(r.PipelineID, r.Key, it)
			f.Inboxes[r] = store.InboxItem{Data: data, Err: err}
			return nil
		})
	}
	for _, k := range q.Runs {
		b.add(pipelinePK(k.PipelineID), runSK(k.ScheduleID, k.Period), func(it item) (err error) { f.Runs[k], err = decodeRun(it); return err })
	}
	for _, key := range q.Timers {
		b.add(timerPK(key), skTimer, func(it item) (err error) { f.Timers[key], err = decodeTimer(it); return err })
	}
	for _, k := range q.Baselines {
		b.add(pipelinePK(k.PipelineID), baselineSK(k), func(it item) (err error) { f.Baselines[k], err = decodeBaseline(it); return err })
	}
	for _, id := range q.Silences {
		b.add(pkSilences, skSilencePrefix+id, func(it item) (err error) { f.Silences[id], err = decodeSilence(it); return err })
	}

	markers := make([][]store.Marker, len(q.MarkersOf))
	ledgers := make([][]store.LedgerEntry, len(q.Ledgers))
	runLists := make([][]run.Run, len(q.RunLists))
	prefixes := make([][]store.Sensor, len(q.SensorPrefixes))
	changed := make([][]store.Sensor, len(q.SensorsChanged))
	backfills := make([][]store.Backfill, len(q.Backfills))
	var items []item
	errs := make([]error, 1+len(markers)+len(ledgers)+len(runLists)+len(prefixes)+len(changed)+len(backfills))
	var wg sync.WaitGroup
	if len(b.keys) > 0 {
		wg.Go(func() { items, errs[0] = s.batchGet(ctx, s.t.Control, b.keys) })
	}
	slots := make(chan struct{}, factsQueries)
	period := func(i int, read func() error) {
		wg.Go(func() {
			slots <- struct{}{}
			defer func() { <-slots }()
			errs[i] = read()
		})
	}
	for i, k := range q.MarkersOf {
		period(1+i, func() (err error) { markers[i], err = s.MarkerListOf(ctx, k); return err })
	}
	next := 1 + len(markers)
	for i, k := range q.Ledgers {
		period(next+i, func() (err error) { ledgers[i], err = s.LedgerList(ctx, k); return err })
	}
	next += len(ledgers)
	for i, p := range q.RunLists {
		period(next+i, func() (err error) { runLists[i], err = s.RunList(ctx, p); return err })
	}
	next += len(runLists)
	for i, p := range q.SensorPrefixes {
		period(next+i, func() (err error) { prefixes[i], err = s.SensorListPrefix(ctx, p); return err })
	}
	next += len(prefixes)
	for i, p := range q.SensorsChanged {
		period(next+i, func() (err error) { changed[i], err = s.SensorListChanged(ctx, p); return err })
	}
	next += len(changed)
	for i, id := range q.Backfills {
		period(next+i, func() (err error) { backfills[i], err = s.BackfillList(ctx, id); return err })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return store.Facts{}, err
	}
	if err := b.decode(items); err != nil {
		return store.Facts{}, err
	}
	putLists(f.Markers, q.MarkersOf, markers)
	putLists(f.Ledgers, q.Ledgers, ledgers)
	putLists(f.RunLists, q.RunLists, runLists)
	putLists(f.SensorPrefixes, q.SensorPrefixes, prefixes)
	putLists(f.SensorsChanged, q.SensorsChanged, changed)
	putLists(f.Backfills, q.Backfills, backfills)
	return f, nil
}

// putLists files each non-empty list read under its key (keys[i]: lists[i]).
func putLists[K comparable, V any](m map[K][]V, keys []K, lists [][]V) {
	for i, k := range keys {
		if len(lists[i]) > 0 {
			m[k] = lists[i]
		}
	}
}

// pointReads are the keys of one BatchGetItem, each with what decodes the
// item read under it.
type pointReads struct {
	keys []item
	put  map[[2]string][]func(item) error
}

func (b *pointReads) add(pk, sk string, put func(item) error) {
	if b.put == nil {
		b.put = map[[2]string][]func(item) error{}
	}
	k := [2]string{pk, sk}
	if _, dup := b.put[k]; !dup {
		b.keys = append(b.keys, keyOf(pk, sk))
	}
	b.put[k] = append(b.put[k], put)
}

// decode hands each item read to what its key was added with.
func (b *pointReads) decode(items []item) error {
	for _, it := range items {
		r := readItem(it)
		for _, put := range b.put[[2]string{r.text(attrPK), r.text(attrSK)}] {
			if err := put(it); err != nil {
				return err
			}
		}
	}
	return nil
}
