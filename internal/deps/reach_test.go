package deps

import (
	"slices"
	"testing"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
)

func TestReached(t *testing.T) {
	up := depPipeline(t, "up", hourlyCron)
	day := depPipeline(t, "day", dailyCron, "{check: upstream, pipeline: up, hours: all}")
	// Two rules on up: the same hour through both, and the next one.
	twice := depPipeline(t, "twice", hourlyCron, "{check: upstream, pipeline: up}", "{check: upstream, pipeline: up, offset: -1h}")
	tonly := depPipeline(t, "tonly", triggerOnly, "{check: upstream, pipeline: up}")
	// The day through hours: all first (it opens), then second through the plain rule.
	both := depPipeline(t, "both", triggerOnly, "{check: upstream, pipeline: up, hours: all}", "{check: upstream, pipeline: up}")
	stale := depPipeline(t, "stale", dailyCron, "{check: upstream, pipeline: other}")
	upPer := pers(t, "2026-03-10T05")[0]
	key := func(p *pipeline.Pipeline, per string) run.Key {
		return run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: per}
	}
	cases := []struct {
		name  string
		downs []*pipeline.Pipeline
		want  []Reach
	}{
		{"none", nil, nil},
		{"a stale index entry reaches nothing", []*pipeline.Pipeline{stale}, nil},
		{"an hour reaches its day, which it may open", []*pipeline.Pipeline{day}, []Reach{{key(day, "2026-03-10"), true}}},
		{"each period once, in the order named, opened by any mapping that names it first", []*pipeline.Pipeline{twice},
			[]Reach{{key(twice, "2026-03-10T05"), true}, {key(twice, "2026-03-10T06"), true}}},
		{"only the first period of a mapping opens", []*pipeline.Pipeline{tonly},
			[]Reach{{key(tonly, "2026-03-10T05"), true}, {key(tonly, "2026-03-10"), false}}},
		{"a period named first by one mapping and later by another opens", []*pipeline.Pipeline{both},
			[]Reach{{key(both, "2026-03-10"), true}, {key(both, "2026-03-10T05"), true}}},
		{"downstreams in the index's order", []*pipeline.Pipeline{tonly, stale, day},
			[]Reach{{key(tonly, "2026-03-10T05"), true}, {key(tonly, "2026-03-10"), false}, {key(day, "2026-03-10"), true}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := Reached(up, upPer, c.downs); !slices.Equal(got, c.want) {
				t.Fatalf("Reached\n got %+v\nwant %+v", got, c.want)
			}
		})
	}
}

func TestFanOut(t *testing.T) {
	reach := make([]Reach, 5)
	for i := range reach {
		reach[i].Key.Period = string(rune('a' + i))
	}
	periods := func(rs []Reach) string {
		s := ""
		for _, r := range rs {
			s += r.Key.Period
		}
		return s
	}
	cases := []struct {
		name  string
		done  int64
		limit int
		arm   string
		next  int
	}{
		{"all fit", 0, 5, "abcde", 0},
		{"more than a commit: the first page, then from there", 0, 2, "ab", 2},
		{"a middle page", 2, 2, "cd", 4},
		{"the last page goes", 4, 2, "e", 0},
		{"exactly the rest", 3, 2, "de", 0},
		{"a negative count is none", -3, 2, "ab", 2},
		{"a count beyond the reaches arms nothing", 9, 2, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			arm, next := FanOut(reach, c.done, c.limit)
			if periods(arm) != c.arm || next != c.next {
				t.Fatalf("FanOut(done %d, limit %d) = %q, %d; want %q, %d", c.done, c.limit, periods(arm), next, c.arm, c.next)
			}
		})
	}
}

func TestNeedsUpstreamPass(t *testing.T) {
	opens := depPipeline(t, "o", "{timezone: UTC}", "{check: upstream, pipeline: up}")
	trig := depPipeline(t, "t", triggerOnly, "{check: upstream, pipeline: up}")
	cron := depPipeline(t, "c", dailyCron, "{check: upstream, pipeline: up}")
	r := &run.Run{}
	cases := []struct {
		name     string
		down     *pipeline.Pipeline
		existing *run.Run
		first    bool
		want     bool
	}{
		{"a period it may open, with no run", opens, nil, true, true},
		{"a run exists", opens, r, true, false},
		{"not the first period of its mapping", opens, nil, false, false},
		{"a cron opens the downstream's periods", cron, nil, true, false},
		{"a trigger opens the downstream's periods", trig, nil, true, false},
	}
	for _, c := range cases {
		if got := NeedsUpstreamPass(c.down, c.existing, c.first); got != c.want {
			t.Errorf("%s: NeedsUpstreamPass = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestIndexChanges(t *testing.T) {
	p := depPipeline(t, "p", dailyCron, "{check: upstream, pipeline: b}", "{check: upstream, pipeline: a}", "{check: upstream, pipeline: a, offset: -1d}")
	prev := depPipeline(t, "p", dailyCron, "{check: upstream, pipeline: a}", "{check: upstream, pipeline: c}")
	none := depPipeline(t, "p", dailyCron)
	cases := []struct {
		name      string
		p, prev   *pipeline.Pipeline
		put, drop []string
	}{
		{"first load: every upstream once, sorted", p, nil, []string{"a", "b"}, nil},
		{"an upstream the new config drops", p, prev, []string{"a", "b"}, []string{"c"}},
		{"no upstream any more", none, prev, nil, []string{"a", "c"}},
		{"unchanged", prev, prev, []string{"a", "c"}, nil},
	}
	for _, c := range cases {
		put, drop := IndexChanges(c.p, c.prev)
		if !slices.Equal(put, c.put) || !slices.Equal(drop, c.drop) {
			t.Errorf("%s: IndexChanges = %v, %v; want %v, %v", c.name, put, drop, c.put, c.drop)
		}
	}
}
