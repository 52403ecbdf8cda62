package scenario

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/confdec"
)

const minimal = `name: minimal
start: 2026-03-10T00:00:00Z
end: 2026-03-10T12:00:00Z
pipelines:
  - pipeline: {id: p}
    schedule: {trigger: {key: k, check: exists}}
    job: {type: glue, config: {jobName: j}}
timeline:
  - at: 2026-03-10T01:00:00Z
    sensor: {pipeline: p, key: k, data: {n: 1, at: "${now}", ms: "${now_ms}", day: "d-${date}"}}
  - at: 2026-03-10T00:30:00Z
    pause: {pipeline: p}
expect:
  events:
    - {type: JOB_TRIGGERED, pipeline: p, count: 1}
`

func TestParseMinimal(t *testing.T) {
	sc, err := Parse("m.yaml", []byte(minimal))
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Pipelines) != 1 || len(sc.Docs) != 1 || len(sc.Timeline) != 2 {
		t.Fatalf("parsed: %d pipelines, %d docs, %d actions", len(sc.Pipelines), len(sc.Docs), len(sc.Timeline))
	}
	if sc.Timeline[0].Pause == nil || sc.Timeline[1].Sensor == nil {
		t.Fatal("timeline not sorted by time")
	}
	now := time.Date(2026, 3, 10, 1, 0, 0, 0, time.UTC)
	data, err := sc.Timeline[1].Sensor.Render(now)
	if err != nil {
		t.Fatal(err)
	}
	at, _ := data.Get("at")
	ms, _ := data.Get("ms")
	day, _ := data.Get("day")
	if s, _ := at.Str(); s != "2026-03-10T01:00:00Z" {
		t.Errorf("${now} = %v", at)
	}
	if n, ok := ms.Int(); !ok || n != now.UnixMilli() {
		t.Errorf("${now_ms} = %v (want a number)", ms)
	}
	if s, _ := day.Str(); s != "d-2026-03-10" {
		t.Errorf("${date} inside a string = %v", day)
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, edit, want string
	}{
		{"unknown event type", strings.Replace(minimal, "JOB_TRIGGERED", "JOB_TRIGGER", 1), "expect.events[0].type: unknown event type"},
		{"lowercase event type suggests", strings.Replace(minimal, "JOB_TRIGGERED", "job-triggered", 1), `did you mean "JOB_TRIGGERED"?`},
		{"action outside the simulation", strings.Replace(minimal, "2026-03-10T01:00:00Z\n    sensor", "2026-03-11T01:00:00Z\n    sensor", 1), "is outside the simulation"},
		{"two actions in one entry", strings.Replace(minimal, "    pause: {pipeline: p}", "    pause: {pipeline: p}\n    restart: true", 1), "want exactly one action"},
		{"unknown pipeline", strings.Replace(minimal, "pause: {pipeline: p}", "pause: {pipeline: q}", 1), `unknown pipeline "q"`},
		{"end before start", strings.Replace(minimal, "end: 2026-03-10T12:00:00Z", "end: 2026-03-09T12:00:00Z", 1), "end: must be after start"},
		{"bad job result", minimal + "jobs:\n  p: [{result: maybe}]\n", `unknown result "maybe"`},
		{"refused: false", strings.Replace(minimal, "    pause: {pipeline: p}", "    pause: {pipeline: p}\n    refused: false", 1), "timeline[1].refused: must be true"},
		{"a restart cannot be refused", strings.Replace(minimal, "    pause: {pipeline: p}", "    restart: true\n    refused: true", 1), "only a sensor, deleteSensor, rerun, pause, resume, backfill, cancelBackfill, silence or expireSilence can be refused"},
		{"backfill: a bad period", strings.Replace(minimal, "    pause: {pipeline: p}", "    backfill: {pipeline: p, from: 2026-03-01, to: 2026-03-32}", 1), `timeline[1].backfill.to: want a period like 2026-03-10 or 2026-03-10T07, got "2026-03-32"`},
		{"backfill: unknown only", strings.Replace(minimal, "    pause: {pipeline: p}", "    backfill: {pipeline: p, from: 2026-03-01, to: 2026-03-02, only: some}", 1), `timeline[1].backfill.only: want missing, failed or all, got "some"`},
		{"backfill: unknown field", strings.Replace(minimal, "    pause: {pipeline: p}", "    backfill: {pipeline: p, from: 2026-03-01, to: 2026-03-02, max: 2}", 1), "max"},
		{"cancelBackfill: unknown pipeline", strings.Replace(minimal, "    pause: {pipeline: p}", "    cancelBackfill: {pipeline: q}", 1), `timeline[1].cancelBackfill.pipeline: unknown pipeline "q"`},
		{"silence with no matcher", strings.Replace(minimal, "pause: {pipeline: p}", "silence: {duration: 1h}", 1), "timeline[1].silence: at least one of pipelines"},
		{"silence with both ends", strings.Replace(minimal, "pause: {pipeline: p}", "silence: {pipelines: [p], duration: 1h, until: 2026-03-10T05:00:00Z}", 1), "want exactly one of duration and until"},
		{"silence with no end", strings.Replace(minimal, "pause: {pipeline: p}", "silence: {pipelines: [p]}", 1), "want exactly one of duration and until"},
		{"silence with a bad type", strings.Replace(minimal, "pause: {pipeline: p}", "silence: {types: [SLA_BRAECH], duration: 1h}", 1), "timeline[1].silence.types[0]: unknown event type"},
		{"silence with a bad glob", strings.Replace(minimal, "pause: {pipeline: p}", "silence: {pipelines: [\"a[\"], duration: 1h}", 1), "timeline[1].silence.pipelines[0]: malformed glob"},
		{"expireSilence with no id", strings.Replace(minimal, "pause: {pipeline: p}", "expireSilence: {}", 1), "timeline[1].expireSilence.id: required"},
		{"message: empty", strings.Replace(minimal, "{type: JOB_TRIGGERED", "{message: \"\", type: JOB_TRIGGERED", 1), "expect.events[0].message: want a text the message contains, not an empty one"},
		{"message: negative times", strings.Replace(minimal, "{type: JOB_TRIGGERED", "{message: {contains: x, times: -1}, type: JOB_TRIGGERED", 1), "expect.events[0].message.times: must not be negative"},
		{"message: no contains", strings.Replace(minimal, "{type: JOB_TRIGGERED", "{message: {times: 1}, type: JOB_TRIGGERED", 1), "contains"},
		{"message: a list", strings.Replace(minimal, "{type: JOB_TRIGGERED", "{message: [a], type: JOB_TRIGGERED", 1), "expect.events[0].message: want a text the message contains"},
		{"order of one", minimal + "  order:\n    - [{type: JOB_TRIGGERED}]\n", "expect.order[0]: want at least two matchers"},
		{"order with a bad type", minimal + "  order:\n    - [{type: JOB_TRIGGERED}, {type: NOPE}]\n", "expect.order[0][1].type: unknown event type"},
		{"silenced must be a bool", strings.Replace(minimal, "{type: JOB_TRIGGERED", "{silenced: maybe, type: JOB_TRIGGERED", 1), "silenced"},
		{"bad maintenance window", strings.Replace(minimal, "pipelines:", "settings:\n  maintenance: [{name: w, cron: \"0 1 * * *\", duration: 1h, timezone: Mars/X, pipelines: [p]}]\npipelines:", 1), "maintenance[0].timezone: unknown time zone"},
		{"invalid pipeline document", strings.Replace(minimal, "check: exists", "check: exist", 1), "pipelines[0].schedule.trigger.check: unknown operator"},
		// Sensor data that cannot be a sensor object is an error in the
		// file, with its line, not a write refused at its time.
		{"merge key in sensor data", strings.Replace(minimal, "data: {n: 1,", "data: {<<: {x: 1}, n: 1,", 1), "m.yaml:10: timeline[0].sensor.data: merge key (<<) at line 10 is not supported"},
		{"non-scalar key in sensor data", strings.Replace(minimal, "data: {n: 1,", "data: {? [a, b] : 1, n: 1,", 1), "m.yaml:10: timeline[0].sensor.data: mapping key at line 10 is a sequence"},
		{"key twice in sensor data", strings.Replace(minimal, "data: {n: 1,", "data: {n: 1, n: 2,", 1), `m.yaml:10: timeline[0].sensor.data: duplicate key "n" at line 10`},
		{"merge key in a rule value", strings.Replace(minimal, "    job: {type: glue", "    validation: {rules: [{key: k, check: equals, field: f, value: {<<: {a: 1}}}]}\n    job: {type: glue", 1), "m.yaml:7: pipelines[0].validation.rules[0].value: invalid value: merge key (<<) at line 7 is not supported"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("m.yaml", []byte(c.edit))
			var errs confdec.Errors
			if !errors.As(err, &errs) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to contain %q", err, c.want)
			}
			for _, e := range errs {
				if e.Line == 0 {
					t.Errorf("error without a line: %v", e)
				}
			}
		})
	}
}

func TestFileReferences(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "p.yaml"), []byte("pipeline: {id: p}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: glue, config: {jobName: j}}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	src := strings.Replace(minimal, "  - pipeline: {id: p}\n    schedule: {trigger: {key: k, check: exists}}\n    job: {type: glue, config: {jobName: j}}\n", "  - {file: p.yaml}\n", 1)
	path := filepath.Join(dir, "s.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	sc, err := Load(path)
	if err != nil || len(sc.Pipelines) != 1 || sc.Docs[0].File != filepath.Join(dir, "p.yaml") {
		t.Fatalf("Load: %v %+v", err, sc)
	}
	bad := strings.Replace(src, "p.yaml", "missing.yaml", 1)
	if _, err := Parse(path, []byte(bad)); err == nil || !strings.Contains(err.Error(), "missing.yaml") {
		t.Fatalf("missing file: %v", err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(minimal))
	f.Add([]byte("name: x\nstart: 2026-01-01T00:00:00Z\nend: 2026-01-02T00:00:00Z\npipelines: []\n"))
	f.Add([]byte("timeline: [{at: 1, restart: true}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		sc, err := Parse("f.yaml", data)
		if err == nil && sc == nil {
			t.Fatal("nil scenario without error")
		}
	})
}

// A config action may introduce a pipeline that later actions name: its
// pipeline.id (pipeline.IDOf) makes it known, inline or in a file.
func TestConfigActionIntroducesPipeline(t *testing.T) {
	const action = `  - at: 2026-03-10T02:00:00Z
    config: {pipeline: {id: q}, schedule: {trigger: {key: k, check: exists}}, job: {type: glue, config: {jobName: j}}}
  - at: 2026-03-10T03:00:00Z
    pause: {pipeline: q}
expect:`
	if _, err := Parse("m.yaml", []byte(strings.Replace(minimal, "expect:", action, 1))); err != nil {
		t.Fatalf("a pipeline introduced by a config action is unknown: %v", err)
	}
	dir := t.TempDir()
	doc := "pipeline: {id: q}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: glue, config: {jobName: j}}\n"
	if err := os.WriteFile(filepath.Join(dir, "q.yaml"), []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	fromFile := strings.Replace(action, "config: {pipeline: {id: q}, schedule: {trigger: {key: k, check: exists}}, job: {type: glue, config: {jobName: j}}}", "config: {file: q.yaml}", 1)
	if _, err := Parse(filepath.Join(dir, "m.yaml"), []byte(strings.Replace(minimal, "expect:", fromFile, 1))); err != nil {
		t.Fatalf("a pipeline introduced by a config file is unknown: %v", err)
	}
	noID := strings.Replace(action, "pipeline: {id: q}", "pipeline: {owner: o}", 1)
	if _, err := Parse("m.yaml", []byte(strings.Replace(minimal, "expect:", noID, 1))); err == nil || !strings.Contains(err.Error(), `unknown pipeline "q"`) {
		t.Fatalf("a config action without pipeline.id made q known: %v", err)
	}
}

// TestParseSilenceMatchers: a silence action's four matcher fields
// (silence.Written, inline) are each read into its matchers.
func TestParseSilenceMatchers(t *testing.T) {
	src := strings.Replace(minimal, "pause: {pipeline: p}", "silence: {pipelines: [p], types: [sla_breach], levels: [error], owners: [finance], duration: 1h}", 1)
	sc, err := Parse("m.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	s := sc.Timeline[0].Silence
	if s == nil {
		t.Fatal("no silence action")
	}
	if got := s.Matchers.String(); got != "pipeline=p type=SLA_BREACH level=error owner=finance" {
		t.Fatalf("matchers %q", got)
	}
}
