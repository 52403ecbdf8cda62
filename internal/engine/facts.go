package engine

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// An input's facts: a sensor write, a run's step, a timer, an operator's
// rerun, a job-log record and a config load are decided as needs → one
// batch read → decision → one commit. The core names what the decision
// may read (package needs: needs.SensorWrite, needs.Step, needs.Timer,
// …) from the input and the configs known; loadFacts reads all of it with
// one store.ReadFacts; the decision then reads only from the facts. A
// read the needs did not name — a late read — is still answered (from
// the store, then kept in the facts) but counted (FactsStats.LateReads):
// the engine's tests and every simulate scenario fail when one happens.
//
// Rounds: the needs are first named with the configs the parse cache
// holds, whatever their version, before any row is read. They are named
// again with what the round read — the configs of the rows read, the
// runs and markers read — and what is new is read in a further round
// (FactsStats.SecondRounds, ExtraRounds; at most maxRounds): a cold or
// stale cache, an upstream not parsed yet, a succeeded run a write may
// rerun, a downstream index naming the pipelines to read. Range reads (an
// upstream's hours, a sensor changed since, a day's runs, a restored
// file's active runs), the calendars a config resolves with and the root
// causes a commit looks up (read as found, not counted) are not in the
// batch.

// facts are the stored facts one attempt of an input's decision reads.
type facts struct {
	e          *Engine
	asked      needs.Set
	pipelines  map[string]store.Pipeline
	sensorRecs map[needs.SensorRef]store.Sensor
	inboxes    map[needs.SensorRef]inboxItem
	runs       map[run.Key]run.Run
	timers     map[string]store.Timer
	markers    map[run.Key][]store.Marker
	baselines  map[run.Key]store.Baseline
	ledgers    map[run.Key][]store.LedgerEntry
	// parsed are the configs of the pipelines read, by id (nil: not
	// running), parsed once per attempt.
	parsed map[string]*loadedPipeline
	// direct: the facts of an input not decided from named needs; each
	// is read when first asked, not counted as late.
	direct bool
}

// directFacts are facts read as asked (see facts.direct).
func (e *Engine) directFacts() *facts { return &facts{e: e, direct: true} }

type inboxItem struct {
	data sensor.Object
	err  error // store.ErrNotFound: no item
}

// FactsStats counts how the engine's inputs read their facts.
type FactsStats struct {
	Inputs       int64 // decisions that loaded their facts (attempts)
	SecondRounds int64 // of those, the ones that read more than one round
	ExtraRounds  int64 // the rounds after the first, summed
	// LateReads are reads the needs did not name: each is a bug in a
	// needs function (internal/needs).
	LateReads int64
	LastLate  string // the last late read, for a test's message
}

type factsCounters struct {
	inputs, second, rounds, late atomic.Int64
	mu                           sync.Mutex
	lastLate                     string
}

// processFacts counts for every engine of the process: a test binary
// checks it once all its tests ran (ProcessFactsStats).
var processFacts factsCounters

func (c *factsCounters) stats() FactsStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return FactsStats{Inputs: c.inputs.Load(), SecondRounds: c.second.Load(), ExtraRounds: c.rounds.Load(), LateReads: c.late.Load(), LastLate: c.lastLate}
}

func (c *factsCounters) lateRead(what string) {
	c.late.Add(1)
	c.mu.Lock()
	c.lastLate = what
	c.mu.Unlock()
}

// FactsStats reports how the engine's inputs read their facts.
func (e *Engine) FactsStats() FactsStats { return e.fc.stats() }

// ProcessFactsStats is FactsStats summed over every engine of the
// process.
func ProcessFactsStats() FactsStats { return processFacts.stats() }

// cachedConfigs answers configs from the parse cache, whatever their
// version: what needs are named with before any row is read.
func (e *Engine) cachedConfigs(id string) *pipeline.Pipeline {
	if x := e.parses.get(id); x != nil {
		return x.p
	}
	return nil
}

// needsFunc names an input's needs (needs.SensorWrite, …) from the
// facts read so far (f.readRuns) and the configs known (cfg).
type needsFunc func(f *facts, cfg needs.Configs) needs.Set

// stepNeeds is needs.Step for the run key's step.
func (e *Engine) stepNeeds(step run.Step, key run.Key) needsFunc {
	return func(f *facts, cfg needs.Configs) needs.Set {
		return needs.Step(step, cfg(key.PipelineID), cfg, f.readRuns, key)
	}
}

// readRuns answers the runs read so far (needs.ReadRuns).
func (f *facts) readRuns(k run.Key) (*run.Run, bool) {
	if !slices.Contains(f.asked.Runs, k) {
		return nil, false
	}
	if r, ok := f.runs[k]; ok {
		return &r, true
	}
	return nil, true
}

// readMarkers answers the kinds of the markers read so far
// (needs.ReadMarkers).
func (f *facts) readMarkers(k run.Key) ([]string, bool) {
	if !slices.Contains(f.asked.MarkersOf, k) {
		return nil, false
	}
	var kinds []string
	for _, m := range f.markers[k] {
		kinds = append(kinds, m.Kind)
	}
	return kinds, true
}

// maxRounds bounds an input's rounds: the needs grow with what is read
// (the config, then the state of the runs it names), never for ever.
const maxRounds = 4

// loadFacts names an input's needs with need and reads them: one round
// when the parse cache's configs are those of the rows read and no run
// read asks for more, another for what a round's facts add.
func (e *Engine) loadFacts(ctx context.Context, need needsFunc) (*facts, error) {
	f := &facts{e: e}
	e.fc.inputs.Add(1)
	processFacts.inputs.Add(1)
	first := need(f, e.cachedConfigs)
	if err := f.read(ctx, first); err != nil {
		return nil, err
	}
	// The configs of the rows read (parsed, or the cache's when it holds
	// their version), for the second naming.
	read := func(id string) *pipeline.Pipeline {
		if _, ok := f.pipelines[id]; !ok {
			return nil
		}
		lp, err := f.pipelineOf(ctx, id)
		if err != nil || lp == nil {
			return nil
		}
		return lp.p
	}
	for round := 2; round <= maxRounds; round++ {
		more := need(f, read).Minus(f.asked)
		if more.Empty() {
			break
		}
		if round == 2 {
			e.fc.second.Add(1)
			processFacts.second.Add(1)
		}
		e.fc.rounds.Add(1)
		processFacts.rounds.Add(1)
		if err := f.read(ctx, more); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// read reads what n names into f (the batch read: store.ReadFacts).
func (f *facts) read(ctx context.Context, n needs.Set) error {
	n = n.Minus(f.asked)
	got, err := readNeeds(ctx, f.e.st, n)
	if err != nil {
		return err
	}
	f.asked.Add(n)
	f.merge(got)
	return nil
}

func (f *facts) merge(g *facts) {
	f.pipelines = mergeMap(f.pipelines, g.pipelines)
	f.sensorRecs = mergeMap(f.sensorRecs, g.sensorRecs)
	f.inboxes = mergeMap(f.inboxes, g.inboxes)
	f.runs = mergeMap(f.runs, g.runs)
	f.timers = mergeMap(f.timers, g.timers)
	f.markers = mergeMap(f.markers, g.markers)
	f.baselines = mergeMap(f.baselines, g.baselines)
	f.ledgers = mergeMap(f.ledgers, g.ledgers)
}

func mergeMap[K comparable, V any](dst, src map[K]V) map[K]V {
	if dst == nil {
		dst = map[K]V{}
	}
	for k, v := range src {
		dst[k] = v
	}
	return dst
}

// readNeeds reads n from st in one batch (store.ReadFacts).
func readNeeds(ctx context.Context, st store.Store, n needs.Set) (*facts, error) {
	q := store.FactsQuery{
		Pipelines: n.Pipelines, Runs: n.Runs, Timers: n.Timers,
		MarkersOf: n.MarkersOf, Baselines: n.Baselines, Ledgers: n.Ledgers,
		Sensors: storeRefs(n.Sensors), Inboxes: storeRefs(n.Inboxes),
	}
	if q.Empty() {
		return &facts{}, nil
	}
	got, err := store.ReadFacts(ctx, st, q)
	if err != nil {
		return nil, err
	}
	g := &facts{pipelines: got.Pipelines, runs: got.Runs, timers: got.Timers, markers: got.Markers, baselines: got.Baselines, ledgers: got.Ledgers,
		sensorRecs: make(map[needs.SensorRef]store.Sensor, len(got.Sensors)), inboxes: make(map[needs.SensorRef]inboxItem, len(got.Inboxes))}
	for r, s := range got.Sensors {
		g.sensorRecs[needs.SensorRef(r)] = s
	}
	for r, it := range got.Inboxes {
		g.inboxes[needs.SensorRef(r)] = inboxItem{data: it.Data, err: it.Err}
	}
	return g, nil
}

func storeRefs(rs []needs.SensorRef) []store.SensorRef {
	out := make([]store.SensorRef, len(rs))
	for i, r := range rs {
		out[i] = store.SensorRef(r)
	}
	return out
}

// late counts a read the needs did not name and reads it (a round of
// its own).
func (f *facts) late(ctx context.Context, what string, n needs.Set) error {
	f.e.fc.lateRead(what)
	processFacts.lateRead(what)
	f.e.log.DebugContext(ctx, "late read: the input's needs did not name it", "read", what)
	return f.read(ctx, n)
}

// ensure reads what n names unless asked says the facts hold it: a
// late read, counted, for an input's facts; a plain read for direct ones.
func (f *facts) ensure(ctx context.Context, asked bool, what string, n needs.Set) error {
	switch {
	case asked:
		return nil
	case f.direct:
		return f.read(ctx, n)
	}
	return f.late(ctx, what, n)
}

// pipelineRow returns the row of pipeline id (ok false: none stored).
func (f *facts) pipelineRow(ctx context.Context, id string) (store.Pipeline, bool, error) {
	if err := f.ensure(ctx, slices.Contains(f.asked.Pipelines, id), "pipeline "+id, needs.Pipeline(id)); err != nil {
		return store.Pipeline{}, false, err
	}
	row, ok := f.pipelines[id]
	return row, ok, nil
}

// pipelineOf is Engine.pipelineOf on the facts: nil when no pipeline of
// that id runs. Each config is resolved once per attempt.
func (f *facts) pipelineOf(ctx context.Context, id string) (*loadedPipeline, error) {
	if lp, ok := f.parsed[id]; ok {
		return lp, nil
	}
	row, ok, err := f.pipelineRow(ctx, id)
	if err != nil {
		return nil, err
	}
	var lp *loadedPipeline
	if ok {
		if lp, err = f.e.pipelineOfRow(ctx, row); err != nil {
			return nil, err
		}
	}
	f.parsed = mergeMap(f.parsed, map[string]*loadedPipeline{id: lp})
	return lp, nil
}

// run returns the stored run of key (nil: none), the caller's to change.
func (f *facts) run(ctx context.Context, key run.Key) (*run.Run, error) {
	if err := f.ensure(ctx, slices.Contains(f.asked.Runs, key), "run "+keyString(key), needs.Set{Runs: []run.Key{key}}); err != nil {
		return nil, err
	}
	if r, ok := f.runs[key]; ok {
		return &r, nil
	}
	return nil, nil
}

// timer returns the stored timer of key (nil: none).
func (f *facts) timer(ctx context.Context, key string) (*store.Timer, error) {
	if err := f.ensure(ctx, slices.Contains(f.asked.Timers, key), "timer "+key, needs.Set{Timers: []string{key}}); err != nil {
		return nil, err
	}
	if t, ok := f.timers[key]; ok {
		return &t, nil
	}
	return nil, nil
}

// markersOf returns every marker of the period key, sorted by kind.
func (f *facts) markersOf(ctx context.Context, key run.Key) ([]store.Marker, error) {
	if err := f.ensure(ctx, slices.Contains(f.asked.MarkersOf, key), "markers of "+keyString(key), needs.Set{MarkersOf: []run.Key{key}}); err != nil {
		return nil, err
	}
	return f.markers[key], nil
}

// marker returns the period's marker of kind (nil: none).
func (f *facts) marker(ctx context.Context, key run.Key, kind string) (*store.Marker, error) {
	ms, err := f.markersOf(ctx, key)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		if m.Kind == kind {
			return &m, nil
		}
	}
	return nil, nil
}

// hasMarker reports whether the period has a marker of kind.
func (f *facts) hasMarker(ctx context.Context, key run.Key, kind string) (bool, error) {
	m, err := f.marker(ctx, key, kind)
	return m != nil, err
}

// baseline returns the period's post-run baseline (nil: none).
func (f *facts) baseline(ctx context.Context, key run.Key) (*store.Baseline, error) {
	if err := f.ensure(ctx, slices.Contains(f.asked.Baselines, key), "baseline of "+keyString(key), needs.Set{Baselines: []run.Key{key}}); err != nil {
		return nil, err
	}
	if b, ok := f.baselines[key]; ok {
		return &b, nil
	}
	return nil, nil
}

// ledger returns the period's ledger, oldest first.
func (f *facts) ledger(ctx context.Context, key run.Key) ([]store.LedgerEntry, error) {
	if err := f.ensure(ctx, slices.Contains(f.asked.Ledgers, key), "ledger of "+keyString(key), needs.Set{Ledgers: []run.Key{key}}); err != nil {
		return nil, err
	}
	return f.ledgers[key], nil
}

// sensors returns the stored sensors of pipelineID among keys.
func (f *facts) sensors(ctx context.Context, pipelineID string, keys []string) ([]store.Sensor, error) {
	var missing needs.Set
	for _, k := range keys {
		if ref := (needs.SensorRef{PipelineID: pipelineID, Key: k}); !slices.Contains(f.asked.Sensors, ref) {
			missing.Sensors = append(missing.Sensors, ref)
		}
	}
	if len(missing.Sensors) > 0 {
		if err := f.ensure(ctx, false, fmt.Sprintf("sensors %s %v", pipelineID, missing.Sensors), missing); err != nil {
			return nil, err
		}
	}
	var out []store.Sensor
	for _, k := range keys {
		if s, ok := f.sensorRecs[needs.SensorRef{PipelineID: pipelineID, Key: k}]; ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// sensor returns a stored sensor (ok false: none).
func (f *facts) sensor(ctx context.Context, pipelineID, key string) (store.Sensor, bool, error) {
	ss, err := f.sensors(ctx, pipelineID, []string{key})
	if err != nil || len(ss) == 0 {
		return store.Sensor{}, false, err
	}
	return ss[0], true, nil
}

// reader is the store with the point reads store.ConditionFactsOf makes
// answered from the facts (each counted as the facts count it).
func (f *facts) reader() store.Store { return factsReader{Store: f.e.st, f: f} }

type factsReader struct {
	store.Store
	f *facts
}

func (r factsReader) PipelineGet(ctx context.Context, id string) (store.Pipeline, error) {
	row, ok, err := r.f.pipelineRow(ctx, id)
	return row, found(ok, err)
}

func (r factsReader) RunGet(ctx context.Context, k run.Key) (run.Run, error) {
	got, err := r.f.run(ctx, k)
	if got == nil {
		return run.Run{}, found(false, err)
	}
	return *got, nil
}

func (r factsReader) MarkerListOf(ctx context.Context, k run.Key) ([]store.Marker, error) {
	return r.f.markersOf(ctx, k)
}

// found is the error of a single read: err, or store.ErrNotFound when
// the record is absent.
func found(ok bool, err error) error {
	if err == nil && !ok {
		return store.ErrNotFound
	}
	return err
}

// inbox returns a sensor's inbox item: its content, or store.ErrNotFound
// (none), or the store's error for an item of a bad shape.
func (f *facts) inbox(ctx context.Context, ref needs.SensorRef) (sensor.Object, error) {
	if err := f.ensure(ctx, slices.Contains(f.asked.Inboxes, ref), "inbox "+ref.PipelineID+"/"+ref.Key, needs.Set{Inboxes: []needs.SensorRef{ref}}); err != nil {
		return sensor.Object{}, err
	}
	it := f.inboxes[ref]
	return it.data, it.err
}
