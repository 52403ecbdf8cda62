package pipeline

import (
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/confdec"
)

func TestParseCalendar(t *testing.T) {
	c, err := ParseCalendar("c.yaml", []byte("name: us-holidays\ndays: [Saturday, sun]\ndates: [2026-07-04, \"20261225\"]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if c.Name != "us-holidays" || len(c.Days) != 2 || c.Days[0] != time.Saturday || c.Days[1] != time.Sunday ||
		len(c.Dates) != 2 || c.Dates[1].String() != "2026-12-25" {
		t.Errorf("calendar = %+v", c)
	}
	if c, err := ParseCalendar("c.yaml", []byte("name: empty\n")); err != nil || c.Name != "empty" {
		t.Errorf("a calendar with no days is valid (a placeholder): %v", err)
	}
	for _, tc := range []struct{ name, src, want string }{
		{"missing name", "days: [sat]\n", "c.yaml:1: name: missing required field"},
		{"bad name", "name: a/b\n", `c.yaml:1: name: "a/b": want 1 to 128 letters, digits, '.', '_' or '-'`},
		{"bad day", "name: x\ndays: [sat, someday]\n", `c.yaml:2: days[1]: weekday "someday"`},
		{"bad date", "name: x\ndates:\n  - 2026-02-29\n", `c.yaml:3: dates[0]: date "2026-02-29" does not exist`},
		{"typo", "name: x\ndate: [2026-01-01]\n", `c.yaml:2: date: unknown field, did you mean "dates"?`},
		{"wrong type", "name: x\ndays: sat\n", `c.yaml:2: days: want a list, got the string "sat"`},
		{"empty", "", "c.yaml: empty file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCalendar("c.yaml", []byte(tc.src))
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %v\nwant prefix %q", err, tc.want)
			}
			if !errors.Is(err, confdec.ErrInvalid) {
				t.Errorf("not ErrInvalid")
			}
		})
	}
}

func TestLoadCalendarDir(t *testing.T) {
	dir := t.TempDir()
	write(t, dir, "a.yaml", "name: holidays\ndates: [2026-12-25]\n")
	write(t, dir, "b.yml", "name: weekends\ndays: [sat, sun]\n")
	write(t, dir, "readme.md", "not a calendar")
	cals, err := LoadCalendarDir(dir)
	if err != nil || len(cals) != 2 || cals["weekends"].Days[0] != time.Saturday {
		t.Fatalf("cals = %v, err = %v", cals, err)
	}
	write(t, dir, "c.yaml", "\nname: holidays\n")
	write(t, dir, "d.yaml", "name: [x]\n")
	cals, err = LoadCalendarDir(dir)
	if len(cals) != 2 {
		t.Errorf("valid calendars kept: %v", cals)
	}
	got := strings.ReplaceAll(err.Error(), dir+"/", "")
	want := "c.yaml:2: name: calendar \"holidays\" is already defined in a.yaml\nd.yaml:1: name: want a string, got a list"
	if got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
	if _, err := LoadCalendarDir(dir + "/nope"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing dir: %v", err)
	}
}

func TestCalendarNames(t *testing.T) {
	cases := []struct {
		name string
		s    Schedule
		want []string
	}{
		{"none", Schedule{}, nil},
		{"an inclusion list without a calendar", Schedule{Include: &Include{}}, nil},
		{"exclusion", Schedule{Exclude: Exclude{Calendar: "holidays"}}, []string{"holidays"}},
		{"exclusion, and inclusion dates without a calendar", Schedule{Exclude: Exclude{Calendar: "holidays"}, Include: &Include{}}, []string{"holidays"}},
		{"inclusion", Schedule{Include: &Include{Calendar: "trading"}}, []string{"trading"}},
		{"both, exclusion first", Schedule{Exclude: Exclude{Calendar: "holidays"}, Include: &Include{Calendar: "trading"}}, []string{"holidays", "trading"}},
		{"the same calendar once", Schedule{Exclude: Exclude{Calendar: "x"}, Include: &Include{Calendar: "x"}}, []string{"x"}},
	}
	for _, c := range cases {
		if got := c.s.CalendarNames(); !slices.Equal(got, c.want) {
			t.Errorf("%s: CalendarNames = %v, want %v", c.name, got, c.want)
		}
	}
}
