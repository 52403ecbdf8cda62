package storetest

import (
	"fmt"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/pause"
	"github.com/interlockhq/interlock/internal/store"
)

func testPipelines(t *testing.T, o Options) {
	testVersionRule(t, o, versionedKind{
		write: func(payload, expect int64) store.Change {
			p := fullPipeline("orders")
			p.ConfigVersion = payload
			return store.Change{Pipelines: []store.PipelineWrite{{Pipeline: p, ExpectVersion: expect}}}
		},
		read: func(t *testing.T, s store.Store) (int64, int64, error) {
			p, err := s.PipelineGet(t.Context(), "orders")
			return p.Version, p.ConfigVersion, err
		},
	})

	testRoundTrip(t, o, "fullPipeline", fullPipeline("orders"), createPipeline,
		func(t *testing.T, s store.Store) (store.Pipeline, error) { return s.PipelineGet(t.Context(), "orders") }, func(p *store.Pipeline) { p.Version = 1 })

	t.Run("PausedUntilResumedHasZeroPausedUntil", func(t *testing.T) {
		s := o.New(t)
		want := fullPipeline("orders")
		want.PausedUntil = time.Time{}
		commit(t, s, createPipeline(want))
		got := must(s.PipelineGet(t.Context(), "orders")).get(t)
		if !got.Paused || !got.PausedUntil.IsZero() {
			t.Fatalf("got Paused=%v PausedUntil=%v, want paused with no end", got.Paused, got.PausedUntil)
		}
	})

	t.Run("ResumeClearsPause", func(t *testing.T) {
		s := o.New(t)
		p := fullPipeline("orders")
		commit(t, s, createPipeline(p))
		p.Paused, p.PausedUntil = false, time.Time{}
		commit(t, s, store.Change{Pipelines: []store.PipelineWrite{{Pipeline: p, ExpectVersion: 1}}})
		p.Version = 2
		mustMatch(t, "PipelineGet", must(s.PipelineGet(t.Context(), "orders")).get(t), p)
	})

	t.Run("PauseWindowsAreReplacedWithTheRow", func(t *testing.T) {
		// A resume writes the row with one window more; a write without
		// windows leaves none; the list (not a merge) is what is stored.
		s := o.New(t)
		p := minimalPipeline("orders")
		commit(t, s, createPipeline(p))
		w1 := pause.Window{From: at(time.Hour), To: at(2 * time.Hour)}
		w2 := pause.Window{From: at(3 * time.Hour), To: at(4 * time.Hour)}
		for i, ws := range [][]pause.Window{{w1}, {w1, w2}, {w2}, nil} {
			p.PauseWindows = ws
			commit(t, s, store.Change{Pipelines: []store.PipelineWrite{{Pipeline: p, ExpectVersion: int64(i + 1)}}})
			got := must(s.PipelineGet(t.Context(), "orders")).get(t)
			mustMatch(t, fmt.Sprintf("PauseWindows after write %d", i+1), got.PauseWindows, ws)
			for _, l := range must(s.PipelineList(t.Context())).get(t) {
				mustMatch(t, fmt.Sprintf("PipelineList PauseWindows after write %d", i+1), l.PauseWindows, ws)
			}
		}
	})

	t.Run("ListIsSortedByID", func(t *testing.T) {
		s := o.New(t)
		if got := must(s.PipelineList(t.Context())).get(t); len(got) != 0 {
			t.Fatalf("empty store lists %d pipelines", len(got))
		}
		// Written in one commit, out of order.
		var c store.Change
		for _, id := range []string{"orders", "billing", "zeta", "audit"} {
			c.Pipelines = append(c.Pipelines, store.PipelineWrite{Pipeline: minimalPipeline(id)})
		}
		commit(t, s, c)
		var ids []string
		for _, p := range must(s.PipelineList(t.Context())).get(t) {
			ids = append(ids, p.ID)
			if p.Version != 1 {
				t.Errorf("pipeline %s: version %d, want 1", p.ID, p.Version)
			}
		}
		mustMatch(t, "PipelineList ids", ids, []string{"audit", "billing", "orders", "zeta"})
	})
}
