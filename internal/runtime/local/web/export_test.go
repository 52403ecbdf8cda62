package web

import (
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
)

// SinkProblem is sinkProblem, for the external tests.
var SinkProblem = sinkProblem

// LastError is lastError over plain events.
func LastError(r *run.Run, evs []event.Event) string {
	views := make([]eventView, len(evs))
	for i, e := range evs {
		views[i] = eventView{Event: e}
	}
	return lastError(r, views)
}
