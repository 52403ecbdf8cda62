// Package dryrun decides what a dry-run pipeline observes: its would-be
// trigger and the SLA projection (sla.Project), drift against the
// would-be baseline, and the filter every event of a dry-run pipeline
// passes (Emits). What a dry-run rerun says is run.DryRunRerun, beside
// the rerun decision.
//
// It never starts a job (trigger.Guard refuses to), never reads the clock
// or a store.
package dryrun
