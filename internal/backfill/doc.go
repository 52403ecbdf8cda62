// Package backfill decides a backfill of a range of a pipeline's past
// periods (docs/backfill.md): the range and its limits, each period's
// verdict (run it or skip it, and why), the next period to start under
// maxActive, and how a started period's run ended. The SLA alerts a
// backfilled period is spared are package sla's (sla.BackfillExempt); the
// rerun a backfill asks for is package run's (run.ReasonBackfill).
//
// It never starts a run, never stores the backfill (the engine keeps it in
// store.Backfill and sequences it with a durable timer), and never reads
// the clock or a store.
package backfill
