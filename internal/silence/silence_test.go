package silence

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
)

var t0 = time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)

func ev(pipeline string, typ event.Type, at time.Time) event.Event {
	return event.Event{ID: "e", PipelineID: pipeline, Type: typ, Time: at, Date: "2026-03-10"}
}

func TestMatchersMatches(t *testing.T) {
	e := ev("gold-revenue", event.SLABreach, t0)
	cases := []struct {
		name  string
		m     Matchers
		owner string
		want  bool
	}{
		{"empty matches nothing", Matchers{}, "analytics", false},
		{"glob", Matchers{Pipelines: []string{"gold-*"}}, "", true},
		{"glob no match", Matchers{Pipelines: []string{"silver-*"}}, "", false},
		{"one of several globs", Matchers{Pipelines: []string{"silver-*", "gold-revenue"}}, "", true},
		{"glob star is not a prefix match", Matchers{Pipelines: []string{"gold"}}, "", false},
		{"type", Matchers{Types: []event.Type{event.SLABreach}}, "", true},
		{"other type", Matchers{Types: []event.Type{event.SLAWarning}}, "", false},
		{"level", Matchers{Levels: []event.Level{event.LevelError}}, "", true},
		{"other level", Matchers{Levels: []event.Level{event.LevelWarning}}, "", false},
		{"owner", Matchers{Owners: []string{"analytics"}}, "analytics", true},
		{"other owner", Matchers{Owners: []string{"finance"}}, "analytics", false},
		{"owner unknown", Matchers{Owners: []string{"analytics"}}, "", false},
		{"all fields must match", Matchers{Pipelines: []string{"gold-*"}, Types: []event.Type{event.SLAWarning}}, "", false},
		{"all fields match", Matchers{Pipelines: []string{"gold-*"}, Types: []event.Type{event.SLABreach}, Levels: []event.Level{event.LevelError}, Owners: []string{"analytics"}}, "analytics", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.m.Matches(c.owner, e); got != c.want {
				t.Fatalf("Matches = %v, want %v", got, c.want)
			}
		})
	}
	t.Run("silence events are never silenced", func(t *testing.T) {
		m := Matchers{Pipelines: []string{"*"}}
		for _, typ := range []event.Type{event.SilenceCreated, event.SilenceExpired} {
			if m.Matches("", ev("x", typ, t0)) {
				t.Fatalf("%s matched", typ)
			}
		}
	})
	t.Run("a glob never matches an event of no pipeline", func(t *testing.T) {
		if (Matchers{Pipelines: []string{"*"}}).Matches("", ev("", event.WatchdogDegraded, t0)) {
			t.Fatal("matched")
		}
	})
}

func TestSilenceWindowBounds(t *testing.T) {
	s := Silence{ID: "s1", Matchers: Matchers{Pipelines: []string{"*"}}, StartsAt: t0, EndsAt: t0.Add(2 * time.Hour)}
	expired := s
	expired.ExpiredAt = t0.Add(time.Hour)
	lateExpiry := s
	lateExpiry.ExpiredAt = t0.Add(3 * time.Hour)
	cases := []struct {
		name string
		s    Silence
		at   time.Time
		want bool
	}{
		{"before start", s, t0.Add(-time.Nanosecond), false},
		{"start inclusive", s, t0, true},
		{"inside", s, t0.Add(time.Hour), true},
		{"end exclusive", s, t0.Add(2 * time.Hour), false},
		{"just before end", s, t0.Add(2*time.Hour - time.Nanosecond), true},
		{"expired: ends at ExpiredAt", expired, t0.Add(time.Hour), false},
		{"expired: before ExpiredAt", expired, t0.Add(time.Hour - time.Nanosecond), true},
		{"expiry after the end changes nothing", lateExpiry, t0.Add(2 * time.Hour), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, got := Match([]Silence{c.s}, nil, "", ev("p", event.JobFailed, c.at))
			if got != c.want {
				t.Fatalf("Match at %s = %v, want %v", c.at, got, c.want)
			}
		})
	}
}

func TestMatchPicksEarliestSilenceThenWindow(t *testing.T) {
	all := Matchers{Pipelines: []string{"*"}}
	a := Silence{ID: "b-later", Matchers: all, StartsAt: t0, EndsAt: t0.Add(time.Hour), CreatedAt: t0.Add(time.Minute)}
	b := Silence{ID: "z-first", Matchers: all, StartsAt: t0, EndsAt: t0.Add(time.Hour), CreatedAt: t0}
	w, err := NewWindow("nightly", "0 12 * * *", time.Hour, "UTC", all, "")
	if err != nil {
		t.Fatal(err)
	}
	e := ev("p", event.JobFailed, t0.Add(time.Minute))
	if id, ok := Match([]Silence{a, b}, []Window{w}, "", e); !ok || id != "z-first" {
		t.Fatalf("Match = %q %v, want z-first", id, ok)
	}
	if id, ok := Match(nil, []Window{w}, "", e); !ok || id != "maintenance:nightly" {
		t.Fatalf("Match = %q %v, want the window", id, ok)
	}
	if id, ok := Match(nil, []Window{w}, "", ev("p", event.JobFailed, t0.Add(time.Hour))); ok {
		t.Fatalf("Match at the window's end = %q, want none", id)
	}
}

func TestSilenceCheck(t *testing.T) {
	ok := Silence{Matchers: Matchers{Types: []event.Type{event.SLABreach}}, StartsAt: t0, EndsAt: t0.Add(time.Hour)}
	if err := ok.Check(t0); err != nil {
		t.Fatalf("valid silence: %v", err)
	}
	cases := []struct {
		name  string
		edit  func(*Silence)
		field string
	}{
		{"no matcher", func(s *Silence) { s.Matchers = Matchers{} }, "matchers"},
		{"no end", func(s *Silence) { s.EndsAt = time.Time{} }, "until"},
		{"end in the past", func(s *Silence) { s.EndsAt = t0.Add(-time.Second) }, "until"},
		{"end now", func(s *Silence) { s.EndsAt = t0 }, "until"},
		{"end before start", func(s *Silence) { s.StartsAt = t0.Add(2 * time.Hour) }, "until"},
		{"long comment", func(s *Silence) { s.Comment = strings.Repeat("x", MaxComment+1) }, "comment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := ok
			c.edit(&s)
			err := s.Check(t0)
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != c.field || !errors.Is(err, ErrInvalid) {
				t.Fatalf("Check = %v, want a FieldError on %s", err, c.field)
			}
		})
	}
}

func TestParseMatchers(t *testing.T) {
	m, err := ParseMatchers([]string{"gold-*"}, []string{"sla_breach"}, []string{"ERROR"}, []string{"analytics"})
	if err != nil {
		t.Fatal(err)
	}
	if m.String() != "pipeline=gold-* type=SLA_BREACH level=error owner=analytics" {
		t.Fatalf("String = %q", m.String())
	}
	bad := []struct {
		name                             string
		pipelines, types, levels, owners []string
		field                            string
	}{
		{"malformed glob", []string{"gold-["}, nil, nil, nil, "pipelines[0]"},
		{"unknown type", nil, []string{"SLA_BRAECH"}, nil, nil, "types[0]"},
		{"unknown level", nil, nil, []string{"fatal"}, nil, "levels[0]"},
		{"empty owner", nil, nil, nil, []string{"a", " "}, "owners[1]"},
		{"too many", make([]string, MaxMatchers+1), nil, nil, nil, "pipelines"},
		{"too long", []string{strings.Repeat("a", 300)}, nil, nil, nil, "pipelines[0]"},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseMatchers(c.pipelines, c.types, c.levels, c.owners)
			fes := FieldErrors(err)
			if len(fes) == 0 || fes[0].Field != c.field || !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseMatchers = %v, want an error on %s", err, c.field)
			}
		})
	}
}

// TestParseMatchersEveryRefusal: one call names every refused entry of
// every field, in field order, and a field refused for an empty entry
// has its other entries left unparsed (no second error for "gold-[").
func TestParseMatchersEveryRefusal(t *testing.T) {
	for _, c := range []struct {
		name                             string
		pipelines, types, levels, owners []string
		want                             []string
	}{
		{"each field", []string{"gold-*", "gold-["}, []string{"nope", "SLA_BREACH", "x"}, []string{"fatal"}, make([]string, MaxMatchers+1),
			[]string{"pipelines[1]", "types[0]", "types[2]", "levels[0]", "owners"}},
		{"empty before malformed", []string{" ", "gold-["}, nil, []string{"", "error"}, []string{strings.Repeat("o", 300)},
			[]string{"pipelines[0]", "levels[0]", "owners[0]"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseMatchers(c.pipelines, c.types, c.levels, c.owners)
			var got []string
			for _, fe := range FieldErrors(err) {
				got = append(got, fe.Field)
			}
			if !slices.Equal(got, c.want) {
				t.Fatalf("refused %v, want %v (%v)", got, c.want, err)
			}
		})
	}
	m, err := ParseMatchers([]string{"a", "b-*"}, []string{"job_failed", "SLA_BREACH"}, []string{"info", "Warning"}, []string{"x", "y"})
	if err != nil {
		t.Fatal(err)
	}
	if got := m.String(); got != "pipeline=a,b-* type=JOB_FAILED,SLA_BREACH level=info,warning owner=x,y" {
		t.Fatalf("String = %q", got)
	}
}

func FuzzParseMatchers(f *testing.F) {
	f.Add("gold-*", "SLA_BREACH", "error", "analytics", "gold-revenue")
	f.Add("[", "x", "", "", "")
	f.Add("a\\", "job_failed", "WARNING", "o", "a")
	f.Fuzz(func(t *testing.T, glob, typ, level, owner, pipeline string) {
		m, err := ParseMatchers([]string{glob}, []string{typ}, []string{level}, []string{owner})
		if err != nil {
			if !errors.Is(err, ErrInvalid) || len(FieldErrors(err)) == 0 {
				t.Fatalf("error %v is not a field error", err)
			}
			return
		}
		if m.Empty() {
			t.Fatal("parsed matchers are empty")
		}
		// Matching never panics and agrees with its fields.
		e := ev(pipeline, m.Types[0], t0)
		if m.Matches(owner, e) && e.Level() != m.Levels[0] {
			t.Fatal("matched an event of another level")
		}
	})
}

// TestEveryPipeline: a silence reaches every pipeline when it names no
// owner and no pipeline, or a glob of stars only.
func TestEveryPipeline(t *testing.T) {
	for _, tc := range []struct {
		m    Matchers
		want bool
	}{
		{Matchers{Types: []event.Type{event.SLABreach}}, true},
		{Matchers{Pipelines: []string{"*"}}, true},
		{Matchers{Pipelines: []string{"gold-*", "**"}}, true},
		{Matchers{Pipelines: []string{"gold-*"}}, false},
		{Matchers{Pipelines: []string{"*-daily"}}, false},
		{Matchers{Owners: []string{"sales"}}, false},
		{Matchers{Pipelines: []string{"*"}, Owners: []string{"sales"}}, false},
	} {
		if got := tc.m.EveryPipeline(); got != tc.want {
			t.Errorf("%+v: EveryPipeline() = %v, want %v", tc.m, got, tc.want)
		}
	}
}
