package run

// Marker kinds: durable facts about a period, shared by the engine and the
// watchdog. A marker written with an alert is its dedup: the alert is
// raised once per (pipeline, schedule, period, kind), across restarts.
const (
	MarkerFirstArrival     = "first-arrival"        // first trigger-sensor arrival (relative SLA start)
	MarkerSLAWarning       = "sla-warning"          // SLA_WARNING sent
	MarkerSLABreach        = "sla-breach"           // SLA_BREACH sent (alert or verdict)
	MarkerSLAVerdict       = "sla-verdict"          // SLA_MET/SLA_BREACH given at completion
	MarkerRelWarning       = "relative-sla-warning" // RELATIVE_SLA_WARNING sent
	MarkerRelBreach        = "relative-sla-breach"  // RELATIVE_SLA_BREACH sent (engine timer or watchdog)
	MarkerExcluded         = "excluded"             // PIPELINE_EXCLUDED sent
	MarkerDryRun           = "dry-run"              // dry-run would-trigger recorded
	MarkerScheduleMissed   = "schedule-missed"      // SCHEDULE_MISSED sent
	MarkerIrregularMissed  = "irregular-missed"     // IRREGULAR_SCHEDULE_MISSED sent
	MarkerRecovered        = "schedule-recovered"   // SCHEDULE_RECOVERED sent
	MarkerRunStuck         = "run-stuck"            // RUN_STUCK sent (per run generation and state: see watchdog)
	MarkerPostRunMissing   = "post-run-missing"     // POST_RUN_SENSOR_MISSING sent
	MarkerPostRunArrived   = "post-run-arrived"     // a post-run sensor was judged after the period's success (At: when)
	MarkerDryRunSeen       = "dry-run-seen"         // a dry-run pipeline observed the period (its rules may have failed)
	MarkerTriggerRecovered = "trigger-recovered"    // TRIGGER_RECOVERED sent
	MarkerTriggerOutcome   = "trigger-outcome"      // TRIGGER_OUTCOME_UNKNOWN sent: an interrupted trigger call's outcome is being established (Detail: CallRecovery)
	MarkerLateCall         = "late-call"            // a trigger call's answer that came after its run moved on was reported (Detail: the CallID)
	MarkerWatchdogPass     = "watchdog-pass"        // the last watchdog pass (Key{}): when it ran
	MarkerWatchdogDegraded = "watchdog-degraded"    // the failing checks of the last degraded pass
	MarkerBackfill         = "backfill"             // a backfill started the period (At: when that backfill was requested; Detail.backfill: its id)
	// The qualified kinds (downstream:, blocked:, after-silence/,
	// config-invalid:, run-stuck:) are MarkerKind records (markerkind.go).
)
