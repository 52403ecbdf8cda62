package pipeline

import (
	"bytes"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/schedule"
)

// -update rewrites the "# want:" headers of testdata/invalid from the
// errors the loader reports now; review the diff before keeping it.
var update = flag.Bool("update", false, "rewrite the # want: headers of testdata/invalid")

// testOptions are the calendars fixtures may refer to.
func testOptions() Options {
	return Options{Calendars: map[string]schedule.Calendar{
		"holidays":   {Name: "holidays", Dates: []schedule.Date{mustDate("2026-12-25")}},
		"month-ends": {Name: "month-ends", Dates: []schedule.Date{mustDate("2026-01-31")}},
	}}
}

func mustDate(s string) schedule.Date {
	d, err := schedule.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

const wantPrefix = "# want: "

// wantLines reads the "# want: " header of a fixture.
func wantLines(data []byte) (want []string, body []byte) {
	rest := data
	for bytes.HasPrefix(rest, []byte(wantPrefix)) {
		line, after, _ := bytes.Cut(rest, []byte("\n"))
		want = append(want, strings.TrimPrefix(string(line), wantPrefix))
		rest = after
	}
	return want, rest
}

// gotLines renders errors without their file name: "7: path: message",
// or just the message for an error of the whole file.
func gotLines(file string, err error) []string {
	var out []string
	for _, e := range confdec.AsErrors(file, err) {
		s := e.Error()
		s = strings.TrimPrefix(s, file+":")
		out = append(out, strings.TrimSpace(s))
	}
	return out
}

func TestInvalidFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/invalid/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			want, body := wantLines(data)
			_, err = ParsePipeline(f, data, testOptions())
			if err == nil {
				t.Fatal("loaded without error")
			}
			if !errors.Is(err, confdec.ErrInvalid) {
				t.Errorf("error is not confdec.ErrInvalid: %v", err)
			}
			got := gotLines(f, err)
			if *update {
				// The header's length changes every line number by the
				// same amount: parse once more with the new header.
				hdr := func(lines []string) string {
					var b strings.Builder
					for _, l := range lines {
						b.WriteString(wantPrefix + l + "\n")
					}
					return b.String()
				}
				_, err2 := ParsePipeline(f, []byte(strings.Repeat("#\n", len(got))+string(body)), testOptions())
				got = gotLines(f, err2)
				if err := os.WriteFile(f, []byte(hdr(got)+string(body)), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if len(want) == 0 {
				t.Fatalf("fixture has no %q header; got:\n%s", wantPrefix, strings.Join(got, "\n"))
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("errors differ\ngot:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
			}
		})
	}
}

func TestValidFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/valid/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	seen := map[JobType]bool{}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".yaml"), func(t *testing.T) {
			p, err := LoadPipelineFile(f, testOptions())
			if err != nil {
				t.Fatalf("invalid:\n%v", err)
			}
			seen[p.Job.Type] = true
			if p.Source.File != f || len(p.Source.SHA256) != 64 {
				t.Errorf("source = %+v", p.Source)
			}
		})
	}
	for _, jt := range JobTypes() {
		if !seen[jt] {
			t.Errorf("no valid fixture uses job type %s", jt)
		}
	}
}
