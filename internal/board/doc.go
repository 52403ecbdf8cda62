// Package board decides what the dashboard shows (docs/dashboard.md): a
// period's state for a person looking at it, which pipelines come first,
// the instant to count down to, and what a cell of the history grid says
// about a period's outcome and SLA. Its decisions read the config, the
// period's stored facts (Facts) and now; alert conditions (package deps)
// read the same states.
//
// It never renders (runtime/local/web does), never reads a store or the
// clock.
package board
