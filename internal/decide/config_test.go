package decide

import (
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/store"
)

func TestConfigLoad(t *testing.T) {
	now := runtest.T0
	cronDoc := "pipeline: {id: c1}\nschedule: {cron: '0 6 * * *'}\njob: {type: command, config: {command: /bin/true}}\n"
	p := runtest.Pipeline(t, cronDoc)
	cronKey := run.PipelineTimer(run.TimerCron, "c1").String()
	key := run.Key{PipelineID: "c1", ScheduleID: p.ScheduleID(), Period: "2026-03-10"}
	for _, c := range []struct {
		name   string
		stored *store.Pipeline
		runs   []run.Run
		want   func(t *testing.T, o *Outcome, l ConfigLoaded)
	}{
		{name: "a new pipeline starts from now", want: func(t *testing.T, o *Outcome, l ConfigLoaded) {
			if l.Kept || l.Restored || l.Row.ConfigVersion != 1 || !l.Row.FirstLoadedAt.Equal(now) {
				t.Fatalf("loaded %+v, want version 1 first loaded now", l)
			}
			if len(o.C.Pipelines) != 1 || o.C.Pipelines[0].ExpectVersion != 0 {
				t.Fatalf("pipeline writes %+v, want the new row", o.C.Pipelines)
			}
			if !slices.ContainsFunc(o.C.Timers, func(w store.TimerWrite) bool { return w.Timer.Key == cronKey && w.Timer.DueAt.After(now) }) {
				t.Fatalf("timers %+v, want the next cron tick", o.C.Timers)
			}
		}},
		{name: "the stored version again is kept", stored: &store.Pipeline{ID: "c1", Version: 3, ConfigVersion: 2, Hash: p.Source.SHA256, FirstLoadedAt: now.Add(-48 * time.Hour)},
			want: func(t *testing.T, o *Outcome, l ConfigLoaded) {
				if !l.Kept || !o.C.Empty() {
					t.Fatalf("loaded %+v outcome %+v, want kept", l, o.C)
				}
			}},
		{name: "a pipeline brought back re-arms its active runs", stored: &store.Pipeline{ID: "c1", Version: 3, ConfigVersion: 2, Hash: p.Source.SHA256,
			FirstLoadedAt: now.Add(-48 * time.Hour), RemovedAt: now.Add(-time.Hour)},
			runs: []run.Run{{Key: key, State: run.Evaluating, Version: 1}},
			want: func(t *testing.T, o *Outcome, l ConfigLoaded) {
				if !l.Restored || !l.Row.RemovedAt.IsZero() || l.Row.ConfigVersion != 2 {
					t.Fatalf("loaded %+v, want restored at version 2", l)
				}
				if !slices.ContainsFunc(o.C.Timers, func(w store.TimerWrite) bool {
					return w.Timer.Key == StepTimerKey(key) && w.Timer.Kind == string(run.StepEvaluate) && w.Timer.DueAt.Equal(now)
				}) {
					t.Fatalf("timers %+v, want the run's evaluate step due now", o.C.Timers)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := world{pipes: map[string]*pipeline.Pipeline{}, rows: map[string]store.Pipeline{}}
			if c.stored != nil {
				w.pipes["c1"], w.rows["c1"] = p, *c.stored
			}
			w.runs = c.runs
			f := w.facts(needs.Load(p, now, c.stored != nil, now))
			var o *Outcome
			var l ConfigLoaded
			if err := w.decide(t, f, func(f *Facts) (err error) {
				o, l, err = ConfigLoad(ConfigLoadIn{Config: p, Doc: []byte(cronDoc), Env: Env{NewID: ids()}}, f, now)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			c.want(t, o, l)
		})
	}
}

func TestConfigRefusal(t *testing.T) {
	now := runtest.T0
	key := run.Key{PipelineID: "c1"}
	kind := run.ConfigInvalidMarker("00ff").String()
	reportedFor := func(sum string) []store.Marker {
		return []store.Marker{{Key: key, Kind: kind, At: now.Add(-time.Hour), Detail: run.ConfigRefusal(sum)}}
	}
	for _, c := range []struct {
		name     string
		markers  []store.Marker
		reported bool
	}{
		{name: "a first refusal is reported"},
		{name: "the same content again is not", markers: reportedFor("aa"), reported: true},
		{name: "new content is news", markers: reportedFor("bb")},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t)
			w.markers = c.markers
			in := ConfigRefusalIn{File: "c1.yaml", Key: key, Kind: kind, Sum: "aa", Msgs: []string{"c1.yaml:1: bad"}, Env: Env{NewID: ids()}}
			var o *Outcome
			var reported bool
			if err := w.decide(t, w.facts(needs.ConfigRefusal("c1")), func(f *Facts) (err error) {
				o, reported, err = ConfigRefusal(in, f, now)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if reported != c.reported || (len(o.C.Events) == 1) == c.reported || (len(o.C.Markers) == 1) == c.reported {
				t.Fatalf("reported %v, outcome %+v; want reported %v", reported, o.C, c.reported)
			}
			acc, err := ConfigAccepted(key, kind, w.facts(needs.ConfigRefusal("c1")), now)
			if err != nil || (len(acc.C.MarkerDeletes) == 1) != (len(c.markers) == 1) {
				t.Fatalf("accepted: %+v, %v; want the marker dropped when there is one", acc.C, err)
			}
		})
	}
}

// TestConfigLoadCycle: a config whose upstream rules close a cycle with
// the pipelines running is refused, naming the cycle; one that closes
// none, or closes one only with a pipeline no longer running, loads.
func TestConfigLoadCycle(t *testing.T) {
	now := runtest.T0
	const ordersDoc = "pipeline: {id: orders}\nschedule: {cron: '0 6 * * *'}\njob: {type: command, config: {command: /bin/true}}\n"
	const revenueDoc = "pipeline: {id: revenue}\nvalidation:\n  rules: [{check: upstream, pipeline: orders}]\njob: {type: command, config: {command: /bin/true}}\n"
	cyclic := runtest.Pipeline(t, "pipeline: {id: orders}\nvalidation:\n  rules: [{check: upstream, pipeline: revenue}]\njob: {type: command, config: {command: /bin/true}}\n")
	for _, c := range []struct {
		name      string
		removed   bool // revenue's file was removed
		wantCycle bool
	}{
		{name: "orders waiting for revenue, which waits for orders, is refused", wantCycle: true},
		{name: "with revenue's file removed it loads", removed: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, ordersDoc, revenueDoc)
			if c.removed {
				row := w.rows["revenue"]
				row.RemovedAt = now.Add(-time.Hour)
				w.rows["revenue"] = row
			}
			f := w.facts(needs.Load(cyclic, now, true, now))
			var o *Outcome
			var l ConfigLoaded
			if err := w.decide(t, f, func(f *Facts) (err error) {
				o, l, err = ConfigLoad(ConfigLoadIn{Config: cyclic, Env: Env{NewID: ids()}}, f, now)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if !c.wantCycle {
				if l.Refused != nil || len(o.C.Pipelines) != 1 {
					t.Fatalf("refused %v, writes %+v: want the config loaded", l.Refused, o.C.Pipelines)
				}
				return
			}
			if l.Refused == nil || !strings.Contains(l.Refused.Error(), "validation.rules: upstream cycle: orders -> revenue -> orders") || !o.C.Empty() {
				t.Fatalf("refused %v, outcome %+v: want the cycle named, nothing written", l.Refused, o.C)
			}
		})
	}
	t.Run("the running pipelines not read", func(t *testing.T) {
		w := newWorld(t, ordersDoc, revenueDoc)
		asked := needs.Load(cyclic, now, true, now)
		asked.AllPipelines = false
		_, _, err := ConfigLoad(ConfigLoadIn{Config: cyclic, Env: Env{NewID: ids()}}, w.facts(asked), now)
		if !isMissing(err, func(m *Missing) bool { return m.Needs.AllPipelines }) {
			t.Fatalf("err %v, want the pipelines missing", err)
		}
	})
	t.Run("a config with no upstream rule reads none", func(t *testing.T) {
		p := runtest.Pipeline(t, ordersDoc)
		if n := needs.Load(p, now, true, now); n.AllPipelines {
			t.Fatalf("needs %+v, want no pipeline list", n)
		}
		if refused, err := CycleCheck(p, &Facts{}); refused != nil || err != nil {
			t.Fatalf("refused %v, err %v: want neither", refused, err)
		}
	})
}

// TestConfigLoadNeedsFirstLoad: a load's needs are named with the
// first-load time its decision gives the row (the SLA facts of the
// periods it arms depend on it), judged on the stored row's config once
// resolved — asked for only when the content changed, a removed row's
// too — and the decision reads nothing the needs did not name.
func TestConfigLoadNeedsFirstLoad(t *testing.T) {
	now := runtest.T0 // 08:00: today's 07:00 breach passed
	doc := func(cron, cmd string) string {
		return "pipeline: {id: c1}\nschedule: {cron: '" + cron + "'}\nsla: {deadline: '07:00'}\njob: {type: command, config: {command: " + cmd + "}}\n"
	}
	p := runtest.Pipeline(t, doc("0 6 * * *", "/bin/true"))
	sameCron := runtest.Pipeline(t, doc("0 6 * * *", "/bin/false"))
	otherCron := runtest.Pipeline(t, doc("0 5 * * *", "/bin/true"))
	before := now.Add(-48 * time.Hour)
	removed := now.Add(-time.Hour)
	for _, c := range []struct {
		name        string
		stored      *pipeline.Pipeline // the stored row's config (nil: none stored)
		removedAt   time.Time
		unloadable  bool // the stored config no longer loads
		wantResolve bool
		wantFirst   time.Time
	}{
		{name: "new", wantFirst: now},
		{name: "unchanged", stored: p, wantFirst: before},
		{name: "changed, same cron", stored: sameCron, wantResolve: true, wantFirst: before},
		{name: "changed cron", stored: otherCron, wantResolve: true, wantFirst: now},
		{name: "restored", stored: p, removedAt: removed, wantFirst: before},
		{name: "removed, back with another cron", stored: otherCron, removedAt: removed, wantResolve: true, wantFirst: now},
		{name: "removed, back with the same cron", stored: sameCron, removedAt: removed, wantResolve: true, wantFirst: before},
		{name: "stored config no longer loads", stored: otherCron, unloadable: true, wantResolve: true, wantFirst: before},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := world{pipes: map[string]*pipeline.Pipeline{}, rows: map[string]store.Pipeline{}}
			if c.stored != nil {
				w.pipes["c1"] = c.stored
				if c.unloadable {
					w.pipes["c1"] = nil
				}
				w.rows["c1"] = store.Pipeline{ID: "c1", Version: 3, ConfigVersion: 2, Hash: c.stored.Source.SHA256, FirstLoadedAt: before, RemovedAt: c.removedAt}
			}
			f := w.facts(needs.Load(p, time.Time{}, false, now))
			delete(f.Configs, "c1") // the round resolved none yet
			n, resolve := ConfigLoadNeeds(p, f, now)
			if got := len(resolve) > 0; got != c.wantResolve || (got && resolve[0] != "c1") {
				t.Fatalf("resolve %v, want the stored config asked: %v", resolve, c.wantResolve)
			}
			if len(resolve) > 0 {
				f.Configs["c1"] = nil
				if w.pipes["c1"] != nil {
					f.Configs["c1"] = &Pipeline{P: w.pipes["c1"], Row: w.rows["c1"]}
				}
				n, resolve = ConfigLoadNeeds(p, f, now)
				if resolve != nil {
					t.Fatalf("resolve %v once resolved", resolve)
				}
			}
			if want := needs.Load(p, c.wantFirst, true, now); !reflect.DeepEqual(n, want) {
				t.Fatalf("needs %+v, want %+v (first loaded %v)", n, want, c.wantFirst)
			}
			g := w.facts(n)
			if w.pipes["c1"] == nil && c.stored != nil {
				g.Configs["c1"] = nil
			}
			var l ConfigLoaded
			if err := w.decide(t, g, func(f *Facts) (err error) {
				_, l, err = ConfigLoad(ConfigLoadIn{Config: p, Doc: []byte("x"), Env: Env{NewID: ids()}}, f, now)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if c.name != "unchanged" && !l.Row.FirstLoadedAt.Equal(c.wantFirst) {
				t.Fatalf("row first loaded %v, want %v (loaded %+v)", l.Row.FirstLoadedAt, c.wantFirst, l)
			}
		})
	}
}
