package sqlite

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// TestScratchReplayRefusesAGroupAnsweredOtherwise: a scratch store's
// replay applies a group again with its conditions checked in SQL; a
// Change it answers otherwise than the group's first application did
// makes the store refuse every later Commit (verdict), never keep a
// state that contradicts an answer given. The two differ here because the
// first application answered a pipeline check from the cache while the
// row was changed behind the store's back (which only a bug would do).
// The store lost, its caches hold nothing the lost transaction wrote.
func TestScratchReplayRefusesAGroupAnsweredOtherwise(t *testing.T) {
	ctx := t.Context()
	s := openScratch(t, filepath.Join(t.TempDir(), "scratch.db"))
	_, at := createPipeline(t, s, "a")
	read, err := s.PipelineGet(ctx, "a") // cached
	if err != nil {
		t.Fatal(err)
	}
	// Expire commits the scratch transaction first: the row changed
	// behind the cache stays changed when a later one is rolled back.
	if _, err := s.Expire(ctx, store.ExpireParams{Limit: 1}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.write.ExecContext(ctx, `UPDATE pipelines SET version = 99 WHERE id = 'a'`); err != nil {
		t.Fatal(err)
	}
	key := run.Key{PipelineID: "a", ScheduleID: "daily", Period: "2026-03-01"}
	marker := func(kind string) []store.MarkerWrite {
		return []store.MarkerWrite{{Marker: store.Marker{Key: key, Kind: kind, At: at}, IfAbsent: true}}
	}
	errs, sizes := grouped(t, s, []func() error{
		// Answered from the cache: the version read.
		func() error {
			return s.Commit(ctx, store.Change{PipelineChecks: []store.PipelineCheck{{ID: "a", Version: read.Version}}, Markers: marker("checked")})
		},
		func() error {
			return s.Commit(ctx, store.Change{Markers: marker("other"), Runs: []store.RunWrite{{Run: run.Run{Key: key, State: run.Evaluating, CreatedAt: at}}}})
		},
	})
	if len(sizes) != 1 || sizes[0] != 2 || errs[0] != nil || errs[1] != nil {
		t.Fatalf("group sizes %v, answers %v; want one group of 2, both committed", sizes, errs)
	}
	// A Change that fails rolls the scratch transaction back; the group is
	// applied again, and SQL finds pipeline a at version 99.
	err = s.Commit(ctx, store.Change{Markers: marker("other")})
	if err == nil || !strings.Contains(err.Error(), "when applied again") {
		t.Fatalf("a failed Change replaying the group: %v; want the group's answer contradicted", err)
	}
	if err := s.Commit(ctx, store.Change{Markers: marker("later")}); err == nil || !strings.Contains(err.Error(), "takes no more changes") {
		t.Fatalf("a Commit after the replay failed: %v; want the store's refusal", err)
	}
	// The transaction lost took the group's run with it, and the caches
	// forgot every row: reads answer what the database holds.
	if r, err := s.RunGet(ctx, key); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("the run of the lost group: %+v, %v; want none", r, err)
	}
	if p, err := s.PipelineGet(ctx, "a"); err != nil || p.Version != 99 {
		t.Errorf("pipeline a: version %d, %v; want the database's 99", p.Version, err)
	}
}
