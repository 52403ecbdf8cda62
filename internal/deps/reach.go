package deps

import (
	"slices"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
)

// Reach is a downstream period an upstream period's success reaches
// (Reached), and whether that success may open it: the first period one
// of its mappings names (OnUpstreamSuccess's first).
type Reach struct {
	Key   run.Key
	Opens bool
}

// Reached lists the downstream periods the success of up's period upPer
// reaches, each once, in the order the downstreams (as the index lists
// them) and their mappings name them. downs are the configs of the
// pipelines up's downstream index names: one whose config no longer has
// an upstream rule on up reaches nothing (the index is stale; the config
// decides).
func Reached(up *pipeline.Pipeline, upPer schedule.Period, downs []*pipeline.Pipeline) []Reach {
	var out []Reach
	at := map[run.Key]int{}
	for _, down := range downs {
		for _, u := range down.Upstreams {
			if u.Pipeline != up.ID {
				continue
			}
			for i, per := range DownstreamPeriods(down, up, u, upPer) {
				key := run.Key{PipelineID: down.ID, ScheduleID: down.ScheduleID(), Period: per.String()}
				j, ok := at[key]
				if !ok {
					j = len(out)
					at[key] = j
					out = append(out, Reach{Key: key})
				}
				out[j].Opens = out[j].Opens || i == 0
			}
		}
	}
	return out
}

// FanOut is what one firing of a downstreams timer arms when a commit
// may hold at most limit upstream timers: done is how many reaches the
// timer's earlier firings armed (as its detail says; a count that cannot
// be is read as none, or as all). Arm are the next reaches; Next, when
// some remain after them, is the count to fire again with (0: none
// remain, the timer goes).
func FanOut(reach []Reach, done int64, limit int) (arm []Reach, next int) {
	from := int(min(max(done, 0), int64(len(reach))))
	arm = reach[from:]
	if len(arm) > limit {
		return arm[:limit], from + limit
	}
	return arm, 0
}

// NeedsUpstreamPass reports whether an upstream's success needs the
// downstream period's upstream rules judged (OnUpstreamSuccess's
// upstreamsPass): only when it may open a period that has no run.
func NeedsUpstreamPass(down *pipeline.Pipeline, existing *run.Run, first bool) bool {
	return existing == nil && first && OpensOnUpstream(down)
}

// IndexChanges are the upstreams whose downstream index gets p's entry
// (put: every upstream p's rules name) and those whose entry goes (drop:
// upstreams prev named and p does not; prev is nil for a first load or a
// restore, which drop nothing).
func IndexChanges(p, prev *pipeline.Pipeline) (put, drop []string) {
	put = p.UpstreamIDs()
	if prev == nil {
		return put, nil
	}
	for _, u := range prev.UpstreamIDs() {
		if !slices.Contains(put, u) {
			drop = append(drop, u)
		}
	}
	return put, drop
}
