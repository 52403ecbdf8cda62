package watchdog

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store/record"
)

// keptPass is one pass of a Kept: plan at now, refresh with r (and the
// runtime's own unavailable data), and what the snapshot held.
func keptPass(k *Kept, now time.Time, r Read, unavailable ...string) (Refresh, *Snapshot) {
	plan := k.Plan(now)
	s := &Snapshot{Now: now, Unavailable: unavailable}
	k.Refresh(plan, r, now, s)
	return plan, s
}

func runsOf(s *Snapshot) []string {
	var out []string
	for k, r := range s.Runs {
		out = append(out, k.Period+"/"+string(r.State))
	}
	slices.Sort(out)
	return out
}

func TestKeptRefresh(t *testing.T) {
	now := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	r := func(period string, st run.State) run.Run {
		return run.Run{Key: run.Key{PipelineID: "p", ScheduleID: "cron", Period: period}, State: st}
	}
	sn := func(key string, changed time.Time) record.Sensor {
		return record.Sensor{PipelineID: "p", Key: key, ChangedAt: changed}
	}
	mk := func(period, kind string) record.Marker {
		return record.Marker{Key: run.Key{PipelineID: "p", ScheduleID: "cron", Period: period}, Kind: kind}
	}
	fail := errors.New("down")
	type pass struct {
		after       time.Duration // since now
		read        Read
		unavailable []string
		full        bool     // the plan read whole
		runs        []string // the snapshot's runs, period/state
		markers     int
		sensors     []string // the snapshot's sensors, oldest change first
	}
	cases := []struct {
		name   string
		passes []pass
	}{
		{"first pass full, then incremental: an update replaces its run", []pass{
			{0, Read{Runs: []run.Run{r("2026-03-10", run.Evaluating)}}, nil, true, []string{"2026-03-10/EVALUATING"}, 0, nil},
			{5 * time.Minute, Read{Runs: []run.Run{r("2026-03-10", run.Running), r("2026-03-09", run.Completed)}}, nil, false,
				[]string{"2026-03-09/COMPLETED", "2026-03-10/RUNNING"}, 0, nil},
		}},
		{"a run read is kept when later passes read nothing", []pass{
			{0, Read{Runs: []run.Run{r("2026-03-10", run.Evaluating)}}, nil, true, []string{"2026-03-10/EVALUATING"}, 0, nil},
			{5 * time.Minute, Read{}, nil, false, []string{"2026-03-10/EVALUATING"}, 0, nil},
		}},
		{"runs and markers of periods out of the window age out", []pass{
			{0, Read{Runs: []run.Run{r("2026-03-07", run.Completed), r("2026-03-08", run.Completed)},
				Markers: []record.Marker{mk("2026-03-07", "m"), mk("2026-03-08", "m")}}, nil, true,
				[]string{"2026-03-07/COMPLETED", "2026-03-08/COMPLETED"}, 2, nil},
			{24 * time.Hour, Read{}, nil, false, []string{"2026-03-08/COMPLETED"}, 1, nil},
		}},
		{"an old period's run or marker read while the window stays is not kept", []pass{
			{0, Read{Runs: []run.Run{r("2026-03-10", run.Evaluating)}}, nil, true, []string{"2026-03-10/EVALUATING"}, 0, nil},
			{5 * time.Minute, Read{Runs: []run.Run{r("2026-03-06", run.Completed)}, Markers: []record.Marker{mk("2026-03-06", "m")}}, nil, false,
				[]string{"2026-03-10/EVALUATING"}, 0, nil},
		}},
		{"sensors: sorted by change, aged out, replaced by key", []pass{
			{0, Read{SensorsRead: true, Sensors: []record.Sensor{sn("b", now.Add(-time.Hour)), sn("a", now.Add(-47*time.Hour)), sn("c", now.Add(-time.Hour))}}, nil, true,
				nil, 0, []string{"a", "b", "c"}},
			{2 * time.Hour, Read{SensorsRead: true, Sensors: []record.Sensor{sn("b", now.Add(time.Hour))}}, nil, false,
				nil, 0, []string{"c", "b"}},
		}},
		{"sensors not read are forgotten, and read whole the next time", []pass{
			{0, Read{SensorsRead: true, Sensors: []record.Sensor{sn("a", now)}}, nil, true, nil, 0, []string{"a"}},
			{5 * time.Minute, Read{}, nil, false, nil, 0, nil},
		}},
		{"a failed read of its own: what was read is in the snapshot, the next pass reads whole", []pass{
			{0, Read{Runs: []run.Run{r("2026-03-10", run.Evaluating)}}, nil, true, []string{"2026-03-10/EVALUATING"}, 0, nil},
			{5 * time.Minute, Read{Runs: []run.Run{r("2026-03-09", run.Completed)}, MarkersErr: fail}, []string{DataMarkers}, false,
				[]string{"2026-03-09/COMPLETED", "2026-03-10/EVALUATING"}, 0, nil},
			{10 * time.Minute, Read{Runs: []run.Run{r("2026-03-10", run.Running)}}, nil, true, []string{"2026-03-10/RUNNING"}, 0, nil},
		}},
		{"another read failed (the runtime's): the runs read still judge, the next pass reads whole", []pass{
			{0, Read{Runs: []run.Run{r("2026-03-10", run.Evaluating)}}, []string{DataTimers}, true, []string{"2026-03-10/EVALUATING"}, 0, nil},
			{5 * time.Minute, Read{}, nil, true, nil, 0, nil},
		}},
		{"a failed runs read merges nothing", []pass{
			{0, Read{Runs: []run.Run{r("2026-03-10", run.Evaluating)}, RunsErr: fail}, []string{DataRuns}, true, nil, 0, nil},
		}},
		{"a failed read the runtime did not name drops k all the same", []pass{
			{0, Read{SensorsRead: true, SensorsErr: fail}, nil, true, nil, 0, nil},
			{5 * time.Minute, Read{MarkersErr: fail}, nil, true, nil, 0, nil},
			{10 * time.Minute, Read{RunsErr: fail}, nil, true, nil, 0, nil},
			{15 * time.Minute, Read{}, nil, true, nil, 0, nil},
			{20 * time.Minute, Read{}, nil, false, nil, 0, nil},
		}},
		{"a failed sensors read merges nothing and drops the rest", []pass{
			{0, Read{SensorsRead: true, Sensors: []record.Sensor{sn("a", now)}}, nil, true, nil, 0, []string{"a"}},
			{5 * time.Minute, Read{SensorsRead: true, Sensors: []record.Sensor{sn("b", now)}, SensorsErr: fail}, []string{DataSensors}, false, nil, 0, []string{"a"}},
			{10 * time.Minute, Read{SensorsRead: true}, nil, true, nil, 0, nil},
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var k Kept
			for i, p := range c.passes {
				plan, s := keptPass(&k, now.Add(p.after), p.read, p.unavailable...)
				var sensors []string
				for _, x := range s.Sensors {
					sensors = append(sensors, x.Key)
				}
				if plan.Full != p.full || !slices.Equal(runsOf(s), p.runs) || len(s.Markers) != p.markers || !slices.Equal(sensors, p.sensors) {
					t.Fatalf("pass %d: full %v, runs %v, %d markers, sensors %v; want full %v, runs %v, %d markers, sensors %v",
						i, plan.Full, runsOf(s), len(s.Markers), sensors, p.full, p.runs, p.markers, p.sensors)
				}
				// (After a failed read what is kept is dropped whole: the next pass is full.)
				if want := p.read.SensorsRead; p.read.SensorsErr == nil && k.SensorsKept() != want {
					t.Fatalf("pass %d: SensorsKept = %v, want %v", i, k.SensorsKept(), want)
				}
			}
		})
	}
}

// TestKeptFullEveryFullReloadEvery: incremental passes since the last
// full one are counted, and the FullReloadEvery-th after it reads whole.
func TestKeptFullEveryFullReloadEvery(t *testing.T) {
	now := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	var k Kept
	var fulls []int
	for i := range 2*FullReloadEvery + 3 {
		if plan, _ := keptPass(&k, now.Add(time.Duration(i)*time.Minute), Read{}); plan.Full {
			fulls = append(fulls, i)
		}
	}
	if want := []int{0, FullReloadEvery + 1, 2*FullReloadEvery + 2}; !slices.Equal(fulls, want) {
		t.Fatalf("full passes %v, want %v", fulls, want)
	}
	// An incremental pass reads from a little before the last load.
	plan, _ := keptPass(&k, now.Add(time.Hour), Read{})
	last := now.Add(time.Duration(2*FullReloadEvery+2) * time.Minute)
	if plan.Full || !plan.Since.Equal(last.Add(-RefreshOverlap)) {
		t.Fatalf("plan %+v, want since %s", plan, last.Add(-RefreshOverlap))
	}
}

// TestKeptIndexFollowsItsData: what Kept keeps derived between passes
// (grouped markers, sorted and grouped sensors) is, after every pass, what
// a pass would derive from the snapshot's data itself — through markers
// and sensors written, rewritten, read again unchanged, aged out of the
// window, full reloads and failed reads, over many random passes.
func TestKeptIndexFollowsItsData(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 4))
	start := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	kinds := append([]string{run.MarkerPostRunArrived, run.MarkerPostRunMissing, run.MarkerSLAVerdict}, groupedKinds...)
	pipelines := []string{"a", "b", "c"}
	// Each pipeline's trigger needs n >= its threshold; a reload (a new
	// config, a new first load) now and then.
	triggers := []string{"{key: up, check: gte, field: n, value: 1}", "{key: up, check: gte, field: n, value: 2}", "{key: up, check: age_lt, field: at, value: 30h}"}
	now := start
	load := func(id string) Pipeline {
		wp := loaded(parse(t, fmt.Sprintf("pipeline: {id: %s}\nschedule: {trigger: %s}\npostRun: {rules: [{key: audit, check: exists}]}\n%s", id, triggers[rng.IntN(len(triggers))], job)))
		wp.FirstLoadedAt = now.Add(-time.Duration(rng.IntN(60)) * time.Hour)
		return wp
	}
	var watched []Pipeline
	for _, id := range pipelines {
		watched = append(watched, load(id))
	}
	sensorKeys := []string{"up", "up#", "up#", "other"} // "up#": a recent date's
	written := map[[2]string]record.Sensor{}            // the store's sensors
	states := []run.State{run.Completed, run.Completed, run.Running, run.FailedFinal}
	var k Kept
	raised := map[event.Type]int{}
	for pass := range 400 {
		now = now.Add(time.Duration(rng.IntN(4)+1) * 37 * time.Minute)
		var r Read
		for range rng.IntN(3) {
			day := schedule.DateOf(now.Add(-time.Duration(rng.IntN(5*24))*time.Hour), time.UTC)
			x := run.Run{Key: run.Key{PipelineID: pipelines[rng.IntN(3)], ScheduleID: "s", Period: day.String()}, State: states[rng.IntN(len(states))]}
			if x.State == run.Completed {
				x.Outcome, x.EndedAt = run.OutcomeSucceeded, now.Add(-time.Duration(rng.IntN(300))*time.Minute)
			}
			r.Runs = append(r.Runs, x)
		}
		if rng.IntN(40) == 0 {
			r.RunsErr = errors.New("down")
		}
		for range rng.IntN(6) {
			day := schedule.DateOf(now.Add(-time.Duration(rng.IntN(5*24))*time.Hour), time.UTC)
			r.Markers = append(r.Markers, record.Marker{Key: run.Key{PipelineID: pipelines[rng.IntN(3)], ScheduleID: "s", Period: day.String()},
				Kind: kinds[rng.IntN(len(kinds))], At: now.Add(-time.Duration(rng.IntN(100)) * time.Minute)})
		}
		r.SensorsRead = rng.IntN(10) > 0
		for range rng.IntN(3) / 2 {
			key := sensorKeys[rng.IntN(len(sensorKeys))]
			if key == "up#" {
				key += schedule.DateOf(now.Add(-time.Duration(rng.IntN(3*24))*time.Hour), time.UTC).String()
			}
			id := [2]string{pipelines[rng.IntN(3)], key}
			x, ok := written[id]
			if !ok || rng.IntN(2) == 0 { // rewritten, else read again as it was
				x = record.Sensor{PipelineID: id[0], Key: id[1], Version: x.Version + 1, ChangedAt: now.Add(-time.Duration(rng.IntN(50)) * time.Hour), WrittenAt: now,
					Data: sensor.NewObject(map[string]sensor.Value{"n": sensor.IntValue(int64(rng.IntN(3))), "at": sensor.StringValue(now.Add(-time.Duration(rng.IntN(40)) * time.Hour).Format(time.RFC3339))})}
				written[id] = x
			}
			r.Sensors = append(r.Sensors, x)
		}
		if rng.IntN(40) == 0 {
			r.MarkersErr = errors.New("down")
		}
		_, s := keptPass(&k, now, r)
		if s.kept == nil {
			t.Fatalf("pass %d: no kept index", pass)
		}
		fresh := &Snapshot{Now: now, Pipelines: watched, Runs: s.Runs, Markers: s.Markers, Sensors: slices.Clone(s.Sensors)}
		fresh.idx = &passIndex{}
		open := map[run.Key]struct{}{}
		for key, x := range s.Runs {
			if postRunOpen(s.Markers, key, x) {
				open[key] = struct{}{}
			}
		}
		if !reflect.DeepEqual(nonEmpty(s.kept.postRunOpen), nonEmpty(open)) {
			t.Fatalf("pass %d: kept post-run open %v, the data's %v", pass, s.kept.postRunOpen, open)
		}
		if rng.IntN(5) == 0 { // a reload: a new config, or the same one first loaded again
			i := rng.IntN(len(watched))
			if rng.IntN(2) == 0 {
				watched[i] = Pipeline{P: load(pipelines[i]).P, FirstLoadedAt: watched[i].FirstLoadedAt}
			} else {
				watched[i].FirstLoadedAt = now.Add(-time.Duration(rng.IntN(60)) * time.Hour)
			}
		}
		s.Pipelines, fresh.Pipelines, fresh.idx = watched, watched, nil
		kr, fr := Pass(s), Pass(fresh)
		if !reflect.DeepEqual(kr, fr) {
			t.Fatalf("pass %d: findings from what was kept %v, from the data %v", pass, got(kr.Findings), got(fr.Findings))
		}
		for _, f := range kr.Findings {
			raised[f.Event]++
		}
		for _, kind := range groupedKinds {
			if got, want := s.kept.grouped[kind], fresh.markersOf(kind); !reflect.DeepEqual(nonEmpty(got), nonEmpty(want)) {
				t.Fatalf("pass %d: kept %s markers %v, the data's %v", pass, kind, got, want)
			}
		}
		var want []record.Sensor
		for _, x := range k.sensors {
			want = append(want, x)
		}
		slices.SortFunc(want, func(a, b record.Sensor) int {
			if c := a.ChangedAt.Compare(b.ChangedAt); c != 0 {
				return c
			}
			return strings.Compare(a.PipelineID+"/"+a.Key, b.PipelineID+"/"+b.Key)
		})
		if len(want) > 0 && want[0].ChangedAt.Before(now.Add(-Lookback)) || !reflect.DeepEqual(nonEmpty(s.Sensors), nonEmpty(want)) {
			t.Fatalf("pass %d: sensors %v, kept %v", pass, s.Sensors, want)
		}
		if !reflect.DeepEqual(nonEmpty(s.kept.sensors), nonEmpty(groupSensors(s.Sensors))) {
			t.Fatalf("pass %d: kept sensors by pipeline %v, the data's %v", pass, s.kept.sensors, groupSensors(s.Sensors))
		}
	}
	if raised[event.PostRunSensorMissing] == 0 || raised[event.TriggerRecovered] == 0 {
		t.Fatalf("findings %v: the comparison proved little", raised)
	}
}

// nonEmpty is v, or nil when it is an empty slice or map (DeepEqual tells
// them apart; the checks do not).
func nonEmpty[T any](v T) any {
	if rv := reflect.ValueOf(v); (rv.Kind() == reflect.Slice || rv.Kind() == reflect.Map) && rv.Len() == 0 {
		return nil
	}
	return v
}
