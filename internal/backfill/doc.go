// Package backfill decides a backfill of a range of a pipeline's past
// periods (docs/backfill.md): whether a request may start (one backfill
// per pipeline at a time) and its id, the range and its limits, each
// period's verdict (run it or skip it, and why), what a firing of its
// timer does (the active periods judged from their runs, the next period
// to start under maxActive, and when it fires again), what a started
// period becomes, a cancel, and what wakes the timer early. The SLA alerts a
// backfilled period is spared are package sla's (sla.BackfillExempt); the
// rerun a backfill asks for is package run's (run.ReasonBackfill).
//
// It never starts a run, never stores the backfill (the engine keeps it in
// store.Backfill and sequences it with a durable timer), and never reads
// the clock or a store.
package backfill
