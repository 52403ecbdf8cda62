package decide

import (
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/watchdog"
)

// FindingIn is a watchdog finding to commit (watchdog.Pass found it on
// a snapshot that may be stale by now).
type FindingIn struct {
	Finding watchdog.Finding
	Env
}

// FindingApplied says what a finding's decision did beside its outcome.
type FindingApplied struct {
	// Repaired: the finding armed SLA timers (a silent repair).
	Repaired bool
}

// Finding decides a watchdog finding on the facts as they are now: its
// event with its dedup marker (written only if absent, so a finding is
// raised once whichever process or pass notices it first) and its
// action — a stuck run timed out, a missed period started, a period
// closed, SLA timers armed. A finding whose marker exists, whose run
// moved since the snapshot (watchdog.Finding.StillApplies), whose
// pipeline no longer runs, or whose period a recovery cannot start
// (excluded, paused, started meanwhile) decides nothing: an empty
// outcome.
func Finding(in FindingIn, f *Facts, now time.Time) (*Outcome, FindingApplied, error) {
	fd := in.Finding
	none := New(nil, f, now, in.Env)
	lp, err := f.Pipeline(fd.Key.PipelineID)
	if err != nil || lp == nil {
		return none, FindingApplied{}, err // a pipeline removed since the snapshot
	}
	o := New(lp, f, now, in.Env)
	if fd.Marker != "" {
		if done, err := f.HasMarker(fd.Key, fd.Marker); err != nil || done {
			return none, FindingApplied{}, err
		}
		o.Marker(store.Marker{Key: fd.Key, Kind: fd.Marker, At: now, Detail: fd.Detail}, true)
	}
	note := []run.Note{{Type: fd.Event, Message: fd.Message, Detail: fd.Detail}}
	var applied FindingApplied
	switch fd.Action {
	case watchdog.ActionNone:
		o.Notes(fd.Key, note)
	case watchdog.ActionFailRun:
		cur, err := f.Run(fd.Key)
		if err != nil || !fd.StillApplies(cur) {
			return none, applied, err
		}
		r := *cur
		next, eff := run.TimedOut(r, now)
		eff.Notes = note
		if err := o.ApplyRun(lp, &r, next, eff, nil); err != nil {
			return nil, applied, err
		}
	case watchdog.ActionStartRun:
		per, err := ParsePeriod(fd.Key.Period)
		if err != nil {
			return nil, applied, err
		}
		if err := o.StartPeriod(lp, fd.Key, per, run.CauseRecovered, nil); err != nil {
			return nil, applied, err
		}
		if !o.HasRun(fd.Key) {
			return none, applied, nil // excluded, paused or started meanwhile: nothing was recovered
		}
		o.C.Events = append(o.NotesFirst(fd.Key, note), o.C.Events...)
	case watchdog.ActionClosePeriod:
		cur, err := f.Run(fd.Key)
		if err != nil || !fd.StillApplies(cur) {
			return none, applied, err // a run showed up: nothing to close
		}
		o.PutRun(run.Close(fd.Key, lp.Row.ConfigVersion, now), 0)
		o.Notes(fd.Key, note)
		o.DropSLATimers(fd.Key)
	case watchdog.ActionArmSLA:
		per, err := ParsePeriod(fd.Key.Period)
		if err != nil {
			return nil, applied, err
		}
		if err := o.ArmSLA(lp.P, fd.Key, per); err != nil {
			return nil, applied, err
		}
		applied.Repaired = len(o.C.Timers) > 0
	}
	return o, applied, nil
}

// PassIn is a watchdog pass to record: its result and the data its
// checks could not read.
type PassIn struct {
	Result      watchdog.Result
	Unavailable []string
	Env
}

// WatchdogPass decides the record of a pass at now: when it ran (so a
// stopped watchdog can be noticed) and WATCHDOG_DEGRADED when checks
// failed — once per distinct set of failing checks (watchdog.Degraded),
// not on every pass — or the degraded marker's removal once none fails.
// A first raise is conditional on the marker's absence: of two passes at
// once (a lease that expired mid-pass), the second to commit conflicts,
// reads the first's marker and raises nothing.
func WatchdogPass(in PassIn, f *Facts, now time.Time) (*Outcome, error) {
	prev, err := f.Marker(run.Key{}, run.MarkerWatchdogDegraded)
	if err != nil {
		return nil, err
	}
	o := New(nil, f, now, in.Env)
	first := prev == nil
	prevFailed := ""
	if prev != nil {
		v, _ := prev.Detail.Get("failed")
		prevFailed, _ = v.Str()
	}
	res := in.Result
	d := watchdog.Degraded(res, prevFailed)
	o.Marker(store.Marker{Key: run.Key{}, Kind: run.MarkerWatchdogPass, At: now, Detail: run.Detail("findings", len(res.Findings), "failed", d.Failed)}, false)
	switch {
	case d.Raise:
		o.Emit(run.Key{}, event.WatchdogDegraded, d.Message, run.Detail("failed", d.Failed, "unavailable", strings.Join(in.Unavailable, "; ")))
		o.Marker(store.Marker{Key: run.Key{}, Kind: run.MarkerWatchdogDegraded, At: now, Detail: run.Detail("failed", d.Failed)}, first)
	case d.Clear:
		o.C.MarkerDeletes = append(o.C.MarkerDeletes, store.MarkerDelete{Key: run.Key{}, Kind: run.MarkerWatchdogDegraded})
	}
	return o, nil
}
