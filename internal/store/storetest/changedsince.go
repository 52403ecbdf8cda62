package storetest

import (
	"sort"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// testChangedSince checks RunListParams.UpdatedSince and
// MarkerListParams.Since: what was written at or after a time, inclusive
// to the nanosecond, combined with the other filters, driven only by the
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
	runs := func(t *testing.T, s store.Store, p store.RunListParams) []string {
		rs, err := s.RunList(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range rs {
			out = append(out, r.PipelineID+"/"+r.Period)
		}
		sort.Strings(out)
		return out
	}
	markers := func(t *testing.T, s store.Store, p store.MarkerListParams) []string {
		ms, err := s.MarkerList(t.Context(), p)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, m := range ms {
			out = append(out, m.Key.PipelineID+"/"+m.Key.Period)
		}
		sort.Strings(out)
		return out
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
	t.Run("RunsUpdatedSinceCombinesWithOtherFilters", func(t *testing.T) {
		s := load(t)
		if got := runs(t, s, store.RunListParams{UpdatedSince: at(0), PipelineID: "q"}); !equalStrings(got, []string{"q/2026-03-12"}) {
			t.Fatalf("with pipeline: %v", got)
		}
		if got := runs(t, s, store.RunListParams{UpdatedSince: at(0), ActiveOnly: true}); !equalStrings(got, []string{"p/2026-03-11", "p/2026-03-12", "p/2026-03-13"}) {
			t.Fatalf("with ActiveOnly: %v", got)
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
