package sqlite

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

var groupBase = time.Date(2026, time.March, 14, 0, 0, 0, 0, time.UTC)

// groupRun is a Change creating (expect 0) or updating the run of period
// p, with a sensor, an event and a timer of its own, so a test can see
// whether all of it or none of it was written. The sensor is written
// before the run (plan's order): a failed run condition has a write of
// its own Change to undo.
func groupRun(p string, expect int64, tag string) store.Change {
	k := run.Key{PipelineID: "orders", ScheduleID: "daily", Period: p}
	return store.Change{
		Sensors: []store.SensorWrite{{Sensor: store.Sensor{PipelineID: "orders", Key: "s:" + tag, ChangedAt: groupBase}}},
		Runs:    []store.RunWrite{{Run: run.Run{Key: k, State: run.Evaluating, CreatedAt: groupBase}, ExpectVersion: expect}},
		Timers:  []store.TimerWrite{{Timer: store.Timer{Key: "t:" + tag, Kind: "evaluate", Run: k, DueAt: groupBase}}},
		Events:  []event.Event{{ID: "e:" + tag, Time: groupBase, Type: event.ValidationPassed, PipelineID: "orders", Date: p}},
	}
}

// grouped runs commits so that they queue while the writer is held back,
// then lets them go: the first leads and takes all the others into one
// transaction. It returns each one's result and the group sizes seen.
func grouped(t *testing.T, s *Store, commits []func() error) ([]error, []int) {
	t.Helper()
	var mu sync.Mutex
	var sizes []int
	groupHook = func(n int) { mu.Lock(); sizes = append(sizes, n); mu.Unlock() }
	defer func() { groupHook = nil }()
	s.group.writing.Lock()
	errs := make([]error, len(commits))
	var wg sync.WaitGroup
	for i, c := range commits {
		wg.Add(1)
		go func() { defer wg.Done(); errs[i] = c() }()
		// Queue them in order: wait until this one leads or is queued.
		waitFor(t, func() bool {
			s.group.mu.Lock()
			defer s.group.mu.Unlock()
			return s.group.leading && len(s.group.queue) == i
		})
	}
	s.group.writing.Unlock()
	wg.Wait()
	return errs, sizes
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for range 5000 {
		if cond() {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatal("condition not reached")
}

func groupStore(t *testing.T) *Store {
	t.Helper()
	s, err := Open(t.Context(), filepath.Join(t.TempDir(), "g.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// present reports whether the sensor, timer and event that only the
// groupRun tagged tag writes are all there (true) or all absent (false),
// and fails the test when only some are. (Several Changes write one run.)
func present(t *testing.T, s *Store, tag string) bool {
	t.Helper()
	_, serr := s.SensorGet(t.Context(), "orders", "s:"+tag)
	_, terr := s.TimerGet(t.Context(), "t:"+tag)
	evs, err := s.EventList(t.Context(), store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	ev := false
	for _, e := range evs.Events {
		ev = ev || e.ID == "e:"+tag
	}
	if (terr == nil) != ev || (serr == nil) != ev {
		t.Fatalf("%s written in part: sensor %v, timer %v, event %v", tag, serr, terr, ev)
	}
	return ev
}

// A Change whose condition fails in a group fails alone, with ErrConflict,
// and writes nothing; the Changes before and after it commit; a Change
// sees the ones queued before it as committed.
func TestGroupCommitConflictFailsAlone(t *testing.T) {
	s := groupStore(t)
	ctx := t.Context()
	if err := s.Commit(ctx, groupRun("d0", 0, "seed")); err != nil {
		t.Fatal(err)
	}
	errs, sizes := grouped(t, s, []func() error{
		func() error { return s.Commit(ctx, groupRun("d1", 0, "a")) },
		func() error { return s.Commit(ctx, groupRun("d0", 0, "b")) }, // d0 exists: conflict
		func() error { return s.Commit(ctx, groupRun("d1", 1, "c")) }, // updates what a created
		func() error { return s.Commit(ctx, groupRun("d2", 5, "d")) }, // no d2 at version 5: conflict
		func() error { return s.Commit(ctx, groupRun("d2", 0, "e")) },
	})
	if len(sizes) != 1 || sizes[0] != 5 {
		t.Fatalf("group sizes %v, want one group of 5", sizes)
	}
	want := []bool{true, false, true, false, true}
	for i, tag := range []string{"a", "b", "c", "d", "e"} {
		if want[i] != (errs[i] == nil) || (!want[i] && !errors.Is(errs[i], store.ErrConflict)) {
			t.Errorf("commit %s: %v", tag, errs[i])
		}
		if got := present(t, s, tag); got != want[i] {
			t.Errorf("commit %s written: %v, want %v", tag, got, want[i])
		}
	}
	if r, err := s.RunGet(ctx, run.Key{PipelineID: "orders", ScheduleID: "daily", Period: "d1"}); err != nil || r.Version != 2 {
		t.Errorf("run d1: version %d, %v; want 2", r.Version, err)
	}
}

// A statement that fails for another reason than a condition leaves the
// group's transaction in doubt: it is rolled back and every Change is
// committed on its own, so only the faulty one fails.
func TestGroupCommitOtherFailureFailsAlone(t *testing.T) {
	s := groupStore(t)
	ctx := t.Context()
	planned := func(c store.Change) []op {
		ops, err := plan(c)
		if err != nil {
			t.Fatal(err)
		}
		return ops
	}
	bad := append(planned(groupRun("d9", 0, "bad")), op{what: "nothing", query: "INSERT INTO no_such_table VALUES (1)"})
	errs, sizes := grouped(t, s, []func() error{
		func() error { return s.commitOps(ctx, planned(groupRun("d1", 0, "a")), cacheHooks{}) },
		func() error { return s.commitOps(ctx, bad, cacheHooks{}) },
		func() error { return s.commitOps(ctx, planned(groupRun("d2", 0, "c")), cacheHooks{}) },
	})
	if len(sizes) != 1 || sizes[0] != 3 {
		t.Fatalf("group sizes %v, want one group of 3", sizes)
	}
	if errs[0] != nil || errs[2] != nil || errs[1] == nil || errors.Is(errs[1], store.ErrConflict) {
		t.Fatalf("results %v; want nil, a failure that is not a conflict, nil", errs)
	}
	if !present(t, s, "a") || present(t, s, "bad") || !present(t, s, "c") {
		t.Fatal("want a and c written, bad not")
	}
}

// A Commit whose context ends while it waits for a group returns the
// context's error and writes nothing; one already taken into a group is
// committed with it and reports the group's outcome.
func TestGroupCommitCanceledWhileQueued(t *testing.T) {
	s := groupStore(t)
	ctx, cancel := context.WithCancel(t.Context())
	s.group.writing.Lock()
	done := make(chan error, 2)
	go func() { done <- s.Commit(t.Context(), groupRun("d1", 0, "a")) }()
	waitFor(t, func() bool { s.group.mu.Lock(); defer s.group.mu.Unlock(); return s.group.leading })
	go func() { done <- s.Commit(ctx, groupRun("d2", 0, "b")) }()
	waitFor(t, func() bool { s.group.mu.Lock(); defer s.group.mu.Unlock(); return len(s.group.queue) == 1 })
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("queued commit after cancel: %v", err)
	}
	s.group.writing.Unlock()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if !present(t, s, "a") || present(t, s, "b") {
		t.Fatal("want a written, b not")
	}
	// The queue is empty and no one leads: a new Commit leads at once.
	if err := s.Commit(t.Context(), groupRun("d3", 0, "c")); err != nil || !present(t, s, "c") {
		t.Fatalf("commit after: %v", err)
	}
}

// Racing writers: every Change is committed or refused as a whole, and
// per contested record exactly one creator wins, whatever the groups.
func TestGroupCommitRacingWriters(t *testing.T) {
	s := groupStore(t)
	const writers, keys = 16, 20
	var wg sync.WaitGroup
	wins := make([][]bool, writers)
	for w := range writers {
		wins[w] = make([]bool, keys)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range keys {
				err := s.Commit(t.Context(), groupRun(string(rune('a'+k)), 0, string(rune('a'+k))+string(rune('A'+w))))
				if err != nil && !errors.Is(err, store.ErrConflict) {
					t.Error(err)
				}
				wins[w][k] = err == nil
			}
		}()
	}
	wg.Wait()
	for k := range keys {
		n := 0
		for w := range writers {
			if wins[w][k] {
				n++
			}
			if got := present(t, s, string(rune('a'+k))+string(rune('A'+w))); got != wins[w][k] {
				t.Errorf("key %d writer %d: written %v, acknowledged %v", k, w, got, wins[w][k])
			}
		}
		if n != 1 {
			t.Errorf("key %d: %d winners", k, n)
		}
	}
}
