package decide

import (
	"fmt"
	"slices"
	"time"

	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pause"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// The operator's pause, resume and handoff (product spec §3b), each one
// entry: the facts package needs names in, the outcome out.

// PauseIn is an operator's pause of a pipeline to decide: until zero
// pauses until a resume.
type PauseIn struct {
	PipelineID string
	Until      time.Time
	By         string
	Env
}

// Pause decides a pause (pause.Pause): the row's pause state, the
// resume timer set for a timed pause (dropped for an open one), and
// PIPELINE_PAUSED; the outcome is empty when the pause changes nothing. A
// bad until is ErrInvalidRequest.
func Pause(in PauseIn, f *Facts, now time.Time) (*Outcome, struct{}, error) {
	o, err := newKnown(f, in.PipelineID, now, in.Env)
	if err != nil {
		return nil, struct{}{}, err
	}
	row := o.LP.Row
	d, ok, err := pause.Pause(pauseState(row), in.Until, in.By, now)
	if err != nil {
		return nil, struct{}{}, fmt.Errorf("%w: until %v", ErrInvalidRequest, err)
	}
	if !ok {
		return o, struct{}{}, nil
	}
	next := withPause(row, d.State, now)
	o.C.Pipelines = append(o.C.Pipelines, store.PipelineWrite{Pipeline: next, ExpectVersion: row.Version})
	if d.ResumeAt.IsZero() {
		o.DeleteTimer(resumeTimerKey(in.PipelineID), nil)
	} else {
		o.PutTimer(store.Timer{Key: resumeTimerKey(in.PipelineID), Kind: string(run.TimerResume), Run: run.Key{PipelineID: in.PipelineID}, DueAt: d.ResumeAt}, nil)
	}
	o.Notes(run.Key{PipelineID: in.PipelineID, ScheduleID: o.P.ScheduleID()}, []run.Note{d.Note})
	return o, struct{}{}, nil
}

// ResumeIn is an operator's resume of a pipeline to decide.
type ResumeIn struct {
	PipelineID string
	By         string
	Env
}

// Resume decides a resume: new runs are allowed again and each period
// that received trigger data during the pause is treated as if that data
// had just arrived, so it starts now (pause.PlanResume); a backfill the
// pause held is woken. The outcome is empty when the pipeline is not
// paused.
func Resume(in ResumeIn, f *Facts, now time.Time) (*Outcome, struct{}, error) {
	o, err := newKnown(f, in.PipelineID, now, in.Env)
	if err != nil {
		return nil, struct{}{}, err
	}
	_, err = o.resume(o.LP, in.By, nil)
	return o, struct{}{}, err
}

// resumeTimer resumes the pipeline of a timed pause at its end: its file
// removed, or the pipeline not paused any more, the timer goes (an
// outcome not tied to the pipeline).
func (d timerDecision) resumeTimer() (*Outcome, error) {
	lp, err := d.f.Pipeline(d.in.Timer.Run.PipelineID)
	if err != nil || lp == nil {
		return d.outcome(nil), err
	}
	o := d.outcome(lp)
	due := d.in.Timer.DueAt
	resumed, err := o.resume(lp, "timer", &due)
	if err != nil || !resumed {
		return d.outcome(nil), err
	}
	return o, nil
}

// resume builds a resume in o, an outcome about lp; resumed false (o
// left empty) when the pipeline is not paused. timerDue is the resume
// timer's due time when it is the one resuming.
func (o *Outcome) resume(lp *Pipeline, by string, timerDue *time.Time) (bool, error) {
	row := lp.Row
	d, ok := pause.Resume(pauseState(row), by, o.Now)
	if !ok {
		return false, nil
	}
	p := lp.P
	next := withPause(row, d.State, o.Now)
	// The decisions below see the pipeline resumed; the row's write is
	// conditioned on the version read.
	resumed := &Pipeline{P: p, Row: next, Cals: lp.Cals}
	o.LP = resumed
	o.C.Pipelines = append(o.C.Pipelines, store.PipelineWrite{Pipeline: next, ExpectVersion: row.Version})
	o.DeleteTimer(resumeTimerKey(p.ID), timerDue)
	if err := o.wakeBackfillOnResume(p.ID); err != nil {
		return false, err
	}
	o.Notes(run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID()}, []run.Note{d.Note})
	active, err := o.F.ActiveRunsOf(p.ID)
	if err != nil {
		return false, err
	}
	sensors, err := o.F.TriggerSensors(p)
	if err != nil {
		return false, err
	}
	plan := pause.PlanResume(p, row.PausedAt, o.Now, active, sensorRecords(sensors), o.Rules)
	for _, i := range plan.Rearm {
		r := active[i]
		next, eff := run.Resume(r, p, o.Now)
		if err := o.ApplyRun(resumed, &r, next, eff, nil); err != nil {
			return false, err
		}
	}
	if per := plan.CronPeriod; per != nil {
		key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per.String()}
		if !o.HasRun(key) { // re-armed above
			if err := o.StartPeriod(resumed, key, *per, run.CauseResume, nil); err != nil {
				return false, err
			}
		}
	}
	for _, d := range plan.Data {
		// A run held by the pause was re-armed above: it is left to its
		// evaluation; any other period goes the trigger sensor's way.
		key := run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: d.Period.String()}
		if o.HasRun(key) {
			continue
		}
		if err := o.TriggerSensor(resumed, &sensors[d.Sensor], key, d.Period); err != nil {
			return false, err
		}
	}
	return true, nil
}

// ResumeNeeds names what resuming pipelineID at now reads (needs.Resume)
// from the facts read so far: the plan is made, as the resume makes it,
// once the row, the active runs and the trigger sensors are read.
func ResumeNeeds(f *Facts, cfg needs.Configs, pipelineID string, now time.Time, rules rule.Options) needs.Set {
	p := cfg(pipelineID)
	row, rowRead := f.Pipelines[pipelineID]
	recs, recsRead := f.readTriggerRecords(p)
	if p == nil || !rowRead || !slices.Contains(f.Asked.ActiveRuns, pipelineID) || !recsRead {
		return needs.Resume(p, cfg, f.ReadRuns, pipelineID, nil, nil)
	}
	if _, paused := pause.Resume(pauseState(row), "", now); !paused {
		return needs.Resume(p, cfg, f.ReadRuns, pipelineID, nil, nil)
	}
	active := f.Active[pipelineID]
	plan := pause.PlanResume(p, row.PausedAt, now, active, recs, rules)
	return needs.Resume(p, cfg, f.ReadRuns, pipelineID, active, &plan)
}

// pauseState is a row's pause state as the pause decisions read it.
func pauseState(row store.Pipeline) pause.State {
	return pause.State{Paused: row.Paused, Until: row.PausedUntil, PausedAt: row.PausedAt, ResumedAt: row.ResumedAt, Windows: row.PauseWindows}
}

// withPause is row with pause state st, updated at now.
func withPause(row store.Pipeline, st pause.State, now time.Time) store.Pipeline {
	row.Paused, row.PausedUntil, row.PausedAt, row.ResumedAt, row.PauseWindows, row.UpdatedAt = st.Paused, st.Until, st.PausedAt, st.ResumedAt, st.Windows, now
	return row
}

func resumeTimerKey(pipelineID string) string {
	return run.PipelineTimer(run.TimerResume, pipelineID).String()
}

// HandOffIn is the handoff of a run's orphaned step to decide: Timer is
// the step timer as the caller learned of it, Grace how overdue it must
// be (run.Orphaned).
type HandOffIn struct {
	Timer store.Timer
	Grace time.Duration
}

// HandedOff is the answer to a handoff: the step timer as stored (nil:
// none any more) and, handed, the timer as the outcome writes it.
type HandedOff struct {
	Stored, Handed *store.Timer
}

// HandOff decides the handoff of a run's orphaned step to a new waiter
// (run.HandsOff on the timer as stored): the timer moves to now, still
// due, stamped as a handoff since now, on the condition that it is still
// the timer read. The outcome is empty when there is nothing to hand
// (the timer moved, went, or is not orphaned by now).
func HandOff(in HandOffIn, f *Facts, now time.Time) (*Outcome, HandedOff, error) {
	stored, err := f.Timer(in.Timer.Key)
	if err != nil {
		return nil, HandedOff{}, err
	}
	o := New(nil, f, now, Env{})
	if stored == nil || !run.HandsOff(run.TimerAt{Kind: stored.Kind, At: stored.DueAt}, in.Timer.DueAt, now, in.Grace) {
		return o, HandedOff{Stored: stored}, nil
	}
	handed := store.Timer{Key: stored.Key, Kind: stored.Kind, Run: stored.Run, DueAt: now, Detail: run.StepStamp{Since: now, Handoff: true}.Detail()}
	o.PutTimer(handed, &stored.DueAt)
	return o, HandedOff{Stored: stored, Handed: &handed}, nil
}
