package decide

import (
	"errors"
	"fmt"
	"slices"

	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// Facts are the stored facts one attempt of an input's decision reads: a
// view of what the engine loaded, by key. A key the engine asked for
// (Asked) and the store did not have is loaded and absent; a key not
// asked for is not loaded, and reading it is a *Missing error.
type Facts struct {
	Asked     needs.Set
	Pipelines map[string]store.Pipeline
	Sensors   map[needs.SensorRef]store.Sensor
	Inboxes   map[needs.SensorRef]Inbox
	Runs      map[run.Key]run.Run
	Timers    map[string]store.Timer
	Markers   map[run.Key][]store.Marker
	Baselines map[run.Key]store.Baseline
	Ledgers   map[run.Key][]store.LedgerEntry
	// Configs are the configs of the pipeline rows read, resolved by the
	// engine (parsed with their calendars), by id; nil: no row, or its
	// stored config does not load.
	Configs map[string]*Pipeline
	// RunRanges and Changed are the answers of range reads (store.RunList
	// over periods, store.SensorListChanged), by request.
	RunRanges map[RunRange][]run.Run
	Changed   map[ChangedSince]bool
	// Active are the active runs of pipelines, by pipeline id
	// (needs.Set.ActiveRuns: store.RunList's ActiveOnly).
	Active map[string][]run.Run
	// Prefixed are the sensors of a key prefix, sorted by key
	// (needs.Set.Prefixes: store.SensorListPrefix).
	Prefixed map[needs.SensorPrefix][]store.Sensor
	// Backfills are pipelines' backfills, oldest request first, by
	// pipeline id (needs.Set.Backfills: store.BackfillList).
	Backfills map[string][]store.Backfill
	// Silences are the silences read, by id (needs.Silence).
	Silences map[string]store.Silence
	// AllPipelines are every pipeline row, by id (needs.Set.AllPipelines:
	// store.PipelineList); each is in Pipelines too.
	AllPipelines []store.Pipeline
	// Events are pages of the event log, by range (needs.Set.Events:
	// store.EventList).
	Events map[needs.EventRange]store.EventPage
}

// Inbox is a sensor's inbox item as read: its content, or Err
// (store.ErrNotFound: no item; the store's error for a bad shape).
type Inbox struct {
	Data sensor.Object
	Err  error
}

// Pipeline is what one decision knows about its pipeline: the config,
// the stored row and the calendars the config was resolved with (the
// commit's conditions).
type Pipeline struct {
	P    *pipeline.Pipeline
	Row  store.Pipeline
	Cals []store.CalendarCheck
}

// RunRange names a pipeline's runs of a range of periods: the range
// read package needs names (store.RunList; To empty: to the end).
type RunRange = needs.RunRange

// ChangedSince asks whether any sensor of a pipeline changed after Since
// (as the decision read it: a stored run's end): the read package needs
// names (store.SensorListChanged).
type ChangedSince = needs.ChangedSince

// Missing is the answer of a decision that needs a fact the facts do not
// hold: the engine reads it and decides again.
type Missing struct {
	// Needs are point reads: a need package needs did not name (a late
	// read, unless the facts are read as asked).
	Needs needs.Set
	// Configs are pipelines whose row is read but whose config is not
	// resolved yet.
	Configs []string
	// Rounds are point reads the needs do not name by design: the
	// upstream facts a root cause is looked up on (not late).
	Rounds    needs.Set
	RunRanges []RunRange
	Changed   []ChangedSince
}

func (m *Missing) Error() string {
	return fmt.Sprintf("decide: facts missing: %+v configs %v rounds %+v ranges %v changed %v", m.Needs, m.Configs, m.Rounds, m.RunRanges, m.Changed)
}

// AsRounds makes m's point reads further rounds (not late): facts a
// decision finds as it goes by design.
func (m *Missing) AsRounds() *Missing {
	m.Rounds.Add(m.Needs)
	m.Needs = needs.Set{}
	return m
}

// AsMissing returns the *Missing err is, if it is one.
func AsMissing(err error) (*Missing, bool) {
	var m *Missing
	ok := errors.As(err, &m)
	return m, ok
}

func missing(n needs.Set) error { return &Missing{Needs: n} }

// PipelineRow returns the row of pipeline id (ok false: none stored).
func (f *Facts) PipelineRow(id string) (store.Pipeline, bool, error) {
	if !slices.Contains(f.Asked.Pipelines, id) {
		return store.Pipeline{}, false, missing(needs.Pipeline(id))
	}
	row, ok := f.Pipelines[id]
	return row, ok, nil
}

// Pipeline returns the pipeline of id as a decision reads it: nil when
// none of that id runs (never loaded, its file removed, or its stored
// config no longer loads).
func (f *Facts) Pipeline(id string) (*Pipeline, error) {
	row, ok, err := f.PipelineRow(id)
	if err != nil || !ok || !pipeline.Running(row.RemovedAt) {
		return nil, err
	}
	return f.config(id)
}

// KnownPipeline is Pipeline for an input about a pipeline that must run:
// Unknown(id) when none of that id does.
func (f *Facts) KnownPipeline(id string) (*Pipeline, error) {
	lp, err := f.Pipeline(id)
	if err == nil && lp == nil {
		err = Unknown(id)
	}
	return lp, err
}

// CallingPipeline returns the pipeline a trigger call is made and
// recorded with: a call begun is made, and its answer recorded, even
// when the pipeline was paused or its file removed meanwhile, on the row
// as it is now with the config stored in it (nil: no row, or its config
// does not load).
func (f *Facts) CallingPipeline(id string) (*Pipeline, error) {
	if _, ok, err := f.PipelineRow(id); err != nil || !ok {
		return nil, err
	}
	return f.config(id)
}

// runningConfigs returns the configs of the pipelines running, by id
// (needs.Set.AllPipelines; a stored config that no longer loads is not
// running).
func (f *Facts) runningConfigs() ([]*pipeline.Pipeline, error) {
	if !f.Asked.AllPipelines {
		return nil, missing(needs.Set{AllPipelines: true})
	}
	var out []*pipeline.Pipeline
	var lack Missing
	for _, row := range f.AllPipelines {
		if !pipeline.Running(row.RemovedAt) {
			continue
		}
		lp, ok := f.Configs[row.ID]
		switch {
		case !ok:
			lack.Configs = append(lack.Configs, row.ID)
		case lp != nil:
			out = append(out, lp.P)
		}
	}
	if len(lack.Configs) > 0 {
		return nil, &lack
	}
	return out, nil
}

func (f *Facts) config(id string) (*Pipeline, error) {
	lp, ok := f.Configs[id]
	if !ok {
		return nil, &Missing{Configs: []string{id}}
	}
	return lp, nil
}

// Run returns the stored run of key (nil: none), the caller's to change.
func (f *Facts) Run(key run.Key) (*run.Run, error) {
	return stored(f.Asked.Runs, f.Runs, key, needs.Set{Runs: []run.Key{key}})
}

// stored answers the record of key in m, a copy (nil: none stored), when
// asked holds key; a *Missing naming need otherwise.
func stored[K comparable, V any](asked []K, m map[K]V, key K, need needs.Set) (*V, error) {
	if !slices.Contains(asked, key) {
		return nil, missing(need)
	}
	if v, ok := m[key]; ok {
		return &v, nil
	}
	return nil, nil
}

// Timer returns the stored timer of key (nil: none).
func (f *Facts) Timer(key string) (*store.Timer, error) {
	return stored(f.Asked.Timers, f.Timers, key, needs.Set{Timers: []string{key}})
}

// MarkersOf returns every marker of the period key, sorted by kind.
func (f *Facts) MarkersOf(key run.Key) ([]store.Marker, error) {
	if !slices.Contains(f.Asked.MarkersOf, key) {
		return nil, missing(needs.Set{MarkersOf: []run.Key{key}})
	}
	return f.Markers[key], nil
}

// Marker returns the period's marker of kind (nil: none).
func (f *Facts) Marker(key run.Key, kind string) (*store.Marker, error) {
	ms, err := f.MarkersOf(key)
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

// HasMarker reports whether the period has a marker of kind.
func (f *Facts) HasMarker(key run.Key, kind string) (bool, error) {
	m, err := f.Marker(key, kind)
	return m != nil, err
}

// Baseline returns the period's post-run baseline (nil: none).
func (f *Facts) Baseline(key run.Key) (*store.Baseline, error) {
	return stored(f.Asked.Baselines, f.Baselines, key, needs.Set{Baselines: []run.Key{key}})
}

// Ledger returns the period's ledger, oldest first.
func (f *Facts) Ledger(key run.Key) ([]store.LedgerEntry, error) {
	if !slices.Contains(f.Asked.Ledgers, key) {
		return nil, missing(needs.Set{Ledgers: []run.Key{key}})
	}
	return f.Ledgers[key], nil
}

// SensorsOf returns the stored sensors of pipelineID among keys.
func (f *Facts) SensorsOf(pipelineID string, keys []string) ([]store.Sensor, error) {
	var lack needs.Set
	for _, k := range keys {
		if ref := (needs.SensorRef{PipelineID: pipelineID, Key: k}); !slices.Contains(f.Asked.Sensors, ref) {
			lack.Sensors = append(lack.Sensors, ref)
		}
	}
	if len(lack.Sensors) > 0 {
		return nil, missing(lack)
	}
	var out []store.Sensor
	for _, k := range keys {
		if s, ok := f.Sensors[needs.SensorRef{PipelineID: pipelineID, Key: k}]; ok {
			out = append(out, s)
		}
	}
	return out, nil
}

// Sensor returns a stored sensor (ok false: none).
func (f *Facts) Sensor(pipelineID, key string) (store.Sensor, bool, error) {
	ss, err := f.SensorsOf(pipelineID, []string{key})
	if err != nil || len(ss) == 0 {
		return store.Sensor{}, false, err
	}
	return ss[0], true, nil
}

// InboxOf returns a sensor's inbox item: its content, or
// store.ErrNotFound (none), or the store's error for a bad shape.
func (f *Facts) InboxOf(ref needs.SensorRef) (sensor.Object, error) {
	if !slices.Contains(f.Asked.Inboxes, ref) {
		return sensor.Object{}, missing(needs.Set{Inboxes: []needs.SensorRef{ref}})
	}
	it := f.Inboxes[ref]
	return it.Data, it.Err
}

// RunsIn returns the runs of a range of periods (a range read).
func (f *Facts) RunsIn(r RunRange) ([]run.Run, error) {
	got, ok := f.RunRanges[r]
	if !ok {
		return nil, &Missing{RunRanges: []RunRange{r}}
	}
	return got, nil
}

// ChangedAfter reports whether any sensor of the pipeline changed after
// the time c names (a range read).
func (f *Facts) ChangedAfter(c ChangedSince) (bool, error) {
	got, ok := f.Changed[c]
	if !ok {
		return false, &Missing{Changed: []ChangedSince{c}}
	}
	return got, nil
}

// ActiveRunsOf returns the active runs of a pipeline (a range read).
func (f *Facts) ActiveRunsOf(pipelineID string) ([]run.Run, error) {
	if !slices.Contains(f.Asked.ActiveRuns, pipelineID) {
		return nil, missing(needs.Set{ActiveRuns: []string{pipelineID}})
	}
	return f.Active[pipelineID], nil
}

// ReadRuns answers the runs read so far (needs.ReadRuns).
func (f *Facts) ReadRuns(k run.Key) (*run.Run, bool) {
	if !slices.Contains(f.Asked.Runs, k) {
		return nil, false
	}
	if r, ok := f.Runs[k]; ok {
		return &r, true
	}
	return nil, true
}

// ReadMarkers answers the kinds of the markers read so far
// (needs.ReadMarkers).
func (f *Facts) ReadMarkers(k run.Key) ([]string, bool) {
	if !slices.Contains(f.Asked.MarkersOf, k) {
		return nil, false
	}
	var kinds []string
	for _, m := range f.Markers[k] {
		kinds = append(kinds, m.Kind)
	}
	return kinds, true
}

// TriggerSensors returns p's trigger sensors of every period, sorted by
// key (needs.TriggerSensors): none for a pipeline without a trigger.
func (f *Facts) TriggerSensors(p *pipeline.Pipeline) ([]store.Sensor, error) {
	n := needs.TriggerSensors(p)
	if len(n.Prefixes) == 0 {
		return nil, nil
	}
	if !slices.Contains(f.Asked.Prefixes, n.Prefixes[0]) {
		return nil, missing(n)
	}
	return f.Prefixed[n.Prefixes[0]], nil
}

// TriggerRecords is TriggerSensors as records (what the run decisions
// read).
func (f *Facts) TriggerRecords(p *pipeline.Pipeline) ([]sensor.Record, error) {
	stored, err := f.TriggerSensors(p)
	return sensorRecords(stored), err
}

// readTriggerRecords answers p's trigger sensors of every period as
// records when a round has read them (ok false: not yet, or p nil), for
// naming needs from them.
func (f *Facts) readTriggerRecords(p *pipeline.Pipeline) ([]sensor.Record, bool) {
	if p == nil {
		return nil, false
	}
	recs, err := f.TriggerRecords(p)
	return recs, err == nil
}

// sensorRecords are the records of stored sensors.
func sensorRecords(stored []store.Sensor) []sensor.Record {
	recs := make([]sensor.Record, len(stored))
	for i, s := range stored {
		recs[i] = s.Record()
	}
	return recs
}

// BackfillsOf returns the pipeline's backfills, oldest request first.
func (f *Facts) BackfillsOf(pipelineID string) ([]store.Backfill, error) {
	if !slices.Contains(f.Asked.Backfills, pipelineID) {
		return nil, missing(needs.Set{Backfills: []string{pipelineID}})
	}
	return f.Backfills[pipelineID], nil
}
