package silence

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
)

func TestNew(t *testing.T) {
	now := utc("2026-05-01T10:00:00Z")
	gold := Matchers{Pipelines: []string{"gold"}}
	cases := []struct {
		name    string
		req     Request
		wantID  string
		wantEnd string
		field   string // the refused field; "" when accepted
	}{
		{"duration: ends now plus it", Request{Matchers: gold, Duration: 3 * time.Hour}, "generated", "2026-05-01T13:00:00Z", ""},
		{"until", Request{ID: "deploy-1.a_b", Matchers: gold, Until: now.Add(time.Hour)}, "deploy-1.a_b", "2026-05-01T11:00:00Z", ""},
		{"until and duration", Request{Matchers: gold, Until: now.Add(time.Hour), Duration: time.Hour}, "", "", "until and duration"},
		{"negative duration", Request{Matchers: gold, Duration: -time.Minute}, "", "", "duration"},
		{"no end", Request{Matchers: gold}, "", "", "until"},
		{"end now", Request{Matchers: gold, Until: now}, "", "", "until"},
		{"end in the past", Request{Matchers: gold, Until: now.Add(-time.Second)}, "", "", "until"},
		{"a second after now", Request{Matchers: gold, Until: now.Add(time.Second)}, "generated", "2026-05-01T10:00:01Z", ""},
		{"exactly MaxSpan ahead", Request{Matchers: gold, Duration: MaxSpan}, "generated", now.Add(MaxSpan).Format(time.RFC3339), ""},
		{"beyond MaxSpan", Request{Matchers: gold, Duration: MaxSpan + time.Second}, "", "", "until"},
		{"no matcher", Request{Duration: time.Hour}, "", "", "matchers"},
		{"id with a space", Request{ID: "a b", Matchers: gold, Duration: time.Hour}, "", "", "id"},
		{"id with a slash", Request{ID: "a/b", Matchers: gold, Duration: time.Hour}, "", "", "id"},
		{"id of MaxID", Request{ID: strings.Repeat("x", MaxID), Matchers: gold, Duration: time.Hour}, strings.Repeat("x", MaxID), "2026-05-01T11:00:00Z", ""},
		{"id over MaxID", Request{ID: strings.Repeat("x", MaxID+1), Matchers: gold, Duration: time.Hour}, "", "", "id"},
		{"comment too long", Request{Matchers: gold, Duration: time.Hour, Comment: strings.Repeat("c", MaxComment+1)}, "", "", "comment"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := New(c.req, now, "generated")
			if c.field != "" {
				fes := FieldErrors(err)
				if !errors.Is(err, ErrInvalid) || len(fes) != 1 || fes[0].Field != c.field {
					t.Fatalf("New = %+v, %v; want refused on %q", s, err, c.field)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.ID != c.wantID || !s.EndsAt.Equal(utc(c.wantEnd)) || !s.StartsAt.Equal(now) || !s.CreatedAt.Equal(now) {
				t.Fatalf("New = %+v; want id %s, %s to %s", s, c.wantID, now, c.wantEnd)
			}
		})
	}
}

func TestExpireAndOver(t *testing.T) {
	now := utc("2026-05-01T10:00:00Z")
	s := Silence{ID: "s", StartsAt: now.Add(-time.Hour), EndsAt: now.Add(time.Hour)}
	cases := []struct {
		name     string
		s        Silence
		over     bool
		changed  bool
		wantEnds time.Time // End() after Expire
	}{
		{"running: ends now", s, false, true, now},
		{"ends now: over, unchanged", Silence{ID: "s", EndsAt: now}, true, false, now},
		{"ended: over, unchanged", Silence{ID: "s", EndsAt: now.Add(-time.Minute)}, true, false, now.Add(-time.Minute)},
		{"expired before: over, unchanged", Silence{ID: "s", EndsAt: now.Add(time.Hour), ExpiredAt: now.Add(-time.Minute)}, true, false, now.Add(-time.Minute)},
		{"ends a nanosecond later: running", Silence{ID: "s", EndsAt: now.Add(time.Nanosecond)}, false, true, now},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.s.Over(now); got != c.over {
				t.Fatalf("Over = %v, want %v", got, c.over)
			}
			got, changed := c.s.Expire(now)
			if changed != c.changed || !got.End().Equal(c.wantEnds) {
				t.Fatalf("Expire = %+v, %v; want end %s, changed %v", got, changed, c.wantEnds, c.changed)
			}
			if !changed && (got.ID != c.s.ID || !got.ExpiredAt.Equal(c.s.ExpiredAt)) {
				t.Fatalf("Expire changed %+v into %+v", c.s, got)
			}
		})
	}
}

func TestArmWindowEnd(t *testing.T) {
	w := mustWindow(t, "0 2 * * *", time.Hour, "UTC") // 02:00-03:00 every day
	now := utc("2026-05-01T10:00:00Z")
	next := utc("2026-05-02T03:00:00Z")
	cases := []struct {
		name    string
		cur     time.Time
		armed   bool
		wantPut bool
	}{
		{"no timer: armed at the next end", time.Time{}, false, true},
		{"armed at the next end: left", next, true, false},
		{"due already: left to fire", now.Add(-time.Hour), true, false},
		{"due now: left to fire", now, true, false},
		{"armed elsewhere ahead (cron changed): moved", next.Add(time.Hour), true, true},
		{"armed earlier but ahead: moved", now.Add(time.Minute), true, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			due, put := ArmWindowEnd(w, now, c.cur, c.armed)
			if put != c.wantPut || !due.Equal(next) {
				t.Fatalf("ArmWindowEnd = %s, %v; want %s, %v", due, put, next, c.wantPut)
			}
		})
	}
	// A window with no tick ahead (a zero cron) has no end to arm.
	never := Window{Name: "never", Duration: time.Hour}
	if due, put := ArmWindowEnd(never, now, time.Time{}, false); put || !due.IsZero() {
		t.Fatalf("a window that never ends again: %s, %v", due, put)
	}
}

func TestEndedOccurrence(t *testing.T) {
	w := mustWindow(t, "0 2 * * *", time.Hour, "UTC")
	other, err := NewWindow("other", "0 4 * * *", time.Hour, "UTC", Matchers{Owners: []string{"x"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	due := utc("2026-05-01T03:00:00Z")
	cases := []struct {
		name      string
		windows   []Window
		target    string
		now       time.Time
		ok        bool
		wantStart time.Time
		wantNext  time.Time
	}{
		{"fired on time", []Window{other, w}, "w", due, true, utc("2026-05-01T02:00:00Z"), utc("2026-05-02T03:00:00Z")},
		{"fired late: the occurrence is the due one, the next after now", []Window{w}, "w", utc("2026-05-03T12:00:00Z"), true, utc("2026-05-01T02:00:00Z"), utc("2026-05-04T03:00:00Z")},
		{"no longer configured", []Window{other}, "w", due, false, time.Time{}, time.Time{}},
		{"no windows", nil, "w", due, false, time.Time{}, time.Time{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			occ, ok := EndedOccurrence(c.windows, c.target, due, c.now)
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
			if !ok {
				return
			}
			s := occ.Silence
			if s.ID != w.ID() || !s.StartsAt.Equal(c.wantStart) || !s.EndsAt.Equal(due) || !occ.Next.Equal(c.wantNext) ||
				!slices.Equal(s.Pipelines, w.Pipelines) {
				t.Fatalf("occurrence = %+v; want %s from %s to %s, next %s", occ, w.ID(), c.wantStart, due, c.wantNext)
			}
			if want := w.ID() + "@" + "1777600800"; occ.MarkerID != want {
				t.Fatalf("marker id %q, want %q", occ.MarkerID, want)
			}
		})
	}
}

func TestEndQueryOf(t *testing.T) {
	start := utc("2026-05-01T10:00:00Z")
	opens := func(t event.Type) bool { return t == event.SLABreach || t == event.JobFailed }
	types := []event.Type{event.JobTriggered, event.SLABreach, event.JobFailed}
	cases := []struct {
		name     string
		m        Matchers
		wantT    []event.Type
		wantPipe string
	}{
		{"every type that opens a condition", Matchers{Owners: []string{"x"}}, []event.Type{event.SLABreach, event.JobFailed}, ""},
		{"only the types silenced", Matchers{Types: []event.Type{event.JobFailed, event.JobTriggered}}, []event.Type{event.JobFailed}, ""},
		{"no type that opens one", Matchers{Types: []event.Type{event.JobTriggered}}, nil, ""},
		{"one pipeline: read by pipeline", Matchers{Pipelines: []string{"gold"}}, []event.Type{event.SLABreach, event.JobFailed}, "gold"},
		{"a glob: every pipeline", Matchers{Pipelines: []string{"gold*"}}, []event.Type{event.SLABreach, event.JobFailed}, ""},
		{"a class: every pipeline", Matchers{Pipelines: []string{"gold[12]"}}, []event.Type{event.SLABreach, event.JobFailed}, ""},
		{"two pipelines: every pipeline", Matchers{Pipelines: []string{"a", "b"}}, []event.Type{event.SLABreach, event.JobFailed}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			q := EndQueryOf(Silence{Matchers: c.m, StartsAt: start}, types, opens)
			if !slices.Equal(q.Types, c.wantT) || q.PipelineID != c.wantPipe || !q.Since.Equal(start) || q.None() != (len(c.wantT) == 0) {
				t.Fatalf("EndQueryOf = %+v; want types %v, pipeline %q since %s", q, c.wantT, c.wantPipe, start)
			}
		})
	}
}

func TestNeedsOwners(t *testing.T) {
	byPipeline := Silence{Matchers: Matchers{Pipelines: []string{"gold"}}}
	byOwner := Silence{Matchers: Matchers{Owners: []string{"finance"}}}
	w := Window{Name: "w", Matchers: Matchers{Levels: []event.Level{"error"}}}
	wOwner := Window{Name: "o", Matchers: Matchers{Owners: []string{"finance"}}}
	for _, c := range []struct {
		name string
		ss   []Silence
		ws   []Window
		want bool
	}{
		{"none", nil, nil, false},
		{"no owner named", []Silence{byPipeline}, []Window{w}, false},
		{"a silence names owners", []Silence{byPipeline, byOwner}, []Window{w}, true},
		{"a window names owners", []Silence{byPipeline}, []Window{w, wOwner}, true},
	} {
		if got := NeedsOwners(c.ss, c.ws); got != c.want {
			t.Errorf("%s: NeedsOwners = %v, want %v", c.name, got, c.want)
		}
	}
}
