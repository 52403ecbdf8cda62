package decide

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/lineage"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// The decisions are pure: each test builds the facts a store would have
// answered (loaded, and loaded-absent), calls the decision and reads its
// outcome. No store is involved.

// triggerDoc starts a period on its trigger sensor and waits for
// "landed"; post-run it watches "audit".
const triggerDoc = `
pipeline: {id: p1}
schedule:
  trigger: {key: ready, check: exists}
  evaluation: {window: 1h, interval: 5m}
validation:
  rules: [{key: landed, check: exists}]
postRun:
  rules: [{key: audit, check: exists}]
job: {type: command, config: {command: /bin/true}}
`

// world is the stored records a test's facts are read from.
type world struct {
	pipes   map[string]*pipeline.Pipeline
	rows    map[string]store.Pipeline
	runs    []run.Run
	sensors []store.Sensor
	markers []store.Marker
	timers  []store.Timer
	// backfills are the pipelines' backfills, oldest request first.
	backfills []store.Backfill
	ledger    []store.LedgerEntry
}

// facts are what a store holding w answers to asked: every key asked is
// loaded (present or absent), the configs of the rows read resolved.
func (w world) facts(asked needs.Set) *Facts {
	if asked.AllPipelines { // every row listed is read (as the engine files them)
		for _, id := range slices.Sorted(maps.Keys(w.rows)) {
			asked.Pipelines = append(slices.Clip(asked.Pipelines), id)
		}
	}
	f := &Facts{Asked: asked, Pipelines: map[string]store.Pipeline{}, Sensors: map[needs.SensorRef]store.Sensor{},
		Runs: map[run.Key]run.Run{}, Timers: map[string]store.Timer{}, Markers: map[run.Key][]store.Marker{},
		Configs: map[string]*Pipeline{}}
	if asked.AllPipelines {
		for _, id := range slices.Sorted(maps.Keys(w.rows)) {
			f.AllPipelines = append(f.AllPipelines, w.rows[id])
		}
	}
	for _, id := range asked.Pipelines {
		f.Configs[id] = nil // not running
		if row, ok := w.rows[id]; ok {
			f.Pipelines[id] = row
			f.Configs[id] = &Pipeline{P: w.pipes[id], Row: row}
		}
	}
	for _, s := range w.sensors {
		if ref := (needs.SensorRef{PipelineID: s.PipelineID, Key: s.Key}); slices.Contains(asked.Sensors, ref) {
			f.Sensors[ref] = s
		}
	}
	for _, r := range w.runs {
		if slices.Contains(asked.Runs, r.Key) {
			f.Runs[r.Key] = r
		}
	}
	for _, m := range w.markers {
		if slices.Contains(asked.MarkersOf, m.Key) {
			f.Markers[m.Key] = append(f.Markers[m.Key], m)
		}
	}
	for _, t := range w.timers {
		if slices.Contains(asked.Timers, t.Key) {
			f.Timers[t.Key] = t
		}
	}
	f.RunRanges, f.Changed, f.Active = map[RunRange][]run.Run{}, map[ChangedSince]bool{}, map[string][]run.Run{}
	for _, r := range asked.RunRanges {
		f.RunRanges[RunRange(r)] = nil
		for _, x := range w.runs {
			if x.PipelineID == r.PipelineID && x.ScheduleID == r.ScheduleID && x.Period >= r.From && (r.To == "" || x.Period <= r.To) {
				f.RunRanges[RunRange(r)] = append(f.RunRanges[RunRange(r)], x)
			}
		}
	}
	for _, c := range asked.Changed {
		f.Changed[ChangedSince(c)] = slices.ContainsFunc(w.sensors, func(s store.Sensor) bool { return s.PipelineID == c.PipelineID && s.ChangedAt.After(c.Since) })
	}
	f.Ledgers = map[run.Key][]store.LedgerEntry{}
	for _, l := range w.ledger {
		if slices.Contains(asked.Ledgers, l.Key) {
			f.Ledgers[l.Key] = append(f.Ledgers[l.Key], l)
		}
	}
	f.Prefixed, f.Backfills = map[needs.SensorPrefix][]store.Sensor{}, map[string][]store.Backfill{}
	for _, x := range asked.Prefixes {
		f.Prefixed[x] = nil
		for _, s := range w.sensors {
			if s.PipelineID == x.PipelineID && strings.HasPrefix(s.Key, x.Prefix) {
				f.Prefixed[x] = append(f.Prefixed[x], s)
			}
		}
		slices.SortFunc(f.Prefixed[x], func(a, b store.Sensor) int { return strings.Compare(a.Key, b.Key) })
	}
	for _, id := range asked.Backfills {
		f.Backfills[id] = nil
		for _, bf := range w.backfills {
			if bf.PipelineID == id {
				f.Backfills[id] = append(f.Backfills[id], bf)
			}
		}
	}
	for _, id := range asked.ActiveRuns {
		for _, x := range w.runs {
			if x.PipelineID == id && !x.State.Terminal() {
				f.Active[id] = append(f.Active[id], x)
			}
		}
	}
	return f
}

// decide runs d on facts f as the engine does: what it finds missing is
// read from w and d runs again. A point read the needs did not name (a
// late read) fails the test.
func (w world) decide(t *testing.T, f *Facts, d func(*Facts) error) error {
	t.Helper()
	for range 16 {
		err := d(f)
		m, ok := AsMissing(err)
		if !ok {
			return err
		}
		if !m.Needs.Empty() {
			t.Fatalf("late read: %+v", m.Needs)
		}
		for _, id := range m.Configs {
			f.Configs[id] = nil
			if row, ok := w.rows[id]; ok {
				f.Configs[id] = &Pipeline{P: w.pipes[id], Row: row}
			}
		}
		if len(m.RunRanges)+len(m.Changed) > 0 {
			t.Fatalf("late range read: %v %v", m.RunRanges, m.Changed)
		}
		asked := f.Asked
		asked.Add(m.Rounds)
		g := w.facts(asked)
		g.Configs = f.Configs // as resolved
		*f = *g
	}
	t.Fatal("the decision never stops asking")
	return nil
}

// decided makes entry's decision on f as the engine does (w.decide) and
// checks its error against wantErr (nil: none wanted): ok false when the
// test has nothing more to check (the error wanted came).
func decided[In, T any](t *testing.T, w world, f *Facts, entry func(In, *Facts, time.Time) (*Outcome, T, error), in In, now time.Time, wantErr error) (o *Outcome, v T, ok bool) {
	t.Helper()
	err := w.decide(t, f, func(f *Facts) (err error) {
		o, v, err = entry(in, f, now)
		return err
	})
	switch {
	case wantErr != nil && !errors.Is(err, wantErr):
		t.Fatalf("err = %v, want %v", err, wantErr)
	case wantErr != nil:
		return nil, v, false
	case err != nil:
		t.Fatal(err)
	}
	return o, v, true
}

// configs answers the configs w holds (needs.Configs).
func (w world) configs(id string) *pipeline.Pipeline { return w.pipes[id] }

// sensorFacts are the facts needs.SensorWrite names for a write, read in
// rounds as the engine reads them (the runs read name more).
func (w world) sensorFacts(id, key string, data sensor.Object, now time.Time) *Facts {
	f := w.facts(needs.Set{})
	for range 4 {
		n := needs.SensorWrite(w.configs(id), w.configs, f.ReadRuns, id, key, &data, now)
		if n.Minus(f.Asked).Empty() {
			break
		}
		f = w.facts(n)
	}
	return f
}

func newWorld(t *testing.T, docs ...string) world {
	w := world{pipes: map[string]*pipeline.Pipeline{}, rows: map[string]store.Pipeline{}}
	for _, d := range docs {
		p := runtest.Pipeline(t, d)
		w.pipes[p.ID] = p
		w.rows[p.ID] = store.Pipeline{ID: p.ID, Version: 1, ConfigVersion: 1, FirstLoadedAt: runtest.T0.Add(-24 * time.Hour)}
	}
	return w
}

func ids() func(time.Time) string {
	n := 0
	return func(time.Time) string { n++; return fmt.Sprint(n) }
}

func types(es []event.Event) []event.Type {
	var out []event.Type
	for _, e := range es {
		out = append(out, e.Type)
	}
	return out
}

func TestSensorWrite(t *testing.T) {
	now := runtest.T0
	p := runtest.Pipeline(t, triggerDoc)
	key := run.Key{PipelineID: "p1", ScheduleID: p.ScheduleID(), Period: "2026-03-10"}
	landed := store.Sensor{PipelineID: "p1", Key: "landed", Data: sensor.Object{}, ChangedAt: now.Add(-time.Hour), Version: 3}
	waiting := run.Run{Key: key, State: run.Evaluating, Cause: run.CauseSensor, Version: 2, EvalStartedAt: now.Add(-10 * time.Minute)}
	completed := run.Run{Key: key, State: run.Completed, Version: 5, EndedAt: now.Add(-time.Hour)}
	data := sensor.Object{}
	// An OpenLineage event's content as PutLineage writes it, and the
	// same run's event again (a replay).
	lineageEvent := func(runID string) *sensor.Object {
		o := lineage.SensorData(pipeline.LineageSource{}, lineage.Event{Type: lineage.Complete, RunID: runID, Time: now.Add(-time.Hour)})
		return &o
	}
	replayed := landed
	replayed.Data = *lineageEvent("r1")
	for _, c := range []struct {
		name       string
		key        string
		runs       []run.Run
		sensors    []store.Sensor
		lineage    bool           // the write is a lineage event's
		data       *sensor.Object // the content written (nil: data)
		stale      bool           // want it skipped
		wantErr    error
		changed    bool
		wantRuns   []run.State
		wantEvents []event.Type
	}{
		{name: "trigger data starts the period and triggers when the rules pass", key: "ready", sensors: []store.Sensor{landed}, changed: true,
			wantRuns: []run.State{run.Triggering}, wantEvents: []event.Type{event.ValidationPassed}},
		{name: "trigger data starts the period, which waits for its rules", key: "ready", changed: true,
			wantRuns: []run.State{run.Evaluating}},
		{name: "the same content again is not new data", key: "landed", sensors: []store.Sensor{landed}},
		{name: "a rule's data completes a waiting run", key: "landed", runs: []run.Run{waiting}, changed: true,
			wantRuns: []run.State{run.Triggering}, wantEvents: []event.Type{event.ValidationPassed}},
		{name: "trigger data after success is late data: a rerun", key: "ready", runs: []run.Run{completed}, sensors: []store.Sensor{{PipelineID: "p1", Key: "ready", Data: run.Detail("v", 1), Version: 1}}, changed: true,
			wantRuns: []run.State{run.Evaluating}, wantEvents: []event.Type{event.LateDataArrival, event.RerunAccepted}},
		{name: "a lineage event's replay writes nothing", key: "landed", sensors: []store.Sensor{replayed}, lineage: true, data: lineageEvent("r1"), stale: true},
		{name: "another run's lineage event is written", key: "landed", sensors: []store.Sensor{replayed}, lineage: true, data: lineageEvent("r2"), changed: true},
		{name: "a write that is no lineage event's is never stale", key: "landed", sensors: []store.Sensor{replayed}, data: lineageEvent("r1")},
		{name: "an unknown pipeline", key: "ready", wantErr: ErrUnknownPipeline},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newWorld(t, triggerDoc)
			id := "p1"
			if c.wantErr == ErrUnknownPipeline {
				id = "nope"
			}
			w.runs, w.sensors = c.runs, c.sensors
			data := data
			if c.data != nil {
				data = *c.data
			}
			f := w.sensorFacts(id, c.key, data, now)
			in := SensorWriteIn{PipelineID: id, Key: c.key, Data: &data, Lineage: c.lineage, Env: Env{NewID: ids()}}
			o, res, ok := decided(t, w, f, SensorWrite, in, now, c.wantErr)
			if !ok {
				return
			}
			if res.Skipped != c.stale || res.Changed != c.changed {
				t.Fatalf("result %+v, want skipped %v changed %v", res, c.stale, c.changed)
			}
			if c.stale {
				if !o.C.Empty() {
					t.Fatalf("a stale write's outcome %+v, want nothing", o.C)
				}
				return
			}
			if len(o.C.Sensors) != 1 || o.C.Sensors[0].Sensor.Key != c.key {
				t.Fatalf("sensor writes %+v, want the one of %s", o.C.Sensors, c.key)
			}
			var states []run.State
			for _, r := range o.C.Runs {
				states = append(states, r.Run.State)
			}
			if !slices.Equal(states, c.wantRuns) {
				t.Fatalf("runs written %v, want %v", states, c.wantRuns)
			}
			got := types(o.C.Events)
			for _, want := range c.wantEvents {
				if !slices.Contains(got, want) {
					t.Fatalf("events %v, want one %s", got, want)
				}
			}
			if len(c.wantRuns) == 0 && len(c.wantEvents) == 0 && len(got) > 0 {
				t.Fatalf("events %v, want none", got)
			}
		})
	}
}

// TestEnvRules: a decision evaluates rules with the options its input
// carries (Env, through New): trigger data stamped 10m ahead of now
// passes an age rule within a 15m clock skew, and not within the
// default 5m.
func TestEnvRules(t *testing.T) {
	now := runtest.T0
	doc := strings.Replace(triggerDoc, "{key: ready, check: exists}", "{key: ready, check: age_lt, field: updatedAt, value: 2h}", 1)
	for _, c := range []struct {
		skew    time.Duration
		started bool
	}{{15 * time.Minute, true}, {0, false}} {
		w := newWorld(t, doc)
		data := run.Detail("updatedAt", now.Add(10*time.Minute).Format(time.RFC3339))
		in := SensorWriteIn{PipelineID: "p1", Key: "ready", Data: &data, Env: Env{Rules: rule.Options{MaxClockSkew: c.skew}, NewID: ids()}}
		o, _, err := SensorWrite(in, w.sensorFacts("p1", "ready", data, now), now)
		if err != nil {
			t.Fatal(err)
		}
		if started := len(o.C.Runs) == 1; started != c.started {
			t.Errorf("skew %v: runs %+v, want started %v", c.skew, o.C.Runs, c.started)
		}
	}
}

// TestSensorWriteMissing: a fact the facts do not hold is not read: the
// decision answers *Missing naming it, and decides once it is given.
func TestSensorWriteMissing(t *testing.T) {
	now := runtest.T0
	data := sensor.Object{}
	w := newWorld(t, triggerDoc)
	p := w.pipes["p1"]
	key := run.Key{PipelineID: "p1", ScheduleID: p.ScheduleID(), Period: "2026-03-10"}
	full := w.sensorFacts("p1", "ready", data, now)
	in := SensorWriteIn{PipelineID: "p1", Key: "ready", Data: &data, Env: Env{NewID: ids()}}
	if _, _, err := SensorWrite(in, full, now); err != nil {
		t.Fatalf("with every need: %v", err)
	}
	for _, c := range []struct {
		name string
		drop func(*needs.Set)
		want func(*Missing) bool
	}{
		{"the pipeline", func(n *needs.Set) { n.Pipelines = nil }, func(m *Missing) bool { return slices.Contains(m.Needs.Pipelines, "p1") }},
		{"the written sensor", func(n *needs.Set) {
			n.Sensors = slices.DeleteFunc(slices.Clone(n.Sensors), func(r needs.SensorRef) bool { return r.Key == "ready" })
		}, func(m *Missing) bool {
			return slices.Contains(m.Needs.Sensors, needs.SensorRef{PipelineID: "p1", Key: "ready"})
		}},
		{"the period's run", func(n *needs.Set) {
			n.Runs = slices.DeleteFunc(slices.Clone(n.Runs), func(k run.Key) bool { return k == key })
		}, func(m *Missing) bool { return slices.Contains(m.Needs.Runs, key) }},
		{"the period's markers", func(n *needs.Set) { n.MarkersOf = nil }, func(m *Missing) bool { return len(m.Needs.MarkersOf) > 0 }},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := full.Asked
			c.drop(&asked)
			_, _, err := SensorWrite(in, w.facts(asked), now)
			m, ok := AsMissing(err)
			if !ok || !c.want(m) {
				t.Fatalf("err = %v, want the missing %s", err, c.name)
			}
		})
	}
	t.Run("a config not resolved", func(t *testing.T) {
		f := w.sensorFacts("p1", "ready", data, now)
		delete(f.Configs, "p1")
		_, _, err := SensorWrite(in, f, now)
		if m, ok := AsMissing(err); !ok || !slices.Equal(m.Configs, []string{"p1"}) {
			t.Fatalf("err = %v, want the config of p1 missing", err)
		}
	})
}

func TestTimer(t *testing.T) {
	slaDoc := "pipeline: {id: s1}\nschedule: {cron: '0 6 * * *'}\nsla: {deadline: '07:00'}\njob: {type: command, config: {command: /bin/true}}\n"
	now := runtest.T0
	for _, c := range []struct {
		name       string
		doc        string // "": slaDoc
		timer      func(p *pipeline.Pipeline, key run.Key) store.Timer
		runs       func(key run.Key) []run.Run
		wantEvents []event.Type
		wantMarker string
		wantRuns   int
		moves      bool // the timer is written again, not removed
	}{
		{name: "an SLA breach with no run alerts", timer: func(p *pipeline.Pipeline, key run.Key) store.Timer {
			return store.Timer{Key: run.PeriodTimer(run.TimerSLABreach, key).String(), Kind: string(run.TimerSLABreach), Run: key, DueAt: runtest.HM(7, 0),
				Detail: run.Detail("event", string(event.SLABreach), "deadline", "07:00")}
		}, wantEvents: []event.Type{event.SLABreach}, wantMarker: run.MarkerSLABreach},
		{name: "an SLA breach of a period that completed is silent", timer: func(p *pipeline.Pipeline, key run.Key) store.Timer {
			return store.Timer{Key: run.PeriodTimer(run.TimerSLABreach, key).String(), Kind: string(run.TimerSLABreach), Run: key, DueAt: runtest.HM(7, 0)}
		}, runs: func(key run.Key) []run.Run {
			return []run.Run{{Key: key, State: run.Completed, EndedAt: runtest.HM(6, 30)}}
		}},
		{name: "a cron tick starts its period and moves", timer: func(p *pipeline.Pipeline, key run.Key) store.Timer {
			return store.Timer{Key: run.PipelineTimer(run.TimerCron, "s1").String(), Kind: string(run.TimerCron), Run: run.Key{PipelineID: "s1"}, DueAt: runtest.HM(6, 0)}
		}, wantRuns: 1, moves: true, wantEvents: []event.Type{event.ValidationPassed}},
		{name: "an SLA timer naming no period goes", timer: func(p *pipeline.Pipeline, key run.Key) store.Timer {
			key.Period = "not-a-period"
			return store.Timer{Key: run.PeriodTimer(run.TimerSLABreach, key).String(), Kind: string(run.TimerSLABreach), Run: key, DueAt: runtest.HM(7, 0),
				Detail: run.Detail("event", string(event.SLABreach), "deadline", "07:00")}
		}},
		{name: "a period timer of a pipeline with no SLA goes", doc: "pipeline: {id: s1}\nschedule: {cron: '0 6 * * *'}\njob: {type: command, config: {command: /bin/true}}\n",
			timer: func(p *pipeline.Pipeline, key run.Key) store.Timer {
				return PeriodTimer("s1", runtest.HM(0, 0))
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			doc := c.doc
			if doc == "" {
				doc = slaDoc
			}
			w := newWorld(t, doc)
			p := w.pipes["s1"]
			key := run.Key{PipelineID: "s1", ScheduleID: p.ScheduleID(), Period: "2026-03-10"}
			if c.runs != nil {
				w.runs = c.runs(key)
			}
			tm := c.timer(p, key)
			w.timers = []store.Timer{tm}
			fam := run.TimerFamily(tm.Kind)
			if k, err := run.ParseTimerKey(tm.Key); err == nil {
				fam = k.Family
			}
			f := w.facts(needs.Set{})
			for range 4 {
				n := needs.Timer(w.configs("s1"), w.configs, f.ReadMarkers, tm.Key, fam, tm.Run, tm.DueAt, now)
				// the cron tick's start reads the run of the period it opens
				n.Add(needs.Start(p, key, runtest.Day, w.configs, false))
				n.Add(needs.Set{Runs: []run.Key{run.OtherSchedule(key)}})
				f = w.facts(n)
			}
			var o *Outcome
			err := w.decide(t, f, func(f *Facts) (err error) {
				o, _, err = Timer(TimerIn{Timer: tm, Env: Env{NewID: ids()}}, f, now)
				return err
			})
			if err != nil {
				t.Fatalf("Timer: %v", err)
			}
			got := types(o.C.Events)
			if !slices.Equal(got, c.wantEvents) {
				t.Fatalf("events %v, want %v", got, c.wantEvents)
			}
			if c.wantMarker != "" && !slices.ContainsFunc(o.C.Markers, func(m store.MarkerWrite) bool { return m.Marker.Kind == c.wantMarker }) {
				t.Fatalf("markers %+v, want one %s", o.C.Markers, c.wantMarker)
			}
			if len(o.C.Runs) != c.wantRuns {
				t.Fatalf("runs %+v, want %d", o.C.Runs, c.wantRuns)
			}
			moved := slices.ContainsFunc(o.C.Timers, func(w store.TimerWrite) bool { return w.Timer.Key == tm.Key && w.Timer.DueAt.After(tm.DueAt) })
			removed := slices.ContainsFunc(o.C.TimerDeletes, func(d store.TimerDelete) bool { return d.Key == tm.Key })
			if moved != c.moves || removed == c.moves {
				t.Fatalf("timer moved %v removed %v, want moved %v", moved, removed, c.moves)
			}
		})
	}
	t.Run("an unknown kind is removed, logged", func(t *testing.T) {
		due := now.Add(-time.Minute)
		o, end, err := Timer(TimerIn{Timer: store.Timer{Key: "x", Kind: "nope", DueAt: due}, Env: Env{NewID: ids()}}, &Facts{}, now)
		if err != nil || len(end.Conditions) != 0 {
			t.Fatalf("end %+v err %v", end, err)
		}
		if len(o.C.TimerDeletes) != 1 || o.C.TimerDeletes[0].Key != "x" || len(o.C.Timers) != 0 || len(o.Logs) != 1 {
			t.Fatalf("deletes %+v timers %+v logs %+v, want x removed, logged", o.C.TimerDeletes, o.C.Timers, o.Logs)
		}
	})
	t.Run("a family from the key, else the kind", func(t *testing.T) {
		cron := store.Timer{Key: run.PipelineTimer(run.TimerCron, "p1").String(), Kind: "older"}
		if got := timerFamilyOf(cron); got != run.TimerCron {
			t.Fatalf("family %q, want the key's %q", got, run.TimerCron)
		}
		if got := timerFamilyOf(store.Timer{Key: "not a key", Kind: string(run.TimerResume)}); got != run.TimerResume {
			t.Fatalf("family %q, want the kind's", got)
		}
	})
	t.Run("only a window's end reads the windows", func(t *testing.T) {
		if !ReadsWindows(MaintenanceEndTimer("w", now)) || ReadsWindows(store.Timer{Kind: string(run.TimerSilenceEnd)}) {
			t.Fatal("ReadsWindows: want a window's end timer only")
		}
	})
}

func TestRerunRequest(t *testing.T) {
	now := runtest.T0
	w := newWorld(t, triggerDoc)
	p := w.pipes["p1"]
	key := run.Key{PipelineID: "p1", ScheduleID: p.ScheduleID(), Period: "2026-03-10"}
	w.runs = []run.Run{{Key: key, State: run.Completed, Version: 4, EndedAt: now.Add(-time.Hour)}}
	w.sensors = []store.Sensor{{PipelineID: "p1", Key: "landed", ChangedAt: now.Add(-time.Minute)}} // fresh data since
	in := RerunRequestIn{PipelineID: "p1", Period: runtest.Day.String(), Reason: "fix", RequestID: "r1", Env: Env{NewID: ids()}}
	rounds := func(w world) *Facts { // named as the engine names them: the run read names the rest
		f := w.facts(needs.Set{})
		for range 4 {
			f = w.facts(needs.RerunRequest(p, f.ReadRuns, "p1", runtest.Day))
		}
		return f
	}
	t.Run("accepted", func(t *testing.T) {
		var o *Outcome
		var v RerunDecided
		err := w.decide(t, rounds(w), func(f *Facts) (err error) {
			o, v, err = RerunRequest(in, f, now)
			return err
		})
		if err != nil || !v.Accepted || v.Duplicate {
			t.Fatalf("verdict %+v err %v, want accepted", v, err)
		}
		if len(o.C.Runs) != 1 || !slices.Contains(types(o.C.Events), event.RerunAccepted) {
			t.Fatalf("outcome runs %+v events %v, want the reopened run and RERUN_ACCEPTED", o.C.Runs, types(o.C.Events))
		}
	})
	t.Run("no data changed since the success: the circuit breaker", func(t *testing.T) {
		w := w
		w.sensors = nil
		var o *Outcome
		var v RerunDecided
		err := w.decide(t, rounds(w), func(f *Facts) (err error) {
			o, v, err = RerunRequest(in, f, now)
			return err
		})
		if err != nil || v.Accepted || v.Refusal == "" || len(o.C.Runs) != 0 {
			t.Fatalf("verdict %+v err %v runs %+v, want refused", v, err, o.C.Runs)
		}
	})
	for _, c := range []struct{ name, period, reason string }{
		{"a period not started yet", "2026-03-12", "fix"},
		{"an hour of a daily pipeline", "2026-03-10T05", "fix"},
		{"no period", "yesterday", "fix"},
		{"a reason kept for backfills", "2026-03-10", run.ReasonBackfill},
	} {
		t.Run("refused: "+c.name, func(t *testing.T) {
			in := in
			in.Period, in.Reason = c.period, c.reason
			_, _, err := RerunRequest(in, rounds(w), now)
			if !errors.Is(err, ErrInvalidRequest) {
				t.Fatalf("err = %v, want an invalid request", err)
			}
		})
	}
	t.Run("a request decided before", func(t *testing.T) {
		w := w
		w.markers = []store.Marker{{Key: key, Kind: run.ItemMarker(run.MarkerRerunRequest, "r1").String(), At: now.Add(-time.Minute)}}
		o, v, err := RerunRequest(in, rounds(w), now)
		if err != nil || !v.Duplicate || !o.C.Empty() {
			t.Fatalf("verdict %+v err %v outcome %+v, want a duplicate deciding nothing", v, err, o.C)
		}
	})
}
