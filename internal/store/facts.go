package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
)

// FactsReader is the read of a decision's facts in one batch: every record
// an input's decision needs (issue #27: load the facts, make one pure
// decision, commit once), named by key, read in as few requests as the
// backend allows and from one consistent view where it has one. Every
// backend implements it (SQLite: one read transaction; PostgreSQL: one
// round trip; DynamoDB: one BatchGetItem with the period Queries beside
// it, strongly consistent). ReadFacts is how callers use it.
//
// It answers exactly what the port's single reads answer (PipelineGet,
// SensorGet, RunGet, TimerGet, MarkerListOf, BaselineGet, LedgerList,
// SilenceGet, and the range reads RunList, SensorListPrefix,
// SensorListChanged, BackfillList, PipelineList, EventList); storetest
// checks that on every backend. Its answer's maps are made for the call
// (NewFacts) and are the caller's to write into: the engine's facts
// rounds take them as their own.
type FactsReader interface {
	Facts(ctx context.Context, q FactsQuery) (Facts, error)
}

// SensorRef names a sensor of a pipeline: its stored state (Sensors), or
// its inbox item (Inboxes).
type SensorRef struct{ PipelineID, Key string }

// FactsQuery names the records a decision reads. A key named twice, in
// one list, is read once; a key named in two lists (a period's run, its
// markers and its ledger) is read for each. An empty query reads nothing.
type FactsQuery struct {
	Pipelines []string // pipeline rows (PipelineGet)
	// Sensors are stored sensor states (SensorGet): the rule keys and
	// their per-period forms a decision reads (schedule.PeriodKeys).
	Sensors []SensorRef
	// Inboxes are sensor inbox items: the item anyone writes, on a store
	// others write sensors into (DynamoDB's SENSOR#<key>), distinct from
	// the stored state Commit keeps. A store without an inbox answers
	// ErrNotFound for each.
	Inboxes   []SensorRef
	Runs      []run.Key
	Timers    []string  // timer keys (TimerGet)
	MarkersOf []run.Key // every marker of each period (MarkerListOf)
	Baselines []run.Key
	Ledgers   []run.Key // each period's rerun ledger (LedgerList)

	// Range reads, each answered as its single read answers it (its
	// order, its bounds, its refusal of a read no index serves): the
	// runs of a range of periods or the active ones (RunList: an
	// upstream's hours, a day's runs, a pipeline's active runs), the
	// sensors whose key starts with a prefix (SensorListPrefix: trigger
	// sensors of every period) and a pipeline's sensors changed since an
	// instant (SensorListChanged).
	RunLists       []RunListParams
	SensorPrefixes []SensorListPrefixParams
	SensorsChanged []SensorListChangedParams
	// Backfills are pipelines whose backfills are read (BackfillList:
	// oldest request first): what a backfill request, its cancel and its
	// timer decide on.
	Backfills []string
	Silences  []string // silences by id (SilenceGet)
	// AllPipelines reads every pipeline row, removed ones too
	// (PipelineList): what a config load checks a new upstream graph
	// against.
	AllPipelines bool
	// EventLists are pages of the event log (EventList), answered in
	// Facts.EventPages in the order asked: the events a silence's end
	// judges.
	EventLists []EventListParams
}

// Empty reports whether q names nothing.
func (q FactsQuery) Empty() bool {
	return len(q.Pipelines)+len(q.Sensors)+len(q.Inboxes)+len(q.Runs)+len(q.Timers)+
		len(q.MarkersOf)+len(q.Baselines)+len(q.Ledgers)+len(q.RunLists)+len(q.SensorPrefixes)+len(q.SensorsChanged)+len(q.Backfills)+len(q.Silences)+len(q.EventLists) == 0 && !q.AllPipelines
}

// Unique is q with each list's repeats left out (the first of each kept,
// in order): what a backend reads, each key once.
func (q FactsQuery) Unique() FactsQuery {
	return FactsQuery{Pipelines: uniq(q.Pipelines), Sensors: uniq(q.Sensors), Inboxes: uniq(q.Inboxes), Runs: uniq(q.Runs),
		Timers: uniq(q.Timers), MarkersOf: uniq(q.MarkersOf), Baselines: uniq(q.Baselines), Ledgers: uniq(q.Ledgers),
		RunLists: uniq(q.RunLists), SensorPrefixes: uniq(q.SensorPrefixes), SensorsChanged: uniq(q.SensorsChanged),
		Backfills: uniq(q.Backfills), Silences: uniq(q.Silences), AllPipelines: q.AllPipelines,
		EventLists: q.EventLists} // pages are not compared: each is read as asked
}

// Check is the error of the first range read q names that its single
// read refuses (RunListParams.Index, SensorListChangedParams.Index): a
// backend refuses the whole query, as the single read would.
func (q FactsQuery) Check() error {
	for _, p := range q.RunLists {
		if _, err := p.Index(); err != nil {
			return fmt.Errorf("facts: %w", err)
		}
	}
	for _, p := range q.SensorsChanged {
		if _, err := p.Index(); err != nil {
			return fmt.Errorf("facts: %w", err)
		}
	}
	return nil
}

// Prepare readies q for a backend's Facts, the same way on each: a range
// read its single read refuses fails the whole query (Check; the error
// names backend), each record is read once (Unique), and the Facts to
// fill (NewFacts) answer every inbox asked for with ErrNotFound — the
// answer of a store that has no inboxes, and of DynamoDB for an item it
// does not find.
func (q FactsQuery) Prepare(backend string) (FactsQuery, Facts, error) {
	if err := q.Check(); err != nil {
		return q, Facts{}, fmt.Errorf("%s: read %w", backend, err)
	}
	q = q.Unique()
	f := NewFacts()
	for _, r := range q.Inboxes {
		f.Inboxes[r] = InboxItem{Err: ErrNotFound}
	}
	return q, f, nil
}

func uniq[K comparable](xs []K) []K {
	if len(xs) < 2 {
		return xs
	}
	seen := make(map[K]bool, len(xs))
	out := make([]K, 0, len(xs))
	for _, x := range xs {
		if !seen[x] {
			seen[x] = true
			out = append(out, x)
		}
	}
	return out
}

// Facts is what a FactsQuery read. A record that does not exist is absent
// from its map (no ErrNotFound), and so is a period with no markers or no
// ledger entries and a range read that found nothing; every map is
// non-nil (NewFacts). A range read is under the params it was asked with. Inboxes is the
// exception: each inbox asked for is present, with Err saying why it has
// no content.
type Facts struct {
	Pipelines map[string]Pipeline
	Sensors   map[SensorRef]Sensor
	Inboxes   map[SensorRef]InboxItem
	Runs      map[run.Key]run.Run
	Timers    map[string]Timer
	Markers   map[run.Key][]Marker // sorted by kind, as MarkerListOf
	Baselines map[run.Key]Baseline
	Ledgers   map[run.Key][]LedgerEntry // oldest (lowest Seq) first, as LedgerList

	RunLists       map[RunListParams][]run.Run          // in RunList's order
	SensorPrefixes map[SensorListPrefixParams][]Sensor  // in SensorListPrefix's order
	SensorsChanged map[SensorListChangedParams][]Sensor // in SensorListChanged's order
	Backfills      map[string][]Backfill                // by pipeline, in BackfillList's order
	Silences       map[string]Silence                   // by id
	AllPipelines   []Pipeline                           // when asked: PipelineList's answer (by id); nil when none
	EventPages     []EventPage                          // EventLists' answers, in their order
}

// InboxItem is a sensor's inbox item as a FactsQuery read it: its content,
// or Err — ErrNotFound when there is none, the store's error for an item
// of a bad shape (DynamoDB: *ItemError).
type InboxItem struct {
	Data sensor.Object
	Err  error
}

// NewFacts returns Facts with every map made and empty: what an empty
// query reads, and what a backend fills.
func NewFacts() Facts {
	return Facts{
		Pipelines: map[string]Pipeline{},
		Sensors:   map[SensorRef]Sensor{},
		Inboxes:   map[SensorRef]InboxItem{},
		Runs:      map[run.Key]run.Run{},
		Timers:    map[string]Timer{},
		Markers:   map[run.Key][]Marker{},
		Baselines: map[run.Key]Baseline{},
		Ledgers:   map[run.Key][]LedgerEntry{},

		RunLists:       map[RunListParams][]run.Run{},
		SensorPrefixes: map[SensorListPrefixParams][]Sensor{},
		SensorsChanged: map[SensorListChangedParams][]Sensor{},
		Backfills:      map[string][]Backfill{},
		Silences:       map[string]Silence{},
	}
}

// ReadFacts answers q with st's Facts when it offers FactsReader, with the
// port's single reads otherwise (ReadFactsSingly).
func ReadFacts(ctx context.Context, st Store, q FactsQuery) (Facts, error) {
	if fr, ok := st.(FactsReader); ok {
		return fr.Facts(ctx, q)
	}
	return ReadFactsSingly(ctx, st, q)
}

// inboxReader is what a store with a sensor inbox offers (DynamoDB's
// SensorItemGet): ReadFactsSingly reads Inboxes with it.
type inboxReader interface {
	SensorItemGet(ctx context.Context, pipelineID, key string) (sensor.Object, error)
}

// ReadFactsSingly answers q one record at a time with the port's single
// reads: the meaning every FactsReader must keep (storetest compares them),
// and the answer of a store that offers no batch. Its reads are not one
// snapshot.
func ReadFactsSingly(ctx context.Context, st Store, q FactsQuery) (Facts, error) {
	if err := q.Check(); err != nil {
		return Facts{}, err
	}
	f := NewFacts()
	for _, id := range q.Pipelines {
		if err := readOne(f.Pipelines, id, func() (Pipeline, error) { return st.PipelineGet(ctx, id) }); err != nil {
			return Facts{}, fmt.Errorf("facts: pipeline %s: %w", id, err)
		}
	}
	for _, r := range q.Sensors {
		if err := readOne(f.Sensors, r, func() (Sensor, error) { return st.SensorGet(ctx, r.PipelineID, r.Key) }); err != nil {
			return Facts{}, fmt.Errorf("facts: sensor %s/%s: %w", r.PipelineID, r.Key, err)
		}
	}
	ir, hasInbox := st.(inboxReader)
	for _, r := range q.Inboxes {
		it := InboxItem{Err: ErrNotFound}
		if hasInbox {
			it.Data, it.Err = ir.SensorItemGet(ctx, r.PipelineID, r.Key)
		}
		f.Inboxes[r] = it
	}
	for _, k := range q.Runs {
		if err := readOne(f.Runs, k, func() (run.Run, error) { return st.RunGet(ctx, k) }); err != nil {
			return Facts{}, fmt.Errorf("facts: run %s/%s/%s: %w", k.PipelineID, k.ScheduleID, k.Period, err)
		}
	}
	for _, key := range q.Timers {
		if err := readOne(f.Timers, key, func() (Timer, error) { return st.TimerGet(ctx, key) }); err != nil {
			return Facts{}, fmt.Errorf("facts: timer %s: %w", key, err)
		}
	}
	for _, k := range q.MarkersOf {
		if err := readList(f.Markers, k, func() ([]Marker, error) { return st.MarkerListOf(ctx, k) }); err != nil {
			return Facts{}, fmt.Errorf("facts: markers of %s/%s/%s: %w", k.PipelineID, k.ScheduleID, k.Period, err)
		}
	}
	for _, k := range q.Baselines {
		if err := readOne(f.Baselines, k, func() (Baseline, error) { return st.BaselineGet(ctx, k) }); err != nil {
			return Facts{}, fmt.Errorf("facts: baseline %s/%s/%s: %w", k.PipelineID, k.ScheduleID, k.Period, err)
		}
	}
	for _, k := range q.Ledgers {
		if err := readList(f.Ledgers, k, func() ([]LedgerEntry, error) { return st.LedgerList(ctx, k) }); err != nil {
			return Facts{}, fmt.Errorf("facts: ledger of %s/%s/%s: %w", k.PipelineID, k.ScheduleID, k.Period, err)
		}
	}
	for _, p := range q.RunLists {
		if err := readList(f.RunLists, p, func() ([]run.Run, error) { return st.RunList(ctx, p) }); err != nil {
			return Facts{}, fmt.Errorf("facts: runs %+v: %w", p, err)
		}
	}
	for _, p := range q.SensorPrefixes {
		if err := readList(f.SensorPrefixes, p, func() ([]Sensor, error) { return st.SensorListPrefix(ctx, p) }); err != nil {
			return Facts{}, fmt.Errorf("facts: sensors of %s starting with %q: %w", p.PipelineID, p.Prefix, err)
		}
	}
	for _, p := range q.SensorsChanged {
		if err := readList(f.SensorsChanged, p, func() ([]Sensor, error) { return st.SensorListChanged(ctx, p) }); err != nil {
			return Facts{}, fmt.Errorf("facts: sensors changed %+v: %w", p, err)
		}
	}
	for _, id := range q.Backfills {
		if err := readList(f.Backfills, id, func() ([]Backfill, error) { return st.BackfillList(ctx, id) }); err != nil {
			return Facts{}, fmt.Errorf("facts: backfills of %s: %w", id, err)
		}
	}
	for _, id := range q.Silences {
		if err := readOne(f.Silences, id, func() (Silence, error) { return st.SilenceGet(ctx, id) }); err != nil {
			return Facts{}, fmt.Errorf("facts: silence %s: %w", id, err)
		}
	}
	for _, p := range q.EventLists {
		page, err := st.EventList(ctx, p)
		if err != nil {
			return Facts{}, fmt.Errorf("facts: events %+v: %w", p, err)
		}
		f.EventPages = append(f.EventPages, page)
	}
	if q.AllPipelines {
		ps, err := st.PipelineList(ctx)
		if err != nil {
			return Facts{}, fmt.Errorf("facts: pipelines: %w", err)
		}
		if len(ps) > 0 {
			f.AllPipelines = ps
		}
	}
	return f, nil
}

// readOne reads one record into m under k (a key already read is not read
// again); a record that does not exist is left out.
func readOne[K comparable, V any](m map[K]V, k K, get func() (V, error)) error {
	if _, done := m[k]; done {
		return nil
	}
	v, err := get()
	switch {
	case errors.Is(err, ErrNotFound):
		return nil
	case err != nil:
		return err
	}
	m[k] = v
	return nil
}

// readList reads a period's list, or a range, into m under k, left out
// when empty.
func readList[K comparable, V any](m map[K][]V, k K, list func() ([]V, error)) error {
	if _, done := m[k]; done {
		return nil
	}
	vs, err := list()
	if err == nil && len(vs) > 0 {
		m[k] = vs
	}
	return err
}
