package storetest

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// testChangedSince checks RunListParams.UpdatedSince and
// MarkerListParams.Since: what was written at or after a time, inclusive
// to the nanosecond, driven only by the
// parameter (never by the time the store is read at).
func testChangedSince(t *testing.T, o Options) {
	load := func(t *testing.T) store.Store {
		s := o.New(t)
		var c store.Change
		for i, d := range []time.Duration{-time.Hour, 0, time.Nanosecond, time.Hour} {
			k := key("p", "stream", "2026-03-1"+string(rune('0'+i)))
			r := run.Run{Key: k, State: run.Evaluating, CreatedAt: at(d), UpdatedAt: at(d), StateSince: at(d)}
			c.Runs = append(c.Runs, store.RunWrite{Run: r})
			c.Markers = append(c.Markers, store.MarkerWrite{Marker: store.Marker{Key: k, Kind: run.MarkerFirstArrival, At: at(d)}})
		}
		// Another pipeline, written at t0, with another marker kind.
		k := key("q", "cron", "2026-03-12")
		c.Runs = append(c.Runs, store.RunWrite{Run: run.Run{Key: k, State: run.Completed, UpdatedAt: at(0)}})
		c.Markers = append(c.Markers, store.MarkerWrite{Marker: store.Marker{Key: k, Kind: run.MarkerSLAVerdict, At: at(0).In(elsewhere)}})
		commit(t, s, c)
		return s
	}
	// Each list names its records pipeline/period, sorted: the order is
	// not what these checks are about.
	runs := func(t *testing.T, s store.Store, p store.RunListParams) []string {
		return slices.Sorted(slices.Values(idsOf(must(s.RunList(t.Context(), p)).get(t), func(r run.Run) string { return r.PipelineID + "/" + r.Period })))
	}
	markers := func(t *testing.T, s store.Store, p store.MarkerListParams) []string {
		return slices.Sorted(slices.Values(idsOf(must(s.MarkerList(t.Context(), p)).get(t), func(m store.Marker) string { return m.Key.PipelineID + "/" + m.Key.Period })))
	}
	t.Run("RunsUpdatedSinceIsInclusive", func(t *testing.T) {
		s := load(t)
		want := []string{"p/2026-03-11", "p/2026-03-12", "p/2026-03-13", "q/2026-03-12"}
		if got := runs(t, s, store.RunListParams{UpdatedSince: at(0)}); !equalStrings(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		if got := runs(t, s, store.RunListParams{UpdatedSince: at(time.Nanosecond)}); !equalStrings(got, []string{"p/2026-03-12", "p/2026-03-13"}) {
			t.Fatalf("a nanosecond later: %v", got)
		}
		if got := runs(t, s, store.RunListParams{UpdatedSince: at(2 * time.Hour)}); len(got) != 0 {
			t.Fatalf("after everything: %v", got)
		}
	})
	t.Run("ReadsThatNoOneIndexServesAreRefused", func(t *testing.T) {
		// Each list read is one key range of one index on every backend
		// (store.Index): two ranges at once would be a filter over what
		// one of them read on DynamoDB. Refused, with nothing read.
		s := load(t)
		for _, p := range []store.RunListParams{
			{UpdatedSince: at(0), PipelineID: "q"},
			{UpdatedSince: at(0), ActiveOnly: true},
			{UpdatedSince: at(0), PeriodFrom: "2026-03-11"},
			{PeriodFrom: "2026-03-11", ActiveOnly: true},
			{ScheduleID: "stream"},
			{Period: "2026-03-12"},
			{PipelineID: "p", Period: "2026-03-12", PeriodFrom: "2026-03-11"},
			{PipelineID: "p", Period: "2026-03-12", PeriodTo: "2026-03-13"},
			{PeriodFrom: "2026-03-11", PeriodTo: "2026-03-12"},
		} {
			if rs, err := s.RunList(t.Context(), p); !errors.Is(err, store.ErrUnservedRead) {
				t.Errorf("RunList(%+v) = %d runs, %v; want ErrUnservedRead", p, len(rs), err)
			}
		}
		if ms, err := s.MarkerList(t.Context(), store.MarkerListParams{PeriodFrom: "2026-03-11", Since: at(0)}); !errors.Is(err, store.ErrUnservedRead) {
			t.Errorf("MarkerList(PeriodFrom and Since) = %d markers, %v; want ErrUnservedRead", len(ms), err)
		}
		// The shapes the engine, the watchdog and the API use are served.
		for _, p := range []store.RunListParams{
			{UpdatedSince: at(0)}, {ActiveOnly: true}, {PeriodFrom: "2026-03-11"},
			{PipelineID: "p", ActiveOnly: true}, {PipelineID: "p", ScheduleID: "stream", PeriodFrom: "2026-03-12"},
			{PipelineID: "p", Limit: 2}, {PipelineID: "p", ScheduleID: "stream", Period: "2026-03-12"},
		} {
			if _, err := s.RunList(t.Context(), p); err != nil {
				t.Errorf("RunList(%+v): %v", p, err)
			}
		}
		if got := runs(t, s, store.RunListParams{PipelineID: "p", ActiveOnly: true}); !equalStrings(got, []string{"p/2026-03-10", "p/2026-03-11", "p/2026-03-12", "p/2026-03-13"}) {
			t.Fatalf("active runs of p: %v", got)
		}
	})
	t.Run("MarkersSinceIsInclusive", func(t *testing.T) {
		s := load(t)
		want := []string{"p/2026-03-11", "p/2026-03-12", "p/2026-03-13", "q/2026-03-12"}
		if got := markers(t, s, store.MarkerListParams{Since: at(0)}); !equalStrings(got, want) {
			t.Fatalf("got %v, want %v", got, want)
		}
		if got := markers(t, s, store.MarkerListParams{Since: at(time.Hour + time.Nanosecond)}); len(got) != 0 {
			t.Fatalf("after everything: %v", got)
		}
	})
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}
