package pipeline

import (
	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/confdec"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/rule"
)

func parse(t *testing.T, src string) *Pipeline {
	t.Helper()
	p, err := ParsePipeline("p.yaml", []byte(src), testOptions())
	if err != nil {
		t.Fatalf("ParsePipeline:\n%v", err)
	}
	return p
}

// minimal ends inside job, so tests can append job fields.
const minimal = `
pipeline: {id: p}
schedule: {trigger: {key: k, check: exists}}
job:
  type: glue
  config: {jobName: j}
`

func TestDefaults(t *testing.T) {
	p := parse(t, minimal)
	s := p.Schedule
	if s.Location != time.UTC || !s.Cron.IsZero() || s.Time != nil || s.Include != nil || s.Trigger == nil {
		t.Errorf("schedule = %+v", s)
	}
	if s.Evaluation != (Evaluation{Window: time.Hour, Interval: 5 * time.Minute}) {
		t.Errorf("evaluation = %+v", s.Evaluation)
	}
	if !s.Trigger.Deadline.IsZero() || s.Trigger.Rule.Op != rule.Exists || s.Trigger.Rule.Key != "k" {
		t.Errorf("trigger = %+v", s.Trigger)
	}
	if p.SLA != nil || p.PostRun != nil || p.DryRun {
		t.Errorf("sla %v postRun %v dryRun %v", p.SLA, p.PostRun, p.DryRun)
	}
	if p.Validation.Mode != rule.All || len(p.Validation.Rules) != 0 {
		t.Errorf("validation = %+v", p.Validation)
	}
	want := Job{Type: JobGlue, MaxRetries: 0, MaxCodeRetries: 1, MaxDriftReruns: 1, MaxManualReruns: 1,
		TriggerRetries: 3, PollInterval: time.Minute, PollWindow: time.Hour}
	got := p.Job
	got.Config = JobConfig{}
	if got.StuckAfter != nil {
		t.Errorf("stuckAfter = %v, want nil (watchdog.stuckRunThreshold applies)", *got.StuckAfter)
	}
	got.StuckAfter = nil
	if got.Type != want.Type || got.MaxRetries != want.MaxRetries || got.MaxCodeRetries != want.MaxCodeRetries ||
		got.MaxDriftReruns != want.MaxDriftReruns || got.MaxManualReruns != want.MaxManualReruns ||
		got.TriggerRetries != want.TriggerRetries || got.PollInterval != want.PollInterval || got.PollWindow != want.PollWindow {
		t.Errorf("job = %+v, want %+v", got, want)
	}
	if p.ScheduleID() != ScheduleStream {
		t.Errorf("ScheduleID = %q", p.ScheduleID())
	}
	if p.Job.Config.Str("jobName") != "j" || p.Job.Config.Has("arguments") {
		t.Errorf("config = %v", p.Job.Config.Names())
	}
}

// Omitted budgets take their defaults; an explicit 0 is a budget of zero.
func TestPointerSemantics(t *testing.T) {
	p := parse(t, minimal+`  maxRetries: 0
  maxCodeRetries: 0
  maxDriftReruns: 0
  maxManualReruns: 0
  triggerRetries: 0
  jobPollWindowSeconds: 0
`)
	j := p.Job
	if j.MaxRetries != 0 || j.MaxCodeRetries != 0 || j.MaxDriftReruns != 0 || j.MaxManualReruns != 0 || j.TriggerRetries != 0 {
		t.Errorf("explicit zeros lost: %+v", j)
	}
	if j.PollWindow != time.Hour {
		t.Errorf("jobPollWindowSeconds: 0 should keep the default poll window, got %v", j.PollWindow)
	}
	p = parse(t, minimal+"  jobPollWindowSeconds: 7200\n  stuckAfter: 45m\n")
	if p.Job.PollWindow != 2*time.Hour || p.Job.StuckAfter == nil || *p.Job.StuckAfter != 45*time.Minute {
		t.Errorf("poll window %v stuckAfter %v", p.Job.PollWindow, p.Job.StuckAfter)
	}
	pr := parse(t, minimal+"postRun: {rules: [{key: a, check: exists}]}\n").PostRun
	if pr == nil || pr.DriftField != "count" || pr.DriftThreshold != 0 || pr.SensorTimeout != 2*time.Hour || len(pr.Rules) != 1 {
		t.Errorf("postRun defaults = %+v", pr)
	}
	pr = parse(t, minimal+"postRun: {driftThreshold: 0, driftField: rows}\n").PostRun
	if pr.DriftThreshold != 0 || pr.DriftField != "rows" {
		t.Errorf("postRun = %+v", pr)
	}
	// null is absent: the default applies.
	p = parse(t, minimal+"  maxCodeRetries: ~\n")
	if p.Job.MaxCodeRetries != 1 {
		t.Errorf("maxCodeRetries: ~ = %d, want default 1", p.Job.MaxCodeRetries)
	}
}

func TestSLATimezoneDefaults(t *testing.T) {
	src := `
pipeline: {id: p}
schedule: {cron: "0 8 * * *", timezone: America/New_York}
sla: {deadline: "10:00"}
job: {type: glue, config: {jobName: j}}
`
	p := parse(t, src)
	if p.SLA.Location.String() != "America/New_York" {
		t.Errorf("sla location = %v, want the schedule's", p.SLA.Location)
	}
	if p.SLA.ExpectedDuration != 0 || p.SLA.MaxDuration != 0 || p.SLA.Deadline.String() != "10:00" {
		t.Errorf("sla = %+v", p.SLA)
	}
	if p.ScheduleID() != ScheduleCron || p.Schedule.Cron.String() != "0 8 * * *" {
		t.Errorf("cron = %q", p.Schedule.Cron)
	}
	p = parse(t, strings.Replace(src, `deadline: "10:00"`, `deadline: "10:00", timezone: Asia/Tokyo`, 1))
	if p.SLA.Location.String() != "Asia/Tokyo" {
		t.Errorf("sla location = %v", p.SLA.Location)
	}
	p = parse(t, strings.Replace(src, ", timezone: America/New_York", "", 1))
	if p.SLA.Location != time.UTC || p.Schedule.Location != time.UTC {
		t.Errorf("default zones %v %v", p.Schedule.Location, p.SLA.Location)
	}
}

func TestFullFixture(t *testing.T) {
	p, err := LoadPipelineFile("testdata/valid/full.yaml", testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if p.ID != "gold-revenue" || p.Owner != "analytics" || p.Description != "daily revenue rollup" || !p.DryRun {
		t.Errorf("meta = %q %q %q %v", p.ID, p.Owner, p.Description, p.DryRun)
	}
	s := p.Schedule
	if s.Location.String() != "America/New_York" || s.Time == nil || s.Time.String() != "07:30" {
		t.Errorf("zone/time = %v %v", s.Location, s.Time)
	}
	if s.Trigger.Deadline.String() != "+1d 02:00" || s.Evaluation != (Evaluation{2 * time.Hour, 10 * time.Minute}) {
		t.Errorf("trigger/evaluation = %+v %+v", s.Trigger, s.Evaluation)
	}
	ex := s.Exclude
	for date, want := range map[string]bool{
		"2026-03-14": true,  // Saturday
		"2026-03-15": true,  // Sunday
		"2026-03-11": true,  // Wednesday (days: [wed])
		"2026-03-12": false, // Thursday
		"2026-07-03": true,  // inline date
		"2026-12-25": true,  // holidays calendar
	} {
		if got := ex.Days.Contains(mustDate(date)); got != want {
			t.Errorf("excluded(%s) = %v, want %v", date, got, want)
		}
	}
	if !ex.Weekends || ex.Calendar != "holidays" || len(ex.Weekdays) != 1 || ex.Weekdays[0] != time.Wednesday || len(ex.Dates) != 1 {
		t.Errorf("exclude = %+v", ex)
	}
	sla := p.SLA
	if sla.Deadline.String() != "+1d 06:00" || sla.ExpectedDuration != 30*time.Minute || sla.MaxDuration != 4*time.Hour ||
		sla.Location.String() != "Europe/London" || !sla.Critical {
		t.Errorf("sla = %+v", sla)
	}
	v := p.Validation
	if v.Mode != rule.Any || len(v.Rules) != 5 || v.Rules[2].Age != 2*time.Hour || v.Rules[3].Age != 24*time.Hour || v.Rules[3].Op != rule.AgeGT {
		t.Errorf("validation = %+v", v)
	}
	if n, _ := v.Rules[1].Value.Float(); n != 1000 {
		t.Errorf("rule value = %v", v.Rules[1].Value)
	}
	pr := p.PostRun
	if pr.DriftField != "rows" || pr.DriftThreshold != 0.5 || pr.SensorTimeout != 3*time.Hour || len(pr.Rules) != 1 {
		t.Errorf("postRun = %+v", pr)
	}
	j := p.Job
	if j.MaxRetries != 10 || j.MaxCodeRetries != 3 || j.MaxDriftReruns != 5 || j.MaxManualReruns != 5 || j.TriggerRetries != 10 ||
		j.PollInterval != 30*time.Second || j.PollWindow != 24*time.Hour || *j.StuckAfter != 45*time.Minute {
		t.Errorf("job = %+v", j)
	}
}

func TestIncludeAndHourly(t *testing.T) {
	p, err := LoadPipelineFile("testdata/valid/include-calendar.yaml", testOptions())
	if err != nil {
		t.Fatal(err)
	}
	in := p.Schedule.Include
	if in == nil || len(in.Dates) != 2 || in.Calendar != "month-ends" {
		t.Fatalf("include = %+v", in)
	}
	for date, want := range map[string]bool{"2026-03-31": true, "2026-01-31": true, "2026-04-01": false} {
		if in.Days.Contains(mustDate(date)) != want {
			t.Errorf("included(%s) != %v", date, want)
		}
	}
	p, err = LoadPipelineFile("testdata/valid/hourly.yaml", testOptions())
	if err != nil {
		t.Fatal(err)
	}
	if !p.Schedule.Cron.SubDaily() || !p.SLA.Deadline.HourlyOnly() || p.Job.PollWindow != 2*time.Hour {
		t.Errorf("hourly = %+v %+v", p.Schedule, p.SLA)
	}
}

func TestJobConfigAccessors(t *testing.T) {
	p, err := LoadPipelineFile("testdata/valid/job-http.yaml", testOptions())
	if err != nil {
		t.Fatal(err)
	}
	c := p.Job.Config
	if c.Str("method") != "PUT" || c.Duration("timeout") != 45*time.Second || !strings.HasPrefix(c.Str("url"), "https://etl.example.com/run/${PIPELINE}") {
		t.Errorf("http config: method %q timeout %v url %q", c.Str("method"), c.Duration("timeout"), c.Str("url"))
	}
	h := c.Map("headers")
	h["X-Run-Id"] = "changed"
	if c.Map("headers")["X-Run-Id"] != "${RUN_ID}" {
		t.Error("Map must return a copy")
	}
	if strings.Join(c.Names(), ",") != "body,headers,method,timeout,url" {
		t.Errorf("names = %v", c.Names())
	}
	p, _ = LoadPipelineFile("testdata/valid/job-command-string.yaml", testOptions())
	if got := strings.Join(p.Job.Config.Args("command"), "|"); got != "/opt/etl/run|--hour|${HOUR}" {
		t.Errorf("string command args = %q", got)
	}
	p, _ = LoadPipelineFile("testdata/valid/job-command.yaml", testOptions())
	if got := strings.Join(p.Job.Config.Args("command"), "|"); got != "/opt/etl/bronze|--date|${DATE}" {
		t.Errorf("list command args = %q", got)
	}
	p, _ = LoadPipelineFile("testdata/valid/job-databricks.yaml", testOptions())
	if p.Job.Config.Str("jobId") != "987654" {
		t.Errorf("numeric jobId = %q", p.Job.Config.Str("jobId"))
	}
}

func TestEnvAllowOption(t *testing.T) {
	src := `
pipeline: {id: p}
schedule: {cron: "0 8 * * *"}
job: {type: http, config: {url: "https://x.example.com/${env:ETL_HOST}"}}
`
	if _, err := ParsePipeline("p.yaml", []byte(src), Options{}); err == nil {
		t.Error("ETL_HOST accepted under the default allow-list")
	}
	if _, err := ParsePipeline("p.yaml", []byte(src), Options{EnvAllow: []string{"ETL_*"}}); err != nil {
		t.Errorf("ETL_HOST refused under ETL_*: %v", err)
	}
	if _, err := ParsePipeline("p.yaml", []byte(strings.ReplaceAll(src, "ETL_HOST", "INTERLOCK_HOST")), Options{EnvAllow: []string{}}); err == nil {
		t.Error("an empty allow-list must allow nothing")
	}
}

func TestSourceHash(t *testing.T) {
	a := parse(t, minimal)
	b := parse(t, minimal+"# a comment changes the bytes\n")
	if a.Source.SHA256 == b.Source.SHA256 || len(a.Source.SHA256) != 64 || a.Source.File != "p.yaml" {
		t.Errorf("hashes %q %q", a.Source.SHA256, b.Source.SHA256)
	}
}

func TestEmptyInput(t *testing.T) {
	for _, data := range [][]byte{nil, {}, []byte("   \n"), []byte("# only a comment\n")} {
		_, err := ParsePipeline("p.yaml", data, Options{})
		if err == nil || err.Error() != "p.yaml: empty file: want a YAML mapping" {
			t.Errorf("%q: %v", data, err)
		}
	}
	if _, err := ParsePipeline("p.yaml", []byte("[1, 2]"), Options{}); err == nil || !strings.Contains(err.Error(), "want a pipeline document (a mapping), got a list") {
		t.Errorf("list document: %v", err)
	}
}

// A scenario passes inline documents with a path prefix; errors carry it.
func TestDecodePipelineInline(t *testing.T) {
	root, err := confdec.ParseDocument("s.yaml", []byte(`pipelines:
  - ~
  - pipeline: {id: a}
    schedule: {cron: "0 8 * * *", timezon: UTC}
    job: {type: glue, config: {jobName: j}}
  - pipeline: {id: b}
    schedule: {cron: "0 8 * * *"}
    job: {type: glue, config: {jobName: j}}
`))
	if err != nil {
		t.Fatal(err)
	}
	d := confdec.NewDecoder("s.yaml")
	var top struct {
		Pipelines []*yaml.Node `yaml:"pipelines"`
	}
	d.Decode(root, "", &top)
	var got []*Pipeline
	for i, n := range top.Pipelines {
		got = append(got, DecodePipeline(d, n, confdec.Index("pipelines", i), Options{}))
	}
	if got[0] != nil || got[1] != nil || got[2] == nil || got[2].ID != "b" || got[2].Source.File != "s.yaml" || got[2].Source.SHA256 == "" {
		t.Errorf("pipelines = %v", got)
	}
	want := `s.yaml:2: pipelines[0]: empty pipeline document: want a mapping
s.yaml:4: pipelines[1].schedule.timezon: unknown field, did you mean "timezone"?`
	if d.Err() == nil || d.Err().Error() != want {
		t.Errorf("got:\n%v\nwant:\n%s", d.Err(), want)
	}
}

// null is absent, also where absence is an error.
func TestNullSections(t *testing.T) {
	for src, want := range map[string]string{
		"pipeline: {id: p}\nschedule: ~\njob: {type: glue, config: {jobName: j}}\n":                                            "p.yaml:2: schedule: missing: a pipeline needs",
		"pipeline: {id: p}\nschedule: {cron: ~}\njob: {type: glue, config: {jobName: j}}\n":                                    "p.yaml:2: schedule: needs cron or trigger",
		"pipeline: {id: p}\nschedule: {cron: [x]}\njob: {type: glue, config: {jobName: j}}\n":                                  "p.yaml:2: schedule.cron: want a string, got a list",
		"pipeline: {id: p}\nschedule: {trigger: ~, cron: \"@daily\"}\ndryRun: true\njob: {type: glue, config: {jobName: j}}\n": "p.yaml:3: dryRun: needs schedule.trigger",
	} {
		_, err := ParsePipeline("p.yaml", []byte(src), Options{})
		if err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q:\ngot %v\nwant prefix %q", src, err, want)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: cascading errors:\n%v", src, err)
		}
	}
}
