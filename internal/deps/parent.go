package deps

import (
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// NamesParent reports whether a triggered run names the upstream run it
// counts as started by (UpstreamParent): only a run its upstreams opened
// (CauseUpstream) has one; a run of any other cause names no parent.
func NamesParent(r run.Run) bool {
	return r.Cause == run.CauseUpstream
}

// UpstreamParent names the upstream run a run opened by its upstreams
// (CauseUpstream) counts as started by, for lineage (the openlineage
// sink's parent facet): the last period (UpstreamPeriods) of the last
// upstream rule whose config ups holds — the success that completed the
// set of upstreams the period waited for. With one upstream and one
// period, which is the common case, it is exactly the run that opened
// it; Interlock records no more than the upstreams' success, so with
// several it names the last in config order. ok is false when no
// upstream's config is known.
func UpstreamParent(down *pipeline.Pipeline, ups map[string]*pipeline.Pipeline, per schedule.Period) (pipelineID string, period schedule.Period, ok bool) {
	for i := len(down.Upstreams) - 1; i >= 0; i-- {
		u := down.Upstreams[i]
		up, known := ups[u.Pipeline]
		if !known || up == nil {
			continue
		}
		pers := UpstreamPeriods(down, up, u, per)
		if len(pers) == 0 {
			continue
		}
		return u.Pipeline, pers[len(pers)-1], true
	}
	return "", schedule.Period{}, false
}

// WithParent adds the parent upstream run (UpstreamParent) to the
// JOB_TRIGGERED notes of notes, as detail fields parentPipeline and
// parentPeriod.
func WithParent(notes []run.Note, pipelineID string, per schedule.Period) []run.Note {
	out := make([]run.Note, len(notes))
	for i, n := range notes {
		if n.Type == event.JobTriggered {
			n.Detail = withFields(n.Detail, "parentPipeline", pipelineID, "parentPeriod", per.String())
		}
		out[i] = n
	}
	return out
}

func withFields(o sensor.Object, kv ...any) sensor.Object {
	add := run.Detail(kv...)
	fields := make(map[string]sensor.Value, o.Len()+add.Len())
	for _, k := range o.Keys() {
		fields[k], _ = o.Get(k)
	}
	for _, k := range add.Keys() {
		fields[k], _ = add.Get(k)
	}
	return sensor.NewObject(fields)
}
