package decide

import (
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// The inputs that decide little but still decide: an item someone else
// wrote that cannot be accepted, whether a begun trigger call is made, a
// sensor's deletion and a pipeline forgotten. Each reads only the facts
// its needs name (needs.Reject, needs.Call, needs.DeleteSensor,
// needs.Pipeline), so the engine loads, calls and commits.

// RejectIn is an item someone else wrote into the store that cannot be
// what its key says (engine.Rejection).
type RejectIn struct {
	Type                     event.Type
	PipelineID, Item, Reason string
	// Fingerprint identifies the item and its content: reported once per
	// day (RejectMarker).
	Fingerprint string
	Env
}

// RejectMarker is where the report of an item with fingerprint is
// remembered: a marker of the pipeline's day (it expires with the day's
// records), so the same item delivered again that day is reported once.
func RejectMarker(pipelineID, fingerprint string, now time.Time) (run.Key, string) {
	return run.Key{PipelineID: pipelineID, Period: now.UTC().Format("2006-01-02")}, run.ItemMarker(run.MarkerRejected, fingerprint).String()
}

// Reject decides an item's rejection: reported (the note and the day's
// marker, written if absent) unless the day's marker says it was.
func Reject(in RejectIn, f *Facts, now time.Time) (*Outcome, bool, error) {
	o := New(nil, f, now, in.Env)
	key, kind := RejectMarker(in.PipelineID, in.Fingerprint, now)
	seen, err := f.HasMarker(key, kind)
	if err != nil || seen {
		return o, false, err
	}
	o.Notes(run.Key{PipelineID: in.PipelineID}, []run.Note{run.ItemRejected(in.Type, in.Item, in.Reason)})
	o.Marker(store.Marker{Key: key, Kind: kind, At: now, Detail: run.Detail("item", in.Item)}, true)
	return o, true, nil
}

// CallToMake is whether a trigger call TriggerBegin began is made: with
// the run as stored and its pipeline's config, or NotMade saying why not.
type CallToMake struct {
	Run      run.Run
	Pipeline *Pipeline
	NotMade  string
}

// Call decides whether the call id of run key is made: not when the run
// is gone or no longer awaits it (the watchdog timed it out, its answer is
// recorded: run.Run.Awaits); an error when no stored config of the
// pipeline loads (a call is made with the config it was begun with, a
// removed pipeline's too: Facts.CallingPipeline).
func Call(key run.Key, id run.CallID, f *Facts) (CallToMake, error) {
	r, err := f.Run(key)
	if err != nil {
		return CallToMake{}, err
	}
	if r == nil {
		return CallToMake{NotMade: "the run is gone"}, nil
	}
	if !r.Awaits(id) {
		return CallToMake{NotMade: fmt.Sprintf("the run no longer waits for this call (%s, attempt %d)", r.State, r.Attempt)}, nil
	}
	lp, err := f.CallingPipeline(key.PipelineID)
	if err != nil {
		return CallToMake{}, err
	}
	if lp == nil {
		return CallToMake{}, fmt.Errorf("trigger call of %s %s %s: no stored config of the pipeline loads", key.PipelineID, key.ScheduleID, key.Period)
	}
	return CallToMake{Run: *r, Pipeline: lp}, nil
}

// JobVars are the template variables a run's job is told (its config's
// ${...}): the pipeline, the schedule, the period's date, its hour for an
// hourly period ("" for a daily one), and the call's run id (RunID).
func JobVars(r run.Run) pipeline.TemplateVars {
	per, _ := ParsePeriod(r.Period)
	vars := pipeline.TemplateVars{Pipeline: r.PipelineID, Schedule: r.ScheduleID, Date: per.Date.String(), RunID: RunID(r)}
	if per.Hourly {
		vars.Hour = fmt.Sprintf("%02d", per.Hour)
	}
	return vars
}

// CallCut reports whether a trigger call's answer is left unrecorded,
// to the crash rules at the end of its lease (the lookup, or
// TRIGGER_OUTCOME_UNKNOWN): the call failed because the caller's own
// bound on it cut it — the job may have started, and recorded as a
// failure it would be retried and could start twice — while the caller
// itself goes on.
func CallCut(failed, cutAtBound, callerLive bool) bool { return failed && cutAtBound && callerLive }

// DeleteSensorIn is an operator's deletion of a stored sensor.
type DeleteSensorIn struct {
	PipelineID, Key string
	Env
}

// DeleteSensor decides a sensor's deletion: of a running pipeline's
// sensor (Unknown otherwise), on the condition of its row. It decides
// nothing else: a sensor that disappears only makes the rules that need
// it fail at their next evaluation.
func DeleteSensor(in DeleteSensorIn, f *Facts, now time.Time) (*Outcome, struct{}, error) {
	o, err := newKnown(f, in.PipelineID, now, in.Env)
	if err != nil {
		return nil, struct{}{}, err
	}
	o.C.SensorDeletes = append(o.C.SensorDeletes, store.SensorDelete{PipelineID: in.PipelineID, Key: in.Key})
	return o, struct{}{}, nil
}

// Forget decides that pipeline id, whose file was removed, no longer
// runs: its row marked removed (its history stays), on the condition of
// the row's version. forgot is false, and nothing written, when no row is
// stored or it is removed already.
func Forget(id string, f *Facts, now time.Time) (o *Outcome, forgot bool, err error) {
	o = New(nil, f, now, Env{})
	row, ok, err := f.PipelineRow(id)
	if err != nil || !ok || !pipeline.Running(row.RemovedAt) {
		return o, false, err
	}
	next := row
	next.RemovedAt = now
	o.C.Pipelines = append(o.C.Pipelines, store.PipelineWrite{Pipeline: next, ExpectVersion: row.Version})
	return o, true, nil
}
