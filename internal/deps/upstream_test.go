package deps

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/schedule"
)

// depPipeline is a pipeline with the given schedule lines and upstream
// rules (YAML flow mappings).
func depPipeline(t *testing.T, id, sched string, ups ...string) *pipeline.Pipeline {
	t.Helper()
	doc := fmt.Sprintf("pipeline: {id: %s}\nschedule: %s\njob: {type: command, config: {command: /bin/true}}\n", id, sched)
	if len(ups) > 0 {
		doc += "validation:\n  rules: [" + strings.Join(ups, ", ") + "]\n"
	}
	return runtest.Pipeline(t, doc)
}

func pers(t *testing.T, ss ...string) []schedule.Period {
	t.Helper()
	var out []schedule.Period
	for _, s := range ss {
		p, err := schedule.ParsePeriod(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

func dayHours(t *testing.T, date string, skip ...int) []schedule.Period {
	t.Helper()
	var out []schedule.Period
	for h := range 24 {
		if !slices.Contains(skip, h) {
			out = append(out, pers(t, fmt.Sprintf("%sT%02d", date, h))...)
		}
	}
	return out
}

const (
	dailyCron   = "{cron: '0 6 * * *'}"
	hourlyCron  = "{cron: '5 * * * *'}"
	triggerOnly = "{trigger: {key: ready, check: exists}}"
)

func TestUpstreamPeriods(t *testing.T) {
	nyHourly := "{cron: '5 * * * *', timezone: America/New_York}"
	cases := []struct {
		name            string
		downSched, rule string
		upSched         string
		per             string
		want            []schedule.Period
	}{
		{"same day", dailyCron, "{check: upstream, pipeline: up}", dailyCron, "2026-03-10", pers(t, "2026-03-10")},
		{"yesterday", dailyCron, "{check: upstream, pipeline: up, offset: -1d}", dailyCron, "2026-03-10", pers(t, "2026-03-09")},
		{"offset across a month", dailyCron, "{check: upstream, pipeline: up, offset: -2d}", dailyCron, "2026-03-01", pers(t, "2026-02-27")},
		{"a later day", dailyCron, "{check: upstream, pipeline: up, offset: +1d}", dailyCron, "2026-03-10", pers(t, "2026-03-11")},
		{"same hour", hourlyCron, "{check: upstream, pipeline: up}", hourlyCron, "2026-03-10T07", pers(t, "2026-03-10T07")},
		{"previous hour across midnight", hourlyCron, "{check: upstream, pipeline: up, offset: -1h}", hourlyCron, "2026-03-10T00", pers(t, "2026-03-09T23")},
		{"hours all", dailyCron, "{check: upstream, pipeline: up, hours: all}", hourlyCron, "2026-03-10", dayHours(t, "2026-03-10")},
		{"hours all of yesterday", dailyCron, "{check: upstream, pipeline: up, hours: all, offset: -1d}", hourlyCron, "2026-03-10", dayHours(t, "2026-03-09")},
		{"hours all, spring forward skips T02", dailyCron, "{check: upstream, pipeline: up, hours: all}", nyHourly, "2026-03-08", dayHours(t, "2026-03-08", 2)},
		{"hours all, fall back keeps 24 periods", dailyCron, "{check: upstream, pipeline: up, hours: all}", nyHourly, "2026-11-01", dayHours(t, "2026-11-01")},
		{"a daily period on an hourly upstream waits for its hours", triggerOnly, "{check: upstream, pipeline: up}", hourlyCron, "2026-03-10", dayHours(t, "2026-03-10")},
		{"hours all on a trigger-only upstream", dailyCron, "{check: upstream, pipeline: up, hours: all}", triggerOnly, "2026-03-10", dayHours(t, "2026-03-10")},
		{"an hour on a daily upstream waits for its day", hourlyCron, "{check: upstream, pipeline: up, offset: -3h}", dailyCron, "2026-03-10T02", pers(t, "2026-03-09")},
		{"an hour on a trigger-only upstream maps to the same hour", triggerOnly, "{check: upstream, pipeline: up}", triggerOnly, "2026-03-10T07", pers(t, "2026-03-10T07")},
		{"zones differ: by name, not instant", "{cron: '0 6 * * *', timezone: Asia/Tokyo}", "{check: upstream, pipeline: up}", "{cron: '0 6 * * *', timezone: America/Los_Angeles}", "2026-03-10", pers(t, "2026-03-10")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			down := depPipeline(t, "down", c.downSched, c.rule)
			up := depPipeline(t, "up", c.upSched)
			per := pers(t, c.per)[0]
			got := UpstreamPeriods(down, up, down.Upstreams[0], per)
			if !slices.Equal(got, c.want) {
				t.Fatalf("UpstreamPeriods(%s) = %v, want %v", per, got, c.want)
			}
			// Turned around, each mapped period leads back to per.
			for _, q := range got {
				if back := DownstreamPeriods(down, up, down.Upstreams[0], q); !slices.Contains(back, per) {
					t.Errorf("DownstreamPeriods(%s) = %v, want it to hold %s", q, back, per)
				}
			}
		})
	}
}

func TestDownstreamPeriods(t *testing.T) {
	cases := []struct {
		name            string
		downSched, rule string
		upSched         string
		upPer           string
		want            []schedule.Period
	}{
		{"same day", dailyCron, "{check: upstream, pipeline: up}", dailyCron, "2026-03-10", pers(t, "2026-03-10")},
		{"yesterday's upstream feeds today", dailyCron, "{check: upstream, pipeline: up, offset: -1d}", dailyCron, "2026-03-09", pers(t, "2026-03-10")},
		{"an hour feeds its day", dailyCron, "{check: upstream, pipeline: up, hours: all}", hourlyCron, "2026-03-10T13", pers(t, "2026-03-10")},
		{"an hour feeds the next day with -1d", dailyCron, "{check: upstream, pipeline: up, hours: all, offset: -1d}", hourlyCron, "2026-03-09T23", pers(t, "2026-03-10")},
		{"previous hour", hourlyCron, "{check: upstream, pipeline: up, offset: -1h}", hourlyCron, "2026-03-09T23", pers(t, "2026-03-10T00")},
		{"a day feeds every hour of it", hourlyCron, "{check: upstream, pipeline: up}", dailyCron, "2026-03-10", dayHours(t, "2026-03-10")},
		{"a day upstream is not what an hourly upstream's rule reads", dailyCron, "{check: upstream, pipeline: up, hours: all}", hourlyCron, "2026-03-10", nil},
		{"trigger-only downstream of an hour: the hour, then its day", triggerOnly, "{check: upstream, pipeline: up}", hourlyCron, "2026-03-10T05", pers(t, "2026-03-10T05", "2026-03-10")},
		{"trigger-only downstream of a trigger-only hour", triggerOnly, "{check: upstream, pipeline: up}", triggerOnly, "2026-03-10T05", pers(t, "2026-03-10T05")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			down := depPipeline(t, "down", c.downSched, c.rule)
			up := depPipeline(t, "up", c.upSched)
			q := pers(t, c.upPer)[0]
			got := DownstreamPeriods(down, up, down.Upstreams[0], q)
			if !slices.Equal(got, c.want) {
				t.Fatalf("DownstreamPeriods(%s) = %v, want %v", q, got, c.want)
			}
		})
	}
}

func TestDownstreams(t *testing.T) {
	a := depPipeline(t, "a", dailyCron)
	b := depPipeline(t, "b", dailyCron, "{check: upstream, pipeline: a}", "{check: upstream, pipeline: a, offset: -1d}")
	c := depPipeline(t, "c", dailyCron, "{check: upstream, pipeline: b}")
	d := depPipeline(t, "d", dailyCron, "{check: upstream, pipeline: b}", "{check: upstream, pipeline: a}")
	ids := func(ps []*pipeline.Pipeline) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.ID)
		}
		return out
	}
	all := []*pipeline.Pipeline{d, c, b, a}
	for id, want := range map[string][]string{"a": {"b", "d"}, "b": {"c", "d"}, "c": nil, "x": nil} {
		if got := ids(Downstreams(all, id)); !slices.Equal(got, want) {
			t.Errorf("Downstreams(%s) = %v, want %v", id, got, want)
		}
	}
}

func TestJudgeUpstream(t *testing.T) {
	up := depPipeline(t, "up", hourlyCron)
	u := pipeline.Upstream{Pipeline: "up", AllHours: true}
	ok := func(per string) run.Run {
		return run.Run{Key: run.Key{PipelineID: "up", ScheduleID: "cron", Period: per}, State: run.Completed, Outcome: run.OutcomeSucceeded}
	}
	two := pers(t, "2026-03-10T00", "2026-03-10T01")
	cases := []struct {
		name   string
		up     *pipeline.Pipeline
		pers   []schedule.Period
		runs   []run.Run
		passed bool
		reason string
	}{
		{"all succeeded", up, two, []run.Run{ok("2026-03-10T01"), ok("2026-03-10T00")}, true, "upstream up for the 2 hours of 2026-03-10: succeeded"},
		{"one has no run", up, two, []run.Run{ok("2026-03-10T00")}, false, "upstream up for the 2 hours of 2026-03-10: not yet, 1 of 2 succeeded; waiting for 2026-03-10T01 (no run yet)"},
		{"one is running", up, two[:1], []run.Run{{Key: ok("2026-03-10T00").Key, State: run.Running}}, false, "upstream up for period 2026-03-10T00: not yet (RUNNING)"},
		{"failed", up, two[:1], []run.Run{{Key: ok("2026-03-10T00").Key, State: run.FailedFinal, Outcome: run.OutcomeRetriesExhausted}}, false, "upstream up for period 2026-03-10T00: not yet (failed: retries-exhausted)"},
		{"completed is not enough without success", up, two[:1], []run.Run{{Key: ok("2026-03-10T00").Key, State: run.Completed}}, false, "upstream up for period 2026-03-10T00: not yet (COMPLETED)"},
		{"another pipeline's run does not count", up, two[:1], []run.Run{{Key: run.Key{PipelineID: "other", Period: "2026-03-10T00"}, State: run.Completed, Outcome: run.OutcomeSucceeded}}, false, "upstream up for period 2026-03-10T00: not yet (no run yet)"},
		{"upstream not loaded", nil, two, []run.Run{ok("2026-03-10T01"), ok("2026-03-10T00")}, false, "upstream up is not loaded (no pipeline file defines it, or its config does not load)"},
		{"no period", up, nil, nil, false, "upstream up has no period for this one"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := JudgeUpstream(u, c.up, c.pers, c.runs)
			if got.Passed != c.passed || got.Reason != c.reason {
				t.Fatalf("JudgeUpstream = %v %q, want %v %q", got.Passed, got.Reason, c.passed, c.reason)
			}
			if got.Rule.Key != "up" || string(got.Rule.Op) != "upstream" {
				t.Errorf("rule = %+v, want key up, check upstream", got.Rule)
			}
		})
	}
	t.Run("many waiting are counted, three named", func(t *testing.T) {
		got := JudgeUpstream(u, up, dayHours(t, "2026-03-10"), []run.Run{ok("2026-03-10T05")})
		want := "upstream up for the 24 hours of 2026-03-10: not yet, 1 of 24 succeeded; waiting for 2026-03-10T00 (no run yet), 2026-03-10T01 (no run yet), 2026-03-10T02 (no run yet) and 20 more"
		if got.Reason != want {
			t.Fatalf("reason %q, want %q", got.Reason, want)
		}
	})
}

func TestWithUpstreams(t *testing.T) {
	pass, fail := rule.Result{Passed: true}, rule.Result{}
	sensorsPass := rule.Outcome{Mode: rule.Any, Passed: true, Results: []rule.Result{pass}}
	sensorsFail := rule.Outcome{Mode: rule.Any, Results: []rule.Result{fail}}
	cases := []struct {
		name    string
		out     rule.Outcome
		sensors int
		ups     []rule.Result
		want    bool
	}{
		{"no upstreams keeps the outcome", sensorsFail, 1, nil, false},
		{"sensor rules and upstream pass", sensorsPass, 1, []rule.Result{pass}, true},
		{"an upstream fails even in ANY mode", sensorsPass, 1, []rule.Result{pass, fail}, false},
		{"sensor rules fail", sensorsFail, 1, []rule.Result{pass}, false},
		{"only upstream rules, ANY mode", rule.Outcome{Mode: rule.Any}, 0, []rule.Result{pass}, true},
		{"only upstream rules, failing", rule.Outcome{Mode: rule.All, Passed: true}, 0, []rule.Result{fail}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := WithUpstreams(c.out, c.sensors, c.ups)
			if got.Passed != c.want {
				t.Fatalf("passed = %v, want %v", got.Passed, c.want)
			}
			if len(got.Results) != len(c.out.Results)+len(c.ups) {
				t.Errorf("%d results, want %d", len(got.Results), len(c.out.Results)+len(c.ups))
			}
		})
	}
}

func TestBuildGraph(t *testing.T) {
	a := depPipeline(t, "a", dailyCron)
	b := depPipeline(t, "b", dailyCron, "{check: upstream, pipeline: a, offset: -1d}")
	h := depPipeline(t, "h", hourlyCron, "{check: upstream, pipeline: a, offset: -2h}")
	c := depPipeline(t, "c", dailyCron, "{check: upstream, pipeline: b}", "{check: upstream, pipeline: a}", "{check: upstream, pipeline: ghost, hours: all}")
	g := BuildGraph([]*pipeline.Pipeline{c, h, b, a})
	var nodes []string
	for _, n := range g.Nodes {
		nodes = append(nodes, fmt.Sprintf("%s/%d/%v", n.ID, n.Layer, n.Missing))
	}
	if want := []string{"a/0/false", "ghost/0/true", "b/1/false", "h/1/false", "c/2/false"}; !slices.Equal(nodes, want) {
		t.Errorf("nodes %v, want %v", nodes, want)
	}
	var edges []string
	for _, e := range g.Edges {
		edges = append(edges, e.From+">"+e.To+" "+e.Mapping)
	}
	if want := []string{"a>b offset -1d", "a>c same period", "a>h offset -2h", "b>c same period", "ghost>c hours: all"}; !slices.Equal(edges, want) {
		t.Errorf("edges %v, want %v", edges, want)
	}
	// A cycle still lays out (validate draws a project it refuses).
	x := depPipeline(t, "x", dailyCron, "{check: upstream, pipeline: y}")
	y := depPipeline(t, "y", dailyCron, "{check: upstream, pipeline: x}")
	if g := BuildGraph([]*pipeline.Pipeline{x, y}); len(g.Nodes) != 2 || len(g.Edges) != 2 {
		t.Errorf("cycle graph: %+v", g)
	}
}
