// Package pause decides pausing and resuming a pipeline (product spec
// §3b): whether a pause or a resume is taken, the pause windows a row
// keeps, and what a resume starts (the runs the pause held, the last cron
// tick inside it, trigger data that came during it).
//
// It never writes the row or starts a run (the engine commits what it
// returns; run.HeldByPause is how a run's step sees a pause), and never
// reads the clock or a store.
package pause
