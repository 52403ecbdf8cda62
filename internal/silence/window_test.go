package silence

import (
	"errors"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
)

func mustWindow(t *testing.T, cron string, d time.Duration, zone string) Window {
	t.Helper()
	w, err := NewWindow("w", cron, d, zone, Matchers{Pipelines: []string{"*"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

// New York springs forward on 2026-03-08 at 02:00 EST (07:00 UTC) and
// falls back on 2026-11-01 at 02:00 EDT (06:00 UTC).
func TestWindowAcrossDST(t *testing.T) {
	cases := []struct {
		name          string
		cron          string
		d             time.Duration
		at            string
		active        bool
		start, end    string // the occurrence, when active
		wantEndsInDay int    // occurrences ending on the window's date, UTC day of at
	}{
		{"spring-forward: a start in the gap starts after it", "30 2 * * *", time.Hour, "2026-03-08T07:30:00Z", true, "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z", 1},
		{"spring-forward: before the gap's window", "30 2 * * *", time.Hour, "2026-03-08T06:59:00Z", false, "", "", 1},
		{"spring-forward: duration is elapsed time (01:00 EST + 3h = 05:00 EDT)", "0 1 * * *", 3 * time.Hour, "2026-03-08T08:59:59Z", true, "2026-03-08T06:00:00Z", "2026-03-08T09:00:00Z", 1},
		{"spring-forward: end exclusive", "0 1 * * *", 3 * time.Hour, "2026-03-08T09:00:00Z", false, "", "", 1},
		{"fall-back: a start in the overlap starts once, at its first occurrence", "30 1 * * *", time.Hour, "2026-11-01T06:15:00Z", true, "2026-11-01T05:30:00Z", "2026-11-01T06:30:00Z", 1},
		{"fall-back: the second 01:30 opens no window", "30 1 * * *", time.Hour, "2026-11-01T06:45:00Z", false, "", "", 1},
		{"fall-back: midnight + 4h = 03:00 EST", "0 0 * * *", 4 * time.Hour, "2026-11-01T07:59:00Z", true, "2026-11-01T04:00:00Z", "2026-11-01T08:00:00Z", 1},
		{"an ordinary day in the zone", "0 1 * * *", time.Hour, "2026-03-10T05:30:00Z", true, "2026-03-10T05:00:00Z", "2026-03-10T06:00:00Z", 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			w := mustWindow(t, c.cron, c.d, "America/New_York")
			at := utc(c.at)
			start, end, ok := w.ActiveAt(at)
			if ok != c.active {
				t.Fatalf("ActiveAt(%s) = %v (%s–%s), want %v", c.at, ok, start, end, c.active)
			}
			if ok && (!start.Equal(utc(c.start)) || !end.Equal(utc(c.end))) {
				t.Fatalf("occurrence %s–%s, want %s–%s", start.UTC(), end.UTC(), c.start, c.end)
			}
			_, matched := Match(nil, []Window{w}, "", event.Event{PipelineID: "p", Type: event.JobFailed, Time: at})
			if matched != c.active {
				t.Fatalf("Match = %v, want %v", matched, c.active)
			}
			day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
			if got := endsIn(w, day, day.Add(24*time.Hour), 10); len(got) != c.wantEndsInDay {
				t.Fatalf("EndsIn the day = %v, want %d occurrences", got, c.wantEndsInDay)
			}
		})
	}
}

func TestWindowNextEnd(t *testing.T) {
	w := mustWindow(t, "0 1 * * *", 2*time.Hour, "UTC")
	from := utc("2026-03-10T00:00:00Z")
	got := endsIn(w, from, from.Add(72*time.Hour), 10)
	if len(got) != 3 || !got[0].Equal(utc("2026-03-10T03:00:00Z")) || !got[2].Equal(utc("2026-03-12T03:00:00Z")) {
		t.Fatalf("EndsIn = %v", got)
	}
	// (from, to]: an end exactly at from is not listed, one at to is.
	got = endsIn(w, utc("2026-03-10T03:00:00Z"), utc("2026-03-11T03:00:00Z"), 10)
	if len(got) != 1 || !got[0].Equal(utc("2026-03-11T03:00:00Z")) {
		t.Fatalf("EndsIn half-open = %v", got)
	}
	// Inside an occurrence (a process starting during the window): its
	// own end, not the next day's.
	if got := w.NextEnd(utc("2026-03-10T02:00:00Z")); !got.Equal(utc("2026-03-10T03:00:00Z")) {
		t.Fatalf("NextEnd inside an occurrence = %v", got)
	}
	if got := endsIn(w, from, from.Add(72*time.Hour), 2); len(got) != 2 {
		t.Fatalf("limit: %d", len(got))
	}
}

func TestNewWindowErrors(t *testing.T) {
	_, err := NewWindow("", "61 * * * *", 0, "Mars/Olympus", Matchers{}, "")
	var fields []string
	for _, fe := range FieldErrors(err) {
		fields = append(fields, fe.Field)
	}
	want := []string{"name", "cron", "duration", "timezone", "matchers"}
	if len(fields) != len(want) || !errors.Is(err, ErrInvalid) {
		t.Fatalf("fields %v, want %v (%v)", fields, want, err)
	}
	for i := range want {
		if fields[i] != want[i] {
			t.Fatalf("fields %v, want %v", fields, want)
		}
	}
	if _, err := NewWindow("w", "@daily", 8*24*time.Hour, "", Matchers{Pipelines: []string{"*"}}, ""); err == nil {
		t.Fatal("a window over a week was accepted")
	}
}

// endsIn lists the ends of w's occurrences in (from, to], earliest first,
// at most limit, through NextEnd.
func endsIn(w Window, from, to time.Time, limit int) []time.Time {
	var out []time.Time
	for e := w.NextEnd(from); !e.IsZero() && !e.After(to) && len(out) < limit; e = w.NextEnd(e) {
		out = append(out, e)
	}
	return out
}
