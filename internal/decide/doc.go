// Package decide is the engine's pure decision: for one input — a sensor
// write, a run's step, a timer — it takes the facts the engine loaded
// (Facts: the records package needs named, read in one batch) and the
// time, and returns the whole outcome (Outcome: the store.Change to
// commit — runs, events, timers, markers, ledger, baselines — and the
// lines to log). The engine sequences: needs → store.ReadFacts → decide →
// Commit, then the effects after a commit (job calls, notifier, spans).
//
// It owns the run path's sequencing of the core's decisions (internal/run,
// sla, deps, dryrun, rule): which core decision follows which for an
// input, and how their answers become records (timer keys, markers, the
// ledger's numbering, root causes on the events). One entry per input:
// SensorWrite (its needs named by SensorWriteNeeds), Step (a run's
// evaluate, trigger and poll steps, and a poll's answer), Call (whether a
// begun trigger call is made), Answer (a trigger call's answer), Timer
// (every kind: cron, SLA, period, downstreams, upstream, release,
// backfill and resume timers, a silence's and a window's end, an unknown
// kind removed; DueTimer for any),
// RerunRequest, JobLog, ConfigLoad, ConfigRefusal and ConfigAccepted,
// Finding and WatchdogPass (a watchdog finding, a pass's record),
// Interrupted and Recovered (a trigger call found in flight at an
// engine's start; its recovery from the job lookup's answer),
// SilenceCreate, SilenceExpiry, MaintenanceArm and AfterSilence
// (silences and maintenance windows, whose ends are Timer families; a
// silenced condition's alert at the end); ConfigLoad's CycleCheck; the
// operator's BackfillRequest, BackfillCancel (a backfill's step and a
// timed pause's end are Timer families), Pause, Resume, HandOff and
// Explain (deciding nothing: why a period would or would not run);
// Reject (an item someone else wrote, reported once a day), DeleteSensor,
// Forget (a pipeline whose file was removed) and CalendarWrite (a
// calendar file's record); RootCauses for any outcome before it is
// committed. Every value it is given to call (NewID: eventid.Block.Next;
// Findable: the job guard's) is a lower package's, never the engine's:
// internal/archtest's walks fail on a call from here back into the
// engine.
//
// It never reads a store, a clock or the environment, and imports no
// context (internal/archtest pins it), so it can call no port. A fact
// the decision needs that the facts do not hold is not read: the
// decision returns a *Missing error naming it, and the engine reads it
// in a further round and decides again (a point read the needs did not
// name counts as a late read, which the engine's tests fail on).
package decide
