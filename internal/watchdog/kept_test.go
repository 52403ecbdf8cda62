package watchdog

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
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
