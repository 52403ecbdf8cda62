package watchdog

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// job is the job section every test pipeline shares.
const job = "job: {type: glue, config: {jobName: j}}\n"

// parse builds a pipeline from a small YAML document.
func parse(t testing.TB, doc string) *pipeline.Pipeline {
	t.Helper()
	p, err := pipeline.ParsePipeline("p.yaml", []byte(doc), pipeline.Options{})
	if err != nil {
		t.Fatalf("pipeline: %v\n%s", err, doc)
	}
	return p
}

// at parses an RFC3339 instant.
func at(t testing.TB, s string) time.Time {
	t.Helper()
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// loaded is a watched pipeline loaded long ago.
func loaded(p *pipeline.Pipeline) Pipeline {
	return Pipeline{P: p, FirstLoadedAt: time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)}
}

func snap(now time.Time, ps ...Pipeline) *Snapshot {
	return &Snapshot{
		Now:          now,
		Pipelines:    ps,
		Runs:         map[run.Key]run.Run{},
		Markers:      map[MarkerKey]store.Marker{},
		BreachTimers: map[run.Key]bool{},
	}
}

func key(pipelineID, scheduleID, period string) run.Key {
	return run.Key{PipelineID: pipelineID, ScheduleID: scheduleID, Period: period}
}

func (s *Snapshot) addRun(r run.Run) *Snapshot {
	s.Runs[r.Key] = r
	if !r.State.Terminal() {
		s.ActiveRuns = append(s.ActiveRuns, r)
	}
	return s
}

func (s *Snapshot) addMarker(k run.Key, kind string, when time.Time) *Snapshot {
	s.Markers[MarkerKey{Key: k, Kind: kind}] = store.Marker{Key: k, Kind: kind, At: when}
	return s
}

func (s *Snapshot) addSensor(pipelineID, k string, changed time.Time, fields map[string]sensor.Value) *Snapshot {
	s.Sensors = append(s.Sensors, store.Sensor{PipelineID: pipelineID, Key: k, Data: sensor.NewObject(fields), ChangedAt: changed, WrittenAt: changed})
	return s
}

func str(v string) sensor.Value { return sensor.StringValue(v) }

// got summarises findings as "EVENT pipeline/schedule/period" lines (a
// silent finding shows its action), for comparing with a table's want.
func got(fs []Finding) []string {
	out := []string{}
	for _, f := range fs {
		what := string(f.Event)
		if what == "" {
			what = "(" + string(f.Action) + ")"
		}
		out = append(out, fmt.Sprintf("%s %s/%s/%s", what, f.Key.PipelineID, f.Key.ScheduleID, f.Key.Period))
	}
	return out
}

// runCheck runs one named check the way Pass does (with its data needs).
func runCheck(t *testing.T, name string, s *Snapshot) []Finding {
	t.Helper()
	for _, c := range Checks() {
		if c.Name == name {
			fs, err := c.Run(s)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			for _, f := range fs {
				if f.Check != name {
					t.Errorf("finding %v: Check = %q, want %q", f.Key, f.Check, name)
				}
				if f.Event != "" {
					if _, ok := event.Lookup(f.Event); !ok {
						t.Errorf("finding %v: event %q not in the catalogue", f.Key, f.Event)
					}
					if v := detailString(f, "source"); v != "watchdog" {
						t.Errorf("finding %v: detail source = %q, want watchdog", f.Key, v)
					}
					if detailString(f, "actionHint") == "" {
						t.Errorf("finding %v: detail has no actionHint", f.Key)
					}
					if f.Message == "" {
						t.Errorf("finding %v: no message", f.Key)
					}
				}
			}
			return fs
		}
	}
	t.Fatalf("no check %q", name)
	return nil
}

// expect compares findings with want, in order.
func expect(t *testing.T, fs []Finding, want ...string) {
	t.Helper()
	if want == nil {
		want = []string{}
	}
	if g := got(fs); !slices.Equal(g, want) {
		t.Errorf("findings:\n  got  %s\n  want %s", strings.Join(g, "\n       "), strings.Join(want, "\n       "))
	}
}

// detailString returns a detail field as a string.
func detailString(f Finding, field string) string {
	v, ok := f.Detail.Get(field)
	if !ok {
		return ""
	}
	if s, ok := v.Str(); ok {
		return s
	}
	return v.String()
}

// applyFindings does what a runtime does with a pass's findings, on the
// snapshot: write each marker (if absent), fail timed-out runs, start
// recovered runs, close periods, arm SLA timers. A second pass over the
// result must be silent.
func applyFindings(s *Snapshot, fs []Finding) {
	for _, f := range fs {
		if f.Marker != "" {
			if s.hasMarker(f.Key, f.Marker) {
				continue
			}
			s.addMarker(f.Key, f.Marker, s.Now)
		}
		switch f.Action {
		case ActionFailRun:
			r := *f.Run
			r.State, r.Outcome, r.EndedAt, r.ExpiresAt = run.FailedFinal, run.OutcomeTimedOut, s.Now, time.Time{}
			s.Runs[r.Key] = r
			s.ActiveRuns = slices.DeleteFunc(s.ActiveRuns, func(a run.Run) bool { return a.Key == r.Key })
		case ActionStartRun:
			s.addRun(run.Run{Key: f.Key, State: run.Evaluating, Cause: run.CauseRecovered, CreatedAt: s.Now, StateSince: s.Now, ExpiresAt: s.Now.Add(2 * time.Hour)})
		case ActionClosePeriod:
			s.addRun(run.Close(f.Key, 1, s.Now))
		case ActionArmSLA:
			s.BreachTimers[f.Key] = true
		}
	}
}

func TestPeriodString(t *testing.T) {
	for _, per := range []schedule.Period{
		schedule.Daily(schedule.Date{Year: 2026, Month: 3, Day: 8}),
		schedule.HourlyPeriod(schedule.Date{Year: 2026, Month: 12, Day: 31}, 23),
		schedule.HourlyPeriod(schedule.Date{Year: 999, Month: 1, Day: 1}, 0),
		schedule.Daily(schedule.Date{Year: 12345, Month: 1, Day: 1}),
	} {
		if got, want := periodString(per), per.String(); got != want {
			t.Errorf("periodString = %q, want %q", got, want)
		}
	}
}
