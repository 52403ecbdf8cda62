package decide

import (
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/lineage"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/sla"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/watchdog"
)

// Errors of a decision's input (the engine's, which it returns).
var (
	ErrUnknownPipeline = errors.New("unknown pipeline")
	ErrInvalidSensor   = errors.New("invalid sensor")
	// ErrNoSensorItem: a write from the inbox found no inbox item
	// (removed since the write being decided).
	ErrNoSensorItem = errors.New("no sensor item")
)

// Unknown is the error of a decision about a pipeline that does not run.
func Unknown(id string) error { return fmt.Errorf("%w %q", ErrUnknownPipeline, id) }

// MaxSensorKey bounds sensor key length.
const MaxSensorKey = 256

// CheckSensorKey reports why key cannot be a sensor key.
func CheckSensorKey(key string) error {
	switch {
	case key == "":
		return fmt.Errorf("%w: sensor key is empty", ErrInvalidSensor)
	case len(key) > MaxSensorKey:
		return fmt.Errorf("%w: sensor key is longer than %d bytes", ErrInvalidSensor, MaxSensorKey)
	case !utf8.ValidString(key):
		return fmt.Errorf("%w: sensor key is not valid UTF-8", ErrInvalidSensor)
	case strings.IndexFunc(key, unicode.IsControl) >= 0:
		return fmt.Errorf("%w: sensor key contains control characters", ErrInvalidSensor)
	}
	return nil
}

// SensorWriteIn is a sensor write to decide.
type SensorWriteIn struct {
	PipelineID, Key string
	// Data is the content written; nil: the content of the sensor's inbox
	// item (Facts.Inboxes).
	Data *sensor.Object
	// Lineage: the write is an OpenLineage event's (engine.PutLineage);
	// one lineage.Stale judges stale against the stored content (a
	// replay, an older event) writes nothing (Skipped).
	Lineage bool
	Env
}

// SensorWritten is what a sensor write did.
type SensorWritten struct {
	Data    sensor.Object // the content decided (the inbox item's, for a write from it)
	Sensor  store.Sensor  // as written (its version once committed)
	Old     store.Sensor  // as stored before (zero: none)
	Changed bool          // the content differs from what was stored (new data)
	Period  string        // the period the write belongs to
	Skipped bool          // stale: nothing written
}

// SensorWriteNeeds names what deciding a sensor write reads
// (needs.SensorWrite) from the facts read so far: with the content
// written, or, when the write is of its inbox item's (data nil), with
// that item's content once it is read — its period's facts — and without
// content before (the item is then among the needs).
func SensorWriteNeeds(f *Facts, cfg needs.Configs, pipelineID, key string, data *sensor.Object, now time.Time) needs.Set {
	if data == nil {
		if item, err := f.InboxOf(needs.SensorRef{PipelineID: pipelineID, Key: key}); err == nil {
			data = &item
		}
	}
	return needs.SensorWrite(cfg(pipelineID), cfg, f.ReadRuns, pipelineID, key, data, now)
}

// SensorWrite decides a sensor write: the sensor's new state and, when
// its content is new, what it means — start a period's run, evaluate a
// waiting run, report late data or post-run drift — in one outcome.
func SensorWrite(in SensorWriteIn, f *Facts, now time.Time) (*Outcome, SensorWritten, error) {
	var res SensorWritten
	if in.Data != nil {
		res.Data = *in.Data
	} else {
		inbox, err := f.InboxOf(needs.SensorRef{PipelineID: in.PipelineID, Key: in.Key})
		if errors.Is(err, store.ErrNotFound) {
			return nil, res, fmt.Errorf("%w: %s/%s: %w", ErrNoSensorItem, in.PipelineID, in.Key, err)
		}
		if err != nil {
			return nil, res, err
		}
		res.Data = inbox
		if err := CheckSensorKey(in.Key); err != nil {
			return nil, res, err
		}
	}
	lp, err := f.KnownPipeline(in.PipelineID)
	if err != nil {
		return nil, res, err
	}
	p := lp.P
	per, err := run.SensorWritePeriod(p, in.Key, res.Data, now)
	if err != nil {
		return nil, res, fmt.Errorf("%w: %v", ErrInvalidSensor, err)
	}
	res.Period = per.String()
	old, found, err := f.Sensor(in.PipelineID, in.Key)
	if err != nil {
		return nil, res, err
	}
	res.Old = old
	s := store.Sensor{PipelineID: in.PipelineID, Key: in.Key, Data: res.Data, ChangedAt: now, WrittenAt: now, Watched: watchdog.Watches(p, in.Key)}
	var stored *sensor.Record
	if found {
		rec := old.Record()
		stored = &rec
	}
	o := New(lp, f, now, in.Env)
	if in.Lineage && lineage.Stale(storedData(stored), res.Data) {
		res.Sensor, res.Skipped = old, true
		return o, res, nil
	}
	res.Changed = run.NewData(p, in.Key, stored, res.Data, per)
	s.ChangedAt = run.SensorChangedAt(res.Changed, old.ChangedAt, now)
	o.C.Sensors = append(o.C.Sensors, store.SensorWrite{Sensor: s, ExpectVersion: old.Version})
	if res.Changed {
		if err := o.onNewData(lp, &s, per); err != nil {
			return nil, res, err
		}
	}
	res.Sensor = s
	return o, res, nil
}

// storedData is the content of a stored sensor record (nil: none).
func storedData(r *sensor.Record) *sensor.Object {
	if r == nil {
		return nil
	}
	return &r.Data
}

// onNewData routes a changed sensor (run.RouteSensor): trigger keys may
// start the period; post-run keys are checked against the baseline; any
// other key may complete the rules of a run that is waiting.
func (o *Outcome) onNewData(lp *Pipeline, s *store.Sensor, per schedule.Period) error {
	p := lp.P
	key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per.String()}
	switch route, ruleKey := run.RouteSensor(p, s.Key); route {
	case run.SensorForTrigger:
		return o.TriggerSensor(lp, s, key, per)
	case run.SensorForPostRun:
		return o.postRunSensor(lp, s, key, per, ruleKey)
	}
	return o.evaluateIfWaiting(lp, key, s)
}

// evaluateIfWaiting evaluates the period's run now if it is waiting for
// its rules (run.EvaluatesOnData), instead of at its next interval.
func (o *Outcome) evaluateIfWaiting(lp *Pipeline, key run.Key, s *store.Sensor) error {
	cur, err := o.F.Run(key)
	if err != nil || cur == nil || !run.EvaluatesOnData(*cur, lp.Row.Paused) {
		return err
	}
	r := *cur
	return o.EvaluateRun(lp, &r, &r, run.Effect{}, s, nil)
}

// TriggerSensor handles trigger data as run.OnTriggerData decides, once
// it satisfies the trigger condition.
func (o *Outcome) TriggerSensor(lp *Pipeline, s *store.Sensor, key run.Key, per schedule.Period) error {
	p := lp.P
	if !run.TriggerCheck(p, s.Record(), o.Now, o.Rules).Passed {
		return nil
	}
	existing, err := o.RunOf(key)
	if err != nil {
		return err
	}
	firstArrival, act := run.OnTriggerData(p, per, lp.Row.Paused, existing)
	if firstArrival {
		if err := o.firstArrival(lp, key, per); err != nil {
			return err
		}
	}
	switch act {
	case run.TriggerStart:
		return o.StartPeriod(lp, key, per, run.CauseSensor, s)
	case run.TriggerEvaluate:
		r := *existing
		return o.EvaluateRun(lp, &r, &r, run.Effect{}, s, nil)
	case run.TriggerLateData:
		r := *existing // keyed under the schedule id of an earlier config, perhaps
		o.Notes(r.Key, []run.Note{run.LateData(r, s.Key)})
		return o.Rerun(lp, r.Key, &r, run.ReasonLateData, "sensor "+s.Key, s)
	}
	return nil
}

// firstArrival records the first trigger-sensor arrival of a period (the
// start of a relative SLA) and arms the relative SLA timers.
func (o *Outcome) firstArrival(lp *Pipeline, key run.Key, per schedule.Period) error {
	seen, err := o.F.HasMarker(key, run.MarkerFirstArrival)
	if err != nil || seen {
		return err
	}
	o.Marker(store.Marker{Key: key, Kind: run.MarkerFirstArrival, At: o.Now}, true)
	m, err := o.SLAMarks(lp.P, key, per)
	if err != nil {
		return err
	}
	m.FirstArrival = o.Now // written by this outcome
	timers, unresolved := sla.TimersOnArrival(lp.P, per, m, o.FirstLoaded(), o.Now)
	o.SetSLATimers(key, timers, unresolved)
	return nil
}

// postRunSensor handles a post-run sensor write as run.PostRunData
// decides (a dry-run pipeline: dryrun.Drift).
func (o *Outcome) postRunSensor(lp *Pipeline, s *store.Sensor, key run.Key, per schedule.Period, ruleKey string) error {
	p := lp.P
	if p.DryRun {
		return o.dryRunDrift(p, s, key, ruleKey)
	}
	r, err := o.F.Run(key)
	if err != nil {
		return err
	}
	var prev *sensor.Object
	if base, err := o.F.Baseline(key); err != nil {
		return err
	} else if base != nil {
		if data, ok := base.Sensors[ruleKey]; ok {
			prev = &data
		}
	}
	d := run.PostRunData(p, r, prev, s.Key, s.Data)
	if d.MarkArrived {
		o.Marker(store.Marker{Key: key, Kind: run.MarkerPostRunArrived, At: o.Now, Detail: run.Detail("sensorKey", s.Key)}, false)
	}
	o.Notes(key, d.Notes)
	if d.Rerun {
		return o.Rerun(lp, key, r, run.ReasonDrift, "sensor "+s.Key, s)
	}
	if d.JudgeRules {
		sensors, err := SensorsFor(o.F, p.ID, per, p.PostRun.Rules, s)
		if err != nil {
			return err
		}
		out := rule.EvaluateAll(rule.All, p.PostRun.Rules, sensors, o.Now, o.Rules)
		o.Notes(key, []run.Note{run.PostRunVerdict(out, s.Key)})
	}
	return nil
}
