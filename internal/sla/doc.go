// Package sla decides a period's SLA: the deadline and warning instants
// (absolute, or relative to the first trigger-sensor arrival), which SLA
// timers to arm and when (forward-only from the first load; settled by a
// verdict or by dry-run; a backfilled period spared the deadlines already
// past at its request), whether a timer that came due alerts and under
// which dedup marker, the verdict when the job succeeds, and a dry-run's
// projection. Its decisions read the config, the period's SLA facts
// (Marks, loaded by the engine from its markers), the period's run and
// now.
//
// It never changes a run (the lifecycle is package run's), never stores a
// timer or a marker (the engine keys and commits what it returns), and
// never reads the clock or a store.
package sla
