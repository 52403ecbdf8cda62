package run

import (
	"cmp"
	"slices"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/sensor"
)

// When a silence or a maintenance window ends, each condition it
// silenced that still holds is alerted once (docs/silences.md): a new
// event of the same type, Detail.silence naming what silenced it and
// Detail.afterSilence true.

// SilencedConditions picks, from the events a silence covered, the
// conditions to judge at its end: one event per period and type (the
// latest), of a type that opens a condition (OpensCondition), and not
// blocked by an upstream (Detail.blockedBy: the root-cause release alerts
// those when the upstream recovers, a silence's end does not). An event
// superseded in its period by one the silence covered too is left out:
// a warning by its breach (one condition, and a warning is never sent
// after its breach, product spec §3 item 8), a failed attempt by the
// exhausted retries that followed it.
// They are sorted by pipeline, schedule, period and type.
func SilencedConditions(silenced []event.Event) []event.Event {
	latest := map[[4]string]event.Event{}
	for _, e := range silenced {
		if !OpensCondition(e.Type) || e.PipelineID == "" {
			continue
		}
		if _, blocked := e.Detail.Get("blockedBy"); blocked {
			continue
		}
		k := [4]string{e.PipelineID, e.ScheduleID, e.Date, string(e.Type)}
		if prev, ok := latest[k]; !ok || e.Time.After(prev.Time) {
			latest[k] = e
		}
	}
	out := make([]event.Event, 0, len(latest))
	for k, e := range latest {
		if HeldSuperseded(e.Type, func(t event.Type) bool { _, ok := latest[[4]string{k[0], k[1], k[2], string(t)}]; return ok }) {
			continue
		}
		out = append(out, e)
	}
	slices.SortFunc(out, func(a, b event.Event) int {
		return cmp.Or(cmp.Compare(a.PipelineID, b.PipelineID), cmp.Compare(a.ScheduleID, b.ScheduleID),
			cmp.Compare(a.Date, b.Date), cmp.Compare(a.Type, b.Type))
	})
	return out
}

// MarkerAfterSilencePfx starts the kind of the marker that says a
// period's condition of one type was alerted after the silence (or window
// occurrence) that names it ended: "after-silence/<id>/<type>". It is
// written IfAbsent with the alert, so restarts and replicas send it once.
const MarkerAfterSilencePfx = "after-silence/"

// AfterSilenceMarker is that marker's kind.
func AfterSilenceMarker(silenceID string, t event.Type) string {
	return MarkerAfterSilencePfx + silenceID + "/" + string(t)
}

// AfterSilence is the alert of a condition e reported while silence id
// covered it, which still holds now that the silence ended: the same
// type, its detail with silence = id and afterSilence = true.
func AfterSilence(e event.Event, id string) Note {
	f := map[string]sensor.Value{}
	for _, k := range e.Detail.Keys() {
		v, _ := e.Detail.Get(k)
		f[k] = v
	}
	f["silence"] = sensor.StringValue(id)
	f["afterSilence"] = sensor.BoolValue(true)
	return Note{Type: e.Type, Message: "still so after " + id + " ended: " + e.Message, Detail: sensor.NewObject(f)}
}
