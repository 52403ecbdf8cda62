package decide

import (
	"log/slog"
	"time"

	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/watchdog"
)

// ConfigLoadIn is a validated pipeline config to take effect.
type ConfigLoadIn struct {
	Config *pipeline.Pipeline
	Doc    []byte
	Env
}

// ConfigLoaded says what a config load did beside its outcome.
type ConfigLoaded struct {
	// Refused: the config is refused (its upstream rules close a cycle
	// with the pipelines running: the errors name it); the outcome is
	// empty, and the caller reports the refusal (ConfigRefusal).
	Refused  error
	Kept     bool           // the stored version is this one: nothing to do
	Restored bool           // brought back after its file was removed
	Row      store.Pipeline // the row written
}

// ConfigLoad decides a config load: the pipeline's row as its new
// version (unless the stored version is identical), its timers — the
// next cron tick, the next period's start, the SLA timers of the periods
// open now (sla.TimersToArm) — and its entries in its upstreams'
// downstream indexes. A pipeline seen for the first time starts from
// now: no alert is raised for an SLA time that passed before it was
// loaded. A pipeline brought back gives its active runs their step
// timers again.
func ConfigLoad(in ConfigLoadIn, f *Facts, now time.Time) (*Outcome, ConfigLoaded, error) {
	p := in.Config
	if refused, err := CycleCheck(p, f); err != nil || refused != nil {
		return New(nil, f, now, in.Env), ConfigLoaded{Refused: refused}, err
	}
	row, exists, err := f.PipelineRow(p.ID)
	if err != nil {
		return nil, ConfigLoaded{}, err
	}
	switch run.LoadConfig(exists, row.Hash, !pipeline.Running(row.RemovedAt), p.Source.SHA256) {
	case run.ConfigKeep:
		return New(nil, f, now, in.Env), ConfigLoaded{Kept: true}, nil
	case run.ConfigRestore:
		// Brought back (its file was removed, then restored): timers
		// that came due meanwhile were dropped; set them again.
		next := row
		next.RemovedAt, next.UpdatedAt = time.Time{}, now
		o := New(&Pipeline{P: p, Row: next}, f, now, in.Env)
		o.C.Pipelines = append(o.C.Pipelines, store.PipelineWrite{Pipeline: next, ExpectVersion: row.Version})
		if err := o.setTimers(p, now); err != nil {
			return nil, ConfigLoaded{}, err
		}
		o.DownstreamIndex(p, nil)
		if err := o.rearmRuns(p.ID, now); err != nil {
			return nil, ConfigLoaded{}, err
		}
		return o, ConfigLoaded{Restored: true, Row: next}, nil
	}
	prev, next := row, row
	next.ID, next.Doc, next.Hash, next.File, next.UpdatedAt = p.ID, in.Doc, p.Source.SHA256, p.Source.File, now
	next.ConfigVersion++
	next.RemovedAt = time.Time{}
	prevConfig, err := PreviousConfig(f, p.ID, exists)
	if err != nil {
		return nil, ConfigLoaded{}, err
	}
	next.FirstLoadedAt = run.FirstLoadedAt(exists, prev.FirstLoadedAt, prevConfig, p, now)
	next.WatchChangedAt = watchdog.WatchChangedAt(exists, prevConfig, prev.WatchChangedAt, p, now)
	// The timers see the new version (and its first-load time).
	o := New(&Pipeline{P: p, Row: next}, f, now, in.Env)
	o.C.Pipelines = append(o.C.Pipelines, store.PipelineWrite{Pipeline: next, ExpectVersion: prev.Version})
	if err := o.setTimers(p, now); err != nil {
		return nil, ConfigLoaded{}, err
	}
	o.DownstreamIndex(p, prevConfig)
	return o, ConfigLoaded{Row: next}, nil
}

// ConfigLoadNeeds names what a load of p reads (needs.Load) on the facts
// read so far: the pipeline's row first, then, with the first-load time
// ConfigLoad gives it (run.FirstLoadedAt), the SLA facts of the periods it
// arms. A changed config's first-load time is judged on the stored row's
// config, a fact of the round once resolved: resolve names the configs to
// resolve (a removed row's too, which the rounds do not) before naming
// again. Content unchanged (kept, or restored after its file was removed)
// has the stored cron: the row's time stands, no config asked.
func ConfigLoadNeeds(p *pipeline.Pipeline, f *Facts, now time.Time) (n needs.Set, resolve []string) {
	row, exists, err := f.PipelineRow(p.ID)
	if err != nil {
		return needs.Load(p, time.Time{}, false, now), nil
	}
	var prev *pipeline.Pipeline
	if run.LoadConfig(exists, row.Hash, !pipeline.Running(row.RemovedAt), p.Source.SHA256) == run.ConfigNew {
		if prev, err = PreviousConfig(f, p.ID, exists); err != nil {
			return needs.Load(p, time.Time{}, false, now), []string{p.ID}
		}
	}
	return needs.Load(p, run.FirstLoadedAt(exists, row.FirstLoadedAt, prev, p, now), true, now), nil
}

// CycleCheck refuses a config whose upstream rules close a cycle with the
// pipelines running (pipeline.CycleThrough; needs.Set.AllPipelines): each
// load is checked, so the running set never holds one, and a cycle found
// goes through p. A config with no upstream rule cannot close one and
// reads nothing. refused is the refusal (confdec.Errors naming the
// file), nil when the config may load.
func CycleCheck(p *pipeline.Pipeline, f *Facts) (refused, err error) {
	if len(p.Upstreams) == 0 {
		return nil, nil
	}
	running, err := f.runningConfigs()
	if err != nil {
		return nil, err
	}
	cycle := pipeline.CycleThrough(p, running)
	if cycle == nil {
		return nil, nil
	}
	return confdec.Errors{{File: p.Source.File, Path: "validation.rules", Msg: pipeline.CycleError(cycle).Error()}}, nil
}

// PreviousConfig is the config of the stored row a load replaces (nil:
// none stored, or it no longer loads).
func PreviousConfig(f *Facts, id string, exists bool) (*pipeline.Pipeline, error) {
	if !exists {
		return nil, nil
	}
	old, err := f.CallingPipeline(id)
	if old == nil || err != nil {
		return nil, err
	}
	return old.P, nil
}

// setTimers sets the timers a config takes effect with. SLA timers that
// cannot be armed on the facts read are logged and left unarmed: the
// load goes on.
func (o *Outcome) setTimers(p *pipeline.Pipeline, now time.Time) error {
	cronAt, periodAt := run.ConfigTimers(p, now)
	cronKey := run.PipelineTimer(run.TimerCron, p.ID).String()
	if cronAt.IsZero() {
		o.DeleteTimer(cronKey, nil)
	} else {
		o.PutTimer(store.Timer{Key: cronKey, Kind: string(run.TimerCron), Run: run.Key{PipelineID: p.ID}, DueAt: cronAt}, nil)
	}
	if periodAt.IsZero() {
		o.DeleteTimer(run.PipelineTimer(run.TimerPeriod, p.ID).String(), nil)
		return nil
	}
	o.PutTimer(PeriodTimer(p.ID, periodAt), nil)
	if err := o.ArmLoadSLA(p, now); err != nil {
		if _, ok := AsMissing(err); ok {
			return err
		}
		o.log(slog.LevelWarn, "cannot arm SLA timers of the periods open at load", "pipeline", p.ID, "err", err)
	}
	return nil
}

// rearmRuns gives every non-terminal run of a pipeline a step timer due
// now, for runs whose timers were dropped while the pipeline was not
// loaded. A run whose trigger call was in flight is found so by its
// step. The active runs and their step timers are read in further
// rounds (a restore names no runs ahead).
func (o *Outcome) rearmRuns(pipelineID string, now time.Time) error {
	runs, err := o.F.ActiveRunsOf(pipelineID)
	if m, ok := AsMissing(err); ok {
		return m.AsRounds()
	}
	if err != nil {
		return err
	}
	var lack Missing
	for _, r := range runs {
		if run.StepOf(r.State) == run.StepNone {
			continue
		}
		if _, err := o.F.Timer(StepTimerKey(r.Key)); err != nil {
			m, ok := AsMissing(err)
			if !ok {
				return err
			}
			lack.Rounds.Add(m.Needs)
		}
	}
	if !lack.Rounds.Empty() {
		return &lack
	}
	for _, r := range runs {
		step := run.StepOf(r.State)
		if step == run.StepNone {
			continue
		}
		if t, _ := o.F.Timer(StepTimerKey(r.Key)); t != nil {
			continue
		}
		o.ReadStep(StepTimerKey(r.Key), nil)
		o.PutStepTimer(store.Timer{Key: StepTimerKey(r.Key), Kind: string(step), Run: r.Key, DueAt: now}, nil)
	}
	return nil
}

// DownstreamIndex writes p's entries in its upstreams' downstream
// indexes and drops those of upstreams its previous config had and this
// one does not (prev may be nil).
func (o *Outcome) DownstreamIndex(p, prev *pipeline.Pipeline) {
	put, drop := deps.IndexChanges(p, prev)
	for _, u := range put {
		o.Marker(store.Marker{Key: run.Key{PipelineID: u}, Kind: run.DownstreamMarker(p.ID).String(), At: o.Now}, false)
	}
	for _, u := range drop {
		o.C.MarkerDeletes = append(o.C.MarkerDeletes, store.MarkerDelete{Key: run.Key{PipelineID: u}, Kind: run.DownstreamMarker(p.ID).String()})
	}
}

// ConfigRefusalIn is a refused config file to report.
type ConfigRefusalIn struct {
	File string
	// Key, Kind and Sum are the file's refusal marker (on the pipeline
	// the document names) and its content's hash.
	Key       run.Key
	Kind, Sum string
	Msgs      []string // what is wrong with it, one line each
	Env
}

// ConfigRefusal decides the report of a refused config file:
// CONFIG_INVALID with the version still running, and the file's marker,
// once per content (run.ConfigRefusalReported). reported: this content
// was reported before, and the outcome is empty.
func ConfigRefusal(in ConfigRefusalIn, f *Facts, now time.Time) (o *Outcome, reported bool, err error) {
	o = New(nil, f, now, in.Env)
	m, err := f.Marker(in.Key, in.Kind)
	if err != nil {
		return nil, false, err
	}
	if m != nil && run.ConfigRefusalReported(&m.Detail, in.Sum) {
		return o, true, nil
	}
	row, ok, err := f.PipelineRow(in.Key.PipelineID)
	if err != nil {
		return nil, false, err
	}
	running := pipeline.RunningVersion(ok, row.RemovedAt, row.ConfigVersion)
	o.Notes(run.Key{PipelineID: in.Key.PipelineID}, []run.Note{run.ConfigInvalidNote(in.File, in.Msgs, running)})
	o.Marker(store.Marker{Key: in.Key, Kind: in.Kind, At: now, Detail: run.ConfigRefusal(in.Sum)}, false)
	return o, false, nil
}

// ConfigAccepted decides what a file loading again does to its refusal
// marker: it goes, so that breaking the file later, even the same way,
// is news.
func ConfigAccepted(key run.Key, kind string, f *Facts, now time.Time) (*Outcome, error) {
	o := New(nil, f, now, Env{})
	m, err := f.Marker(key, kind)
	if err != nil || m == nil {
		return o, err
	}
	o.C.MarkerDeletes = append(o.C.MarkerDeletes, store.MarkerDelete{Key: key, Kind: kind})
	return o, nil
}
