package confdec

import (
	"errors"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/sensor"
)

type window struct {
	Window   time.Duration  `yaml:"window"`
	Interval *time.Duration `yaml:"interval"`
}

type sched struct {
	Cron       string            `yaml:"cron"`
	Timezone   string            `yaml:"timezone"`
	Evaluation *window           `yaml:"evaluation"`
	Dates      []string          `yaml:"dates"`
	Headers    map[string]string `yaml:"headers"`
}

type doc struct {
	ID       string       `yaml:"id,required"`
	Retries  *int         `yaml:"retries"`
	Small    int8         `yaml:"small"`
	Count    uint         `yaml:"count"`
	Ratio    float64      `yaml:"ratio"`
	DryRun   bool         `yaml:"dryRun"`
	Schedule sched        `yaml:"schedule"`
	Value    sensor.Value `yaml:"value"`
	Raw      *yaml.Node   `yaml:"raw"`
	At       time.Time    `yaml:"at"`
	Upper    upper        `yaml:"upper"`
}

// upper is a custom decoder: it accepts only upper-case strings.
type upper string

func (u *upper) DecodeNode(d *Decoder, n *yaml.Node, path string) {
	var s string
	d.Decode(n, path, &s)
	if strings.ToUpper(s) != s {
		d.Errorf(n, path, "want upper case, got %q", s)
		return
	}
	*u = upper(s)
}

func decodeDoc(t *testing.T, src string) (doc, Errors) {
	t.Helper()
	root, err := ParseDocument("f.yaml", []byte(src))
	if err != nil {
		t.Fatalf("ParseDocument: %v", err)
	}
	d := NewDecoder("f.yaml")
	var out doc
	d.Decode(root, "", &out)
	return out, d.Errors()
}

func TestDecodeValid(t *testing.T) {
	out, errs := decodeDoc(t, `
id: gold
retries: 0
small: -3
count: 7
ratio: 2
dryRun: true
schedule:
  cron: "0 8 * * *"
  evaluation: {window: 1h}
  dates: [2026-01-01, "2026-01-02"]
  headers: {X-Id: 123, "a b": c}
value: {count: 5, ok: true}
raw: [1, 2]
at: 2026-03-10T06:00:00Z
upper: ABC
`)
	if len(errs) > 0 {
		t.Fatalf("unexpected errors:\n%v", errs)
	}
	if out.ID != "gold" || out.Retries == nil || *out.Retries != 0 || out.Small != -3 || out.Count != 7 || out.Ratio != 2 || !out.DryRun {
		t.Errorf("scalars: %+v", out)
	}
	if out.Schedule.Evaluation == nil || out.Schedule.Evaluation.Window != time.Hour || out.Schedule.Evaluation.Interval != nil {
		t.Errorf("evaluation: %+v", out.Schedule.Evaluation)
	}
	if strings.Join(out.Schedule.Dates, ",") != "2026-01-01,2026-01-02" {
		t.Errorf("dates: %v", out.Schedule.Dates)
	}
	if out.Schedule.Headers["X-Id"] != "123" || out.Schedule.Headers["a b"] != "c" {
		t.Errorf("headers: %v", out.Schedule.Headers)
	}
	if obj, ok := out.Value.Object(); !ok || obj.Len() != 2 {
		t.Errorf("value: %v", out.Value)
	}
	if out.Raw == nil || out.Raw.Kind != yaml.SequenceNode {
		t.Errorf("raw: %v", out.Raw)
	}
	if !out.At.Equal(time.Date(2026, 3, 10, 6, 0, 0, 0, time.UTC)) || out.Upper != "ABC" {
		t.Errorf("at/upper: %v %v", out.At, out.Upper)
	}
}

func TestPointerSemantics(t *testing.T) {
	for _, tc := range []struct {
		src  string
		want *int
	}{
		{"id: a\n", nil},
		{"id: a\nretries: ~\n", nil},
		{"id: a\nretries: 0\n", new(0)},
		{"id: a\nretries: 3\n", new(3)},
	} {
		out, errs := decodeDoc(t, tc.src)
		if len(errs) > 0 {
			t.Fatalf("%q: %v", tc.src, errs)
		}
		if (out.Retries == nil) != (tc.want == nil) || (out.Retries != nil && *out.Retries != *tc.want) {
			t.Errorf("%q: retries = %v, want %v", tc.src, out.Retries, tc.want)
		}
	}
}

func TestDecodeErrors(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      []string
	}{
		{"typo with suggestion", "id: a\nschedule:\n  timzone: UTC\n",
			[]string{`f.yaml:3: schedule.timzone: unknown field, did you mean "timezone"?`}},
		{"case difference suggested", "id: a\nSchedule: {}\n",
			[]string{`f.yaml:2: Schedule: unknown field, did you mean "schedule"?`}},
		{"unknown field lists fields", "id: a\nschedule: {zzzzzz: 1}\n",
			[]string{`f.yaml:2: schedule.zzzzzz: unknown field (want one of cron, dates, evaluation, headers, timezone)`}},
		{"missing required at parent line", "retries: 1\n",
			[]string{`f.yaml:1: id: missing required field`}},
		{"null required", "id: ~\n",
			[]string{`f.yaml:1: id: missing required field`}},
		{"duplicate key", "id: a\nretries: 1\nretries: 2\n",
			[]string{`f.yaml:3: retries: duplicate key (first at line 2)`}},
		{"duration got list", "id: a\nschedule:\n  evaluation:\n    window: [1]\n",
			[]string{`f.yaml:4: schedule.evaluation.window: want a duration like "5m", got a list`}},
		{"duration got number", "id: a\nschedule: {evaluation: {interval: 30}}\n",
			[]string{`f.yaml:2: schedule.evaluation.interval: want a duration like "5m", got the number 30`}},
		{"bad duration", "id: a\nschedule: {evaluation: {window: 5 minutes}}\n",
			[]string{`f.yaml:2: schedule.evaluation.window: invalid duration "5 minutes": want e.g. 90s, 5m, 1h30m, 2d`}},
		{"int got string", "id: a\nretries: \"3\"\n",
			[]string{`f.yaml:2: retries: want an integer, got the string "3"`}},
		{"int got float", "id: a\nretries: 1.5\n",
			[]string{`f.yaml:2: retries: want an integer, got the number 1.5`}},
		{"int8 overflow", "id: a\nsmall: 300\n",
			[]string{`f.yaml:2: small: integer 300 is out of range`}},
		{"uint negative", "id: a\ncount: -1\n",
			[]string{`f.yaml:2: count: integer -1 is out of range (want 0 or more)`}},
		{"float nan", "id: a\nratio: .nan\n",
			[]string{`f.yaml:2: ratio: want a finite number, got .nan`}},
		{"float infinite", "id: a\nratio: -.inf\n",
			[]string{`f.yaml:2: ratio: want a finite number, got -.inf`}},
		{"uint got float", "id: a\ncount: 1.5\n",
			[]string{`f.yaml:2: count: want an integer, got the number 1.5`}},
		{"bool got string", "id: a\ndryRun: yes\n",
			[]string{`f.yaml:2: dryRun: want true or false, got the string "yes"`}},
		{"string got bool", "id: true\n",
			[]string{`f.yaml:1: id: want a string, got the bool true`}},
		{"string got mapping", "id: {a: 1}\n",
			[]string{`f.yaml:1: id: want a string, got a mapping`}},
		{"list got scalar", "id: a\nschedule: {dates: 2026-01-01}\n",
			[]string{`f.yaml:2: schedule.dates: want a list, got the timestamp 2026-01-01`}},
		{"list item path", "id: a\nschedule:\n  dates:\n    - ok\n    - [x]\n",
			[]string{`f.yaml:5: schedule.dates[1]: want a string, got a list`}},
		{"map value path", "id: a\nschedule:\n  headers:\n    Authorization: [x]\n",
			[]string{`f.yaml:4: schedule.headers.Authorization: want a string, got a list`}},
		{"struct got list", "id: a\nschedule: []\n",
			[]string{`f.yaml:2: schedule: want a mapping, got a list`}},
		{"merge key refused", "base: &b {cron: x}\n",
			[]string{`f.yaml:1: base: unknown field (want one of at, count, dryRun, id, ratio, raw, retries, schedule, small, upper, value)`, `f.yaml:1: id: missing required field`}},
		{"merge key", "id: a\nschedule:\n  <<: {cron: x}\n",
			[]string{`f.yaml:3: schedule: merge keys (<<) are not supported: write the fields out`}},
		{"custom decoder error", "id: a\nupper: abc\n",
			[]string{`f.yaml:2: upper: want upper case, got "abc"`}},
		{"bad timestamp", "id: a\nat: yesterday\n",
			[]string{`f.yaml:2: at: invalid timestamp "yesterday": want RFC 3339, e.g. 2026-03-10T06:00:00Z`}},
		{"non-scalar key", "id: a\n? [x]\n: 1\n",
			[]string{`f.yaml:2: mapping keys must be plain names, got a list`}},
		{"all errors sorted by line", "small: 999\nretries: x\nschedule: {timezon: UTC}\n",
			[]string{
				`f.yaml:1: small: integer 999 is out of range`,
				`f.yaml:1: id: missing required field`,
				`f.yaml:2: retries: want an integer, got the string "x"`,
				`f.yaml:3: schedule.timezon: unknown field, did you mean "timezone"?`,
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, errs := decodeDoc(t, tc.src)
			got := strings.Split(errs.Error(), "\n")
			if errs == nil {
				got = nil
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
			if !errors.Is(errs, ErrInvalid) {
				t.Errorf("errors.Is(ErrInvalid) = false")
			}
		})
	}
}

func TestParseDocument(t *testing.T) {
	for _, tc := range []struct {
		name, src, want string
	}{
		{"empty", "", "f.yaml: empty file: want a YAML mapping"},
		{"only comments", "# nothing\n\n", "f.yaml: empty file: want a YAML mapping"},
		{"null", "~\n", "f.yaml: empty file: want a YAML mapping"},
		{"syntax", "a: 1\n  b: 2\n", "f.yaml:2: YAML syntax: mapping values are not allowed in this context"},
		{"unclosed flow", "a: [1,\n", "f.yaml:1: YAML syntax: did not find expected node content"},
		{"two documents", "a: 1\n---\nb: 2\n", "f.yaml:2: more than one YAML document: want one document per file"},
		{"alias bomb", aliasBomb(), "expands (through aliases)"},
		{"alias cycle", "a: &x [*x]\n", "nests deeper than"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseDocument("f.yaml", []byte(tc.src))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v, want %q", err, tc.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("not ErrInvalid: %v", err)
			}
		})
	}
	for _, ok := range []string{"a: 1\n---\n", "---\na: 1\n", "a: &x {b: 1}\nc: *x\n"} {
		if _, err := ParseDocument("f.yaml", []byte(ok)); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
}

func aliasBomb() string {
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 9; i++ {
		prev := "*a" + string(rune('0'+i-1))
		b.WriteString("a" + string(rune('0'+i)) + ": &a" + string(rune('0'+i)) + " [")
		for j := range 10 {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(prev)
		}
		b.WriteString("]\n")
	}
	return b.String()
}

// A Decoder fed a node tree that never went through ParseDocument still
// stays bounded.
func TestDecodeBoundsAliases(t *testing.T) {
	var root yaml.Node
	if err := yaml.Unmarshal([]byte(aliasBomb()), &root); err != nil {
		t.Fatal(err)
	}
	d := NewDecoder("f.yaml")
	var out map[string][]any
	_ = out
	var vals map[string]sensor.Value
	d.Decode(&root, "", &vals)
	if d.Err() == nil || !strings.Contains(d.Err().Error(), "expands (through aliases)") {
		t.Fatalf("got %v", d.Err())
	}
	var cyc yaml.Node
	if err := yaml.Unmarshal([]byte("a: &x [*x]\n"), &cyc); err != nil {
		t.Fatal(err)
	}
	d = NewDecoder("f.yaml")
	var nested map[string][][]string
	d.Decode(&cyc, "", &nested)
	if d.Err() == nil {
		t.Fatal("cyclic alias decoded without error")
	}
}

func TestLinesAndPaths(t *testing.T) {
	root, err := ParseDocument("f.yaml", []byte("id: a\nschedule:\n  evaluation:\n    window: 1h\n  dates:\n    - 2026-01-01\n"))
	if err != nil {
		t.Fatal(err)
	}
	d := NewDecoder("f.yaml")
	var out doc
	d.Decode(root, "", &out)
	for path, want := range map[string]int{
		"id": 1, "schedule": 2, "schedule.evaluation": 3, "schedule.evaluation.window": 4,
		"schedule.dates[0]": 6,
	} {
		if got := d.Line(path); got != want {
			t.Errorf("Line(%q) = %d, want %d", path, got, want)
		}
	}
	for path, want := range map[string]int{
		"schedule.evaluation.window": 4, "schedule.evaluation.interval": 3, "nope": 1, `schedule.headers["x.y"]`: 2,
	} {
		if got := d.NearestLine(path); got != want {
			t.Errorf("NearestLine(%q) = %d, want %d", path, got, want)
		}
	}
	if d.Line("schedule.evaluation.interval") != 0 || d.Has("schedule.evaluation.interval") || !d.Has("schedule.dates") {
		t.Error("Line/Has of a path that was not decoded")
	}
	d.ErrorAt("schedule.evaluation.interval", "must be set")
	if got := d.Err().Error(); got != "f.yaml:3: schedule.evaluation.interval: must be set" {
		t.Errorf("ErrorAt: %q", got)
	}
	for path, parent := range map[string]string{
		"a.b[2]": "a.b", "a.b": "a", "a": "", `h["x.y"]`: "h", `h["a[1]"]`: "h",
	} {
		if got, _ := Parent(path); got != parent {
			t.Errorf("Parent(%q) = %q, want %q", path, got, parent)
		}
	}
	if Key("h", "a b") != `h["a b"]` || Key("h", "X-Id") != "h.X-Id" || Index("d", 3) != "d[3]" {
		t.Error("path builders")
	}
}

func TestErrorFormat(t *testing.T) {
	for _, tc := range []struct {
		e    Error
		want string
	}{
		{Error{"f.yaml", 3, "a.b", "bad"}, "f.yaml:3: a.b: bad"},
		{Error{"f.yaml", 0, "a.b", "bad"}, "f.yaml: a.b: bad"},
		{Error{"f.yaml", 0, "", "bad"}, "f.yaml: bad"},
		{Error{"", 4, "", "bad"}, "line 4: bad"},
		{Error{"", 0, "", "bad"}, "bad"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("%#v: %q, want %q", tc.e, got, tc.want)
		}
	}
	d := NewDecoder("f.yaml")
	if d.Err() != nil {
		t.Error("fresh decoder has errors")
	}
	d.Add(errors.New("plain"))
	d.Add(Errors{{File: "g.yaml", Line: 2, Msg: "other"}})
	if got := d.Err().Error(); got != "f.yaml: plain\ng.yaml:2: other" {
		t.Errorf("Add: %q", got)
	}
	var nilOut *doc
	d.Decode(nil, "", nilOut)
	if d.ErrorCount() != 3 {
		t.Errorf("Decode into nil pointer should record an error, have %d", d.ErrorCount())
	}
}

func TestSuggest(t *testing.T) {
	names := []string{"time", "timezone", "maxRetries", "dagId", "jobName", "id", "emr-serverless"}
	for in, want := range map[string]string{
		"timzone": "timezone", "timezon": "timezone", "tim": "time", "TimeZone": "timezone", "maxRetry": "maxRetries", "dag_id": "dagId",
		"job_name": "jobName", "emr_serverless": "emr-serverless", "ix": "id", "xyz": "", "cron": "",
	} {
		if got := Suggest(in, names); got != want {
			t.Errorf("Suggest(%q) = %q, want %q", in, got, want)
		}
	}
}
