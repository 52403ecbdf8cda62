package dynamodb

import (
	"context"
	"errors"
	"sync"

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
// BackfillList, PipelineList, EventList: every page), issued concurrently with it.
// Every read is strongly consistent: each answers what the single read
// would; DynamoDB has no snapshot across items, and the commit's
// conditions hold the decision to what it read.
func (s *Store) Facts(ctx context.Context, q store.FactsQuery) (store.Facts, error) {
	q, f, err := q.Prepare("dynamodb")
	if err != nil {
		return store.Facts{}, err
	}
	var b pointReads
	for _, id := range q.Pipelines {
		b.add(pipelinePK(id), skConfig, func(it item) (err error) { f.Pipelines[id], err = decodePipeline(it); return err })
	}
	for _, r := range q.Sensors {
		b.add(pipelinePK(r.PipelineID), sensorStateSK(r.Key), func(it item) (err error) { f.Sensors[r], err = decodeSensor(it); return err })
	}
	for _, r := range q.Inboxes {
		// ErrNotFound (Prepare) until the item is found; an item of a
		// bad shape is the inbox's answer, not the read's.
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

	var items []item
	var batchErr error
	g := &rangeReads{ctx: ctx, slots: make(chan struct{}, factsQueries)}
	if len(b.keys) > 0 {
		g.wg.Go(func() { items, batchErr = s.batchGet(ctx, s.t.Control, b.keys) })
	}
	lists := []func() error{
		readLists(g, q.MarkersOf, s.MarkerListOf, f.Markers),
		readLists(g, q.Ledgers, s.LedgerList, f.Ledgers),
		readLists(g, q.RunLists, s.RunList, f.RunLists),
		readLists(g, q.SensorPrefixes, s.SensorListPrefix, f.SensorPrefixes),
		readLists(g, q.SensorsChanged, s.SensorListChanged, f.SensorsChanged),
		readLists(g, q.Backfills, s.BackfillList, f.Backfills),
	}
	var allErr error
	if q.AllPipelines {
		g.run(func() { f.AllPipelines, allErr = s.PipelineList(ctx) })
	}
	eventErrs := make([]error, len(q.EventLists))
	if len(q.EventLists) > 0 {
		f.EventPages = make([]store.EventPage, len(q.EventLists))
	}
	for i, p := range q.EventLists {
		g.run(func() { f.EventPages[i], eventErrs[i] = s.EventList(ctx, p) })
	}
	g.wg.Wait()
	if len(f.AllPipelines) == 0 {
		f.AllPipelines = nil
	}
	errs := append([]error{batchErr, allErr}, eventErrs...)
	for _, put := range lists {
		errs = append(errs, put())
	}
	if err := errors.Join(errs...); err != nil {
		return store.Facts{}, err
	}
	if err := b.decode(items); err != nil {
		return store.Facts{}, err
	}
	return f, nil
}

// rangeReads runs Facts' range reads (run, readLists) concurrently, at
// most cap(slots) at once, beside its point reads' BatchGetItem.
type rangeReads struct {
	ctx   context.Context
	slots chan struct{}
	wg    sync.WaitGroup
}

// run starts read on g once a slot is free.
func (g *rangeReads) run(read func()) {
	g.wg.Go(func() {
		g.slots <- struct{}{}
		defer func() { <-g.slots }()
		read()
	})
}

// readLists starts read(ctx, k) for each of keys on g. What it returns is
// called once g's reads are done: it files each non-empty list read under
// its key in into and returns the reads' errors (a Facts that fails
// returns no lists, so filing some first is harmless).
func readLists[K comparable, V any](g *rangeReads, keys []K, read func(context.Context, K) ([]V, error), into map[K][]V) func() error {
	lists := make([][]V, len(keys))
	errs := make([]error, len(keys))
	for i, k := range keys {
		g.run(func() { lists[i], errs[i] = read(g.ctx, k) })
	}
	return func() error {
		for i, k := range keys {
			if len(lists[i]) > 0 {
				into[k] = lists[i]
			}
		}
		return errors.Join(errs...)
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
