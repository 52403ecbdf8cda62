package deps

import (
	"cmp"
	"slices"
	"strings"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
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

// AfterSilence is the alert of a condition e reported while silence id
// covered it, which still holds now that the silence ended: the same
// type, its detail with silence = id, afterSilence = true and silences,
// every silence that held it back in turn. Its message has one prefix
// naming them ("still so after a, b ended: …"): when overlapping
// silences let the same condition go one after the other, each alert is
// the condition's first message, not the last alert's with another
// prefix.
func AfterSilence(e event.Event, id string) run.Note {
	base, ids := heldBefore(e, DetailSilences)
	ids = appendName(ids, id)
	d := WithDetail(e.Detail, "silence", sensor.StringValue(id))
	d = WithDetail(d, "afterSilence", sensor.BoolValue(true))
	d = WithDetail(d, DetailSilences, names(ids))
	d = WithDetail(d, DetailHeldMessage, sensor.StringValue(base))
	return run.Note{Type: e.Type, Message: "still so after " + strings.Join(ids, ", ") + " ended: " + base, Detail: d}
}

// The detail keys of an alert let go after it was held (a silence's end,
// a root's release): the message the condition was first raised with,
// and what held it back in turn.
const (
	DetailHeldMessage  = "heldMessage"
	DetailSilences     = "silences"
	DetailReleasedFrom = "releasedFromAll"
)

// heldBefore is the message e's condition was first raised with and the
// names listed under key in e's detail (what held it back before).
func heldBefore(e event.Event, key string) (string, []string) {
	base := e.Message
	if s, ok := e.Detail.Str(DetailHeldMessage); ok {
		base = s
	}
	var out []string
	if v, ok := e.Detail.Get(key); ok {
		items, _ := v.Array()
		for _, it := range items {
			if s, ok := it.Str(); ok {
				out = append(out, s)
			}
		}
	}
	return base, out
}

// appendName adds name to names unless it is there.
func appendName(names []string, name string) []string {
	if slices.Contains(names, name) {
		return names
	}
	return append(names, name)
}

// names is a list of names as a detail value.
func names(ns []string) sensor.Value {
	out := make([]sensor.Value, len(ns))
	for i, n := range ns {
		out[i] = sensor.StringValue(n)
	}
	return sensor.ArrayValue(out)
}
