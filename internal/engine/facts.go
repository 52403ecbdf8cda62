package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// An input's facts: a sensor write, a run's step, a timer, an operator's
// input, a job-log record and a config load are decided as needs → one
// batch read → one pure decision → one commit. The core names what the
// decision may read (package needs: needs.SensorWrite, needs.Step,
// needs.Timer, …) from the input and the configs known; loadFacts reads
// all of it with one store.ReadFacts into a decide.Facts, the pure view
// the decision reads (decide.SensorWrite, decide.Step, decide.Timer, …;
// package decide imports no context and can read nothing else). A fact
// the view does not hold is not read by the decision: it answers a
// *decide.Missing, which supply reads, and the decision is made again
// from the start (decideOn). A point or range read the needs did not
// name — a late read — is counted (FactsStats.LateReads): the engine's
// tests and every simulate scenario fail when one happens.
//
// Rounds: the needs are first named with the configs the parse cache
// holds, whatever their version, before any row is read. They are named
// again with what the round read — the configs of the rows read, the
// runs and markers read — and what is new is read in a further round
// (FactsStats.SecondRounds, ExtraRounds; at most maxRounds): a cold or
// stale cache, an upstream not parsed yet, a succeeded run a write may
// rerun, a downstream index naming the pipelines to read. Range reads are
// in the batch as the needs name them (needs.RunRange: an upstream's
// hours, a day's runs; needs.ChangedSince: the circuit breaker's
// question; a pipeline's active runs), each answered as its single list
// read. What a decision finds as it goes by design is read in further
// rounds of the same facts, not counted (decide.Missing.Rounds): the
// upstream facts a commit's root causes are looked up on, a restored
// file's active runs and their step timers. The configs of the rows read
// are resolved into the view (Facts.Configs: parsed with the calendars
// they name, read beside the batch) when a decision first asks
// (decide.Missing.Configs).
//
// The operator's inputs name their needs the same way and read them in
// rounds of one batch: pause, resume (the plan's facts once the active
// runs and trigger sensors are read, decide.ResumeNeeds; a resume timer
// in the timer's rounds, decide.TimerNeeds), a step's handoff,
// DeleteSensor, a rerun request, explain, a backfill's request, cancel
// and timer step (decide.BackfillStepNeeds) (needs.Pause, Resume,
// HandOff, DeleteSensor, RerunRequest, Explain, BackfillRequest,
// BackfillCancel, BackfillStep). These are one decide call each: pause,
// resume, handoff, a rerun request, explain and a backfill's request,
// cancel and timer step (decide.Pause, Resume, HandOff, RerunRequest,
// Explain, BackfillRequest, BackfillCancel; the resume and backfill
// timers are decide.Timer's), a watchdog finding and pass record
// (needs.Finding, WatchdogPass: decide.Finding, WatchdogPass), an
// interrupted call found at start (needs.Interrupted: decide.Interrupted)
// and its recovery (the step's facts: decide.Step asks for the job
// lookup, the engine makes it, decide.Recovered decides from its answer),
// a silence's expiry and end timer, a window's end timer, the maintenance
// timers' arming and a silenced condition's alert at the end
// (needs.Silence, SilenceEnd, MaintenanceEnds, AfterSilence:
// decide.SilenceExpiry, Timer (both end timers), MaintenanceArm,
// AfterSilence; the events an end judges are pages of the event log,
// needs.Set.Events, the first named once the silence is read — a
// window's from the windows configured, needs.MaintenanceEnd — the next
// ones in further rounds), a config load (decide.ConfigLoadNeeds names
// needs.Load with the first-load time decide.ConfigLoad gives the row,
// judged on the stored row's config, resolved beside the batch when the
// content changed — a removed row's too — then named again) and its
// cycle check (needs.Load names every pipeline row,
// needs.Set.AllPipelines, when the config has upstream rules:
// decide.CycleCheck in decide.ConfigLoad), a config refusal and its
// clearing (needs.ConfigRefusal: decide.ConfigRefusal, ConfigAccepted),
// a rejected item's report (needs.Reject: decide.Reject), whether a begun
// trigger call is made (needs.Call: decide.Call), a sensor's deletion
// (needs.DeleteSensor: decide.DeleteSensor) and a pipeline forgotten
// (needs.Pipeline: decide.Forget).
//
// Not on named needs, and why: a new silence reads no fact (directFacts
// reads nothing: decide.SilenceCreate's write is conditioned on no
// silence of its id); the inputs' own enumerations — the due timers
// (TimerListDue), the active runs an engine's start recovers and the
// watchdog pass's snapshot (RunList, MarkerList, TimerList: what to
// decide about, each then decided on its needs); the calendars a
// calendar file defines (SetCalendars: store.FactsQuery holds no
// calendars; run.CalendarWrites decides each write) and the configs a
// decision resolves (withConfig: the row read names them); and the
// readers that decide nothing — Current, Backfills, Silences, the
// silence matcher, Pipelines and Running. Explain's last job output is a
// named page of the event log (needs.JobOutputEvents), read in its batch.

// facts are the stored facts one attempt of an input's decision reads:
// the pure view decisions read (decide.Facts) and the engine's reads
// that fill it.
type facts struct {
	e *Engine
	*decide.Facts
	// direct: the facts of an input not decided from named needs; each
	// is read when first asked, not counted as late.
	direct bool
}

func newFacts(e *Engine, direct bool) *facts {
	return &facts{e: e, Facts: &decide.Facts{}, direct: direct}
}

// directFacts are facts read as asked (see facts.direct).
func (e *Engine) directFacts() *facts { return newFacts(e, true) }

// FactsStats counts how the engine's inputs read their facts.
type FactsStats struct {
	Inputs       int64 // decisions that loaded their facts (attempts)
	SecondRounds int64 // of those, the ones that read more than one round
	ExtraRounds  int64 // the rounds after the first, summed
	// LateReads are reads the needs did not name: each is a bug in a
	// needs function (internal/needs).
	LateReads int64
	LastLate  string // the last late read, for a test's message
	// Redecided counts the decisions made again because they found a
	// fact missing (a late read, a config not resolved yet): each costs a
	// decision, not a read.
	Redecided int64
}

type factsCounters struct {
	inputs, second, rounds, late, redecided atomic.Int64
	mu                                      sync.Mutex
	lastLate                                string
}

// processFacts counts for every engine of the process: a test binary
// checks it once all its tests ran (ProcessFactsStats).
var processFacts factsCounters

func (c *factsCounters) stats() FactsStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return FactsStats{Inputs: c.inputs.Load(), SecondRounds: c.second.Load(), ExtraRounds: c.rounds.Load(), LateReads: c.late.Load(), LastLate: c.lastLate, Redecided: c.redecided.Load()}
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

// needsFunc names an input's needs (needs.SensorWrite, …) from the
// facts read so far (f.ReadRuns) and the configs known (cfg).
type needsFunc func(f *facts, cfg needs.Configs) needs.Set

// stepNeeds is needs.Step for the run key's step.
func (e *Engine) stepNeeds(step run.Step, key run.Key) needsFunc {
	return func(f *facts, cfg needs.Configs) needs.Set {
		return needs.Step(step, cfg(key.PipelineID), cfg, f.ReadRuns, key)
	}
}

// maxRounds bounds an input's rounds: the needs grow with what is read
// (the config, then the state of the runs it names), never for ever.
const maxRounds = 4

// loadFacts names an input's needs with need and reads them: one round
// when the parse cache's configs are those of the rows read and no run
// read asks for more, another for what a round's facts add.
func (e *Engine) loadFacts(ctx context.Context, need needsFunc) (*facts, error) {
	f := newFacts(e, false)
	e.fc.inputs.Add(1)
	processFacts.inputs.Add(1)
	first := need(f, e.parses.configs.Of) // the parse cache, whatever the versions
	if err := f.read(ctx, first); err != nil {
		return nil, err
	}
	if err := f.rounds(ctx, need); err != nil {
		return nil, err
	}
	return f, nil
}

// rounds names f's needs again with the configs of the rows read and
// reads what is new, round after round, until nothing is (at most
// maxRounds in all). An input whose decision turns out to be another's
// (a resume timer's resume) names the other's needs on the facts it
// loaded, in further rounds.
func (f *facts) rounds(ctx context.Context, need needsFunc) error {
	e := f.e
	// The configs of the rows read (parsed, or the cache's when it holds
	// their version), for the next naming: resolved here, before the needs
	// are named, so naming them reads nothing (needs.ConfigMap).
	read := needs.ConfigMap{}
	for round := 2; round <= maxRounds; round++ {
		if err := f.configsRead(ctx, read); err != nil {
			return err
		}
		more := need(f, read.Of).Minus(f.Asked)
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
			return err
		}
	}
	return nil
}

// configsRead adds to m the config of each pipeline row f read that m
// does not hold yet (nil: removed, or its config does not load).
func (f *facts) configsRead(ctx context.Context, m needs.ConfigMap) error {
	for _, id := range slices.Sorted(maps.Keys(f.Pipelines)) {
		if _, ok := m[id]; ok {
			continue
		}
		// decide.Facts.Pipeline's answer, resolved directly: a row read whose
		// config is not in the view yet is most of them, and asking the
		// view first made a Missing for each, to be supplied and asked
		// again.
		m[id] = nil
		if !pipeline.Running(f.Pipelines[id].RemovedAt) {
			continue
		}
		lp, err := f.config(ctx, id)
		if err != nil {
			return err
		}
		if lp != nil {
			m[id] = lp.P
		}
	}
	return nil
}

// read reads what n names into f (the batch read: store.ReadFacts).
func (f *facts) read(ctx context.Context, n needs.Set) error {
	n = n.Minus(f.Asked)
	if n.Empty() {
		return nil
	}
	q := store.FactsQuery{
		Pipelines: n.Pipelines, Runs: n.Runs, Timers: n.Timers,
		MarkersOf: n.MarkersOf, Baselines: n.Baselines, Ledgers: n.Ledgers,
		Sensors: storeRefs(n.Sensors), Inboxes: storeRefs(n.Inboxes),
	}
	for _, r := range n.RunRanges {
		q.RunLists = append(q.RunLists, runRangeParams(r))
	}
	for _, c := range n.Changed {
		q.SensorsChanged = append(q.SensorsChanged, changedParams(c))
	}
	for _, id := range n.ActiveRuns {
		q.RunLists = append(q.RunLists, activeParams(id))
	}
	for _, x := range n.Prefixes {
		q.SensorPrefixes = append(q.SensorPrefixes, store.SensorListPrefixParams(x))
	}
	q.Backfills, q.Silences, q.AllPipelines = n.Backfills, n.Silences, n.AllPipelines
	for _, r := range n.Events {
		p, err := eventListParams(r)
		if err != nil {
			return err
		}
		q.EventLists = append(q.EventLists, p)
	}
	got, err := store.ReadFacts(ctx, f.e.st, q)
	if err != nil {
		return err
	}
	f.Asked.Add(n)
	v := f.Facts
	v.Pipelines = mergeMap(v.Pipelines, got.Pipelines)
	v.Runs = mergeMap(v.Runs, got.Runs)
	v.Timers = mergeMap(v.Timers, got.Timers)
	v.Markers = mergeMap(v.Markers, got.Markers)
	v.Baselines = mergeMap(v.Baselines, got.Baselines)
	v.Ledgers = mergeMap(v.Ledgers, got.Ledgers)
	if v.Sensors == nil {
		v.Sensors = map[needs.SensorRef]store.Sensor{}
	}
	for r, s := range got.Sensors {
		v.Sensors[needs.SensorRef(r)] = s
	}
	if v.Inboxes == nil {
		v.Inboxes = map[needs.SensorRef]decide.Inbox{}
	}
	for r, it := range got.Inboxes {
		v.Inboxes[needs.SensorRef(r)] = decide.Inbox{Data: it.Data, Err: it.Err}
	}
	for _, r := range n.RunRanges {
		setKey(&v.RunRanges, r, got.RunLists[runRangeParams(r)])
	}
	for _, c := range n.Changed {
		setKey(&v.Changed, c, len(got.SensorsChanged[changedParams(c)]) > 0)
	}
	for _, id := range n.ActiveRuns {
		setKey(&f.Active, id, got.RunLists[activeParams(id)])
	}
	for _, x := range n.Prefixes {
		setKey(&v.Prefixed, x, got.SensorPrefixes[store.SensorListPrefixParams(x)])
	}
	for _, id := range n.Backfills {
		setKey(&v.Backfills, id, got.Backfills[id])
	}
	v.Silences = mergeMap(v.Silences, got.Silences)
	for i, r := range n.Events {
		setKey(&v.Events, r, got.EventPages[i])
	}
	if n.AllPipelines {
		// Each row listed is read: the rows a decision looks up by id.
		v.AllPipelines = got.AllPipelines
		for _, row := range got.AllPipelines {
			if _, ok := v.Pipelines[row.ID]; !ok && !slices.Contains(f.Asked.Pipelines, row.ID) {
				v.Pipelines[row.ID] = row
				f.Asked.Pipelines = append(f.Asked.Pipelines, row.ID)
			}
		}
	}
	return nil
}

// eventListParams is the store's read of the page r names.
func eventListParams(r needs.EventRange) (store.EventListParams, error) {
	p := store.EventListParams{PipelineID: r.PipelineID, Period: r.Period, Since: r.Since, Limit: r.Limit}
	if r.Types != "" {
		for _, t := range strings.Split(r.Types, ",") {
			p.Types = append(p.Types, event.Type(t))
		}
	}
	if r.After != "" {
		var err error
		if p.After, err = store.ParseCursor(r.After); err != nil {
			return store.EventListParams{}, fmt.Errorf("engine: events %+v: %w", r, err)
		}
	}
	return p, nil
}

// activeParams is the store's read of a pipeline's active runs (every
// pipeline's for "").
func activeParams(pipelineID string) store.RunListParams {
	return store.RunListParams{PipelineID: pipelineID, ActiveOnly: true}
}

// runRangeParams is the store's read of a range of runs.
func runRangeParams(r needs.RunRange) store.RunListParams {
	return store.RunListParams{PipelineID: r.PipelineID, ScheduleID: r.ScheduleID, PeriodFrom: r.From, PeriodTo: r.To}
}

// changedParams is the store's read answering c: one sensor of the
// pipeline changed after c.Since (ChangedAt >= Since+1ns: stored times
// keep nanoseconds).
func changedParams(c needs.ChangedSince) store.SensorListChangedParams {
	return store.SensorListChangedParams{PipelineID: c.PipelineID, Since: c.Since.Add(time.Nanosecond), Limit: 1}
}

// mergeMap adds src's entries to dst. A nil dst takes src itself: the
// maps of a store's answer are the facts' own (a round's first read of a
// kind was a copy, half a gigabyte of a simulation's allocations).
func mergeMap[K comparable, V any](dst, src map[K]V) map[K]V {
	if dst == nil && src != nil {
		return src
	}
	if dst == nil {
		dst = map[K]V{}
	}
	for k, v := range src {
		dst[k] = v
	}
	return dst
}

// setKey sets (*m)[k], making *m when it is nil.
func setKey[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil {
		*m = map[K]V{}
	}
	(*m)[k] = v
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

// maxSupplies bounds the rounds one decision asks for (decide.Missing):
// each names facts not read yet, never for ever.
const maxSupplies = 64

// supply reads what a decision found missing: a read the needs did not
// name, a point or a range (late, for an input's facts), a config to
// resolve, the facts a root cause is looked up on.
func (f *facts) supply(ctx context.Context, m *decide.Missing) error {
	m.Needs.Add(needs.Set{RunRanges: m.RunRanges, Changed: m.Changed})
	if !m.Needs.Empty() {
		var err error
		if f.direct {
			err = f.read(ctx, m.Needs)
		} else {
			err = f.late(ctx, describe(m.Needs), m.Needs)
		}
		if err != nil {
			return err
		}
	}
	if err := f.read(ctx, m.Rounds); err != nil {
		return err
	}
	for _, id := range m.Configs {
		if _, err := f.config(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// describe names what n names, for a late read's message.
func describe(n needs.Set) string {
	var parts []string
	add := func(what string, l int, v any) {
		if l > 0 {
			parts = append(parts, fmt.Sprintf("%s %v", what, v))
		}
	}
	add("pipelines", len(n.Pipelines), n.Pipelines)
	add("sensors", len(n.Sensors), n.Sensors)
	add("inboxes", len(n.Inboxes), n.Inboxes)
	add("runs", len(n.Runs), n.Runs)
	add("timers", len(n.Timers), n.Timers)
	add("markers of", len(n.MarkersOf), n.MarkersOf)
	add("baselines", len(n.Baselines), n.Baselines)
	add("ledgers", len(n.Ledgers), n.Ledgers)
	add("run ranges", len(n.RunRanges), n.RunRanges)
	add("sensors changed", len(n.Changed), n.Changed)
	add("active runs of", len(n.ActiveRuns), n.ActiveRuns)
	add("sensors by prefix", len(n.Prefixes), n.Prefixes)
	add("backfills of", len(n.Backfills), n.Backfills)
	add("silences", len(n.Silences), n.Silences)
	if n.AllPipelines {
		parts = append(parts, "every pipeline")
	}
	add("event pages", len(n.Events), n.Events)
	return strings.Join(parts, ", ")
}

// decideOn runs a decision on f until it finds nothing missing,
// supplying what it finds missing in between: the decision must start
// afresh each time (a new outcome).
func (f *facts) decideOn(ctx context.Context, decision func() error) error {
	for i := 0; ; i++ {
		err := decision()
		m, ok := decide.AsMissing(err)
		if !ok || i == maxSupplies {
			return err
		}
		if err := f.supply(ctx, m); err != nil {
			return err
		}
	}
}

// resolve resolves the config of each running pipeline whose row the
// facts hold (none is read): the one an input is about, so that its
// decision finds it and is made once, not again for a Missing config.
func (f *facts) resolve(ctx context.Context, ids ...string) error {
	for _, id := range ids {
		if row, ok := f.Pipelines[id]; !ok || !pipeline.Running(row.RemovedAt) {
			continue
		}
		if _, err := f.config(ctx, id); err != nil {
			return err
		}
	}
	return nil
}

// decide is decideOn for an input's decision (decide.SensorWrite,
// decide.Step, …), counting the times it is made again
// (FactsStats.Redecided).
func (f *facts) decide(ctx context.Context, decision func() error) error {
	n := 0
	err := f.decideOn(ctx, func() error {
		n++
		return decision()
	})
	if n > 1 {
		f.e.fc.redecided.Add(int64(n - 1))
		processFacts.redecided.Add(int64(n - 1))
	}
	return err
}

// get reads one fact through the view, supplying it when missing.
func get[T any](ctx context.Context, f *facts, read func() (T, error)) (T, error) {
	var v T
	err := f.decideOn(ctx, func() error {
		var err error
		v, err = read()
		return err
	})
	return v, err
}

// pipelineRow returns the row of pipeline id (ok false: none stored).
func (f *facts) pipelineRow(ctx context.Context, id string) (store.Pipeline, bool, error) {
	var ok bool
	row, err := get(ctx, f, func() (store.Pipeline, error) {
		var err error
		var row store.Pipeline
		row, ok, err = f.PipelineRow(id)
		return row, err
	})
	return row, ok, err
}

// loadFor is loadFacts for an input about pipeline id, its config
// resolved into the view (resolve) so that the decision finds it and is
// made once.
func (e *Engine) loadFor(ctx context.Context, id string, need needsFunc) (*facts, error) {
	f, err := e.loadFacts(ctx, need)
	if err != nil {
		return nil, err
	}
	return f, f.resolve(ctx, id)
}

// decideWith makes an input's decision on b's facts (facts.decide, with
// the rounds of what it finds missing): entry is a decide entry
// (decide.SensorWrite, decide.Step, …) called with in and now; its
// outcome becomes b's and its answer is returned.
func decideWith[In, T any](ctx context.Context, b *batch, entry func(In, *decide.Facts, time.Time) (*decide.Outcome, T, error), in In, now time.Time) (T, error) {
	var v T
	err := b.f.decide(ctx, func() error {
		var err error
		b.Outcome, v, err = entry(in, b.f.Facts, now)
		return err
	})
	return v, err
}

// decideOutcome is decideWith for an entry that answers its outcome
// alone.
func decideOutcome(ctx context.Context, b *batch, entry func(*decide.Facts) (*decide.Outcome, error)) error {
	return b.f.decide(ctx, func() error {
		var err error
		b.Outcome, err = entry(b.f.Facts)
		return err
	})
}

// config resolves the config of pipeline id's row, removed or not (nil:
// no row, or its config does not load), once per attempt: it is kept in
// the view's Configs.
func (f *facts) config(ctx context.Context, id string) (*loadedPipeline, error) {
	if lp, ok := f.Configs[id]; ok {
		return lp, nil
	}
	row, ok, err := f.pipelineRow(ctx, id)
	if err != nil {
		return nil, err
	}
	var lp *loadedPipeline
	if ok {
		if lp, err = f.e.withConfig(ctx, row, nil); err != nil {
			return nil, err
		}
	}
	setKey(&f.Configs, id, lp)
	return lp, nil
}
