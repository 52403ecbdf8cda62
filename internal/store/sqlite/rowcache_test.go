package sqlite

import (
	"database/sql"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
	"github.com/interlockhq/interlock/internal/store/storetest"
)

func openScratch(t *testing.T, path string) *Store {
	t.Helper()
	return openWith(t, "OpenScratch", OpenScratch, path)
}

// The scratch store (`interlock simulate`) keeps its pipeline rows in
// memory (rowcache.go): it must keep the port's semantics, across a
// reopen too.
func TestConformanceScratch(t *testing.T) {
	// The three backends' suites are independent (each store its own
	// file or memory): run at once, they keep the race run short.
	t.Parallel()
	storetest.RunWithOptions(t, storetest.Options{
		New:    func(t *testing.T) store.Store { return openScratch(t, filepath.Join(t.TempDir(), "scratch.db")) },
		Reopen: reopenWith(openScratch),
	})
}

// createPipeline commits a new pipeline row, created at the time it
// returns.
func createPipeline(t *testing.T, s *Store, id string) (store.Pipeline, time.Time) {
	t.Helper()
	at := time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)
	p := store.Pipeline{ID: id, ConfigVersion: 1, Doc: []byte("pipeline: {id: " + id + "}\n"), Hash: "h1", File: id + ".yaml", FirstLoadedAt: at, UpdatedAt: at}
	if err := s.Commit(t.Context(), store.Change{Pipelines: []store.PipelineWrite{{Pipeline: p}}}); err != nil {
		t.Fatal(err)
	}
	return p, at
}

// A scratch store answers a pipeline read from memory once it has read
// the row, and a commit that writes the row is seen by the next read, by
// id and in the list.
func TestScratchPipelineRowsCached(t *testing.T) {
	ctx := t.Context()
	s := openScratch(t, filepath.Join(t.TempDir(), "scratch.db"))
	p, at := createPipeline(t, s, "a")
	first, err := s.PipelineGet(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	again, err := s.PipelineGet(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if &first.Doc[0] != &again.Doc[0] {
		t.Fatal("the second read of an unchanged row scanned it again: not cached")
	}
	if _, err := s.PipelineList(ctx); err != nil {
		t.Fatal(err)
	}

	p.Paused, p.ConfigVersion, p.Doc, p.Hash = true, 2, []byte("pipeline: {id: a, x: 1}\n"), "h2"
	if err := s.Commit(ctx, store.Change{Pipelines: []store.PipelineWrite{{Pipeline: p, ExpectVersion: first.Version}}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.PipelineGet(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != first.Version+1 || !got.Paused || got.Hash != "h2" || string(got.Doc) != string(p.Doc) {
		t.Fatalf("after the commit, read %+v", got)
	}
	all, err := s.PipelineList(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 1 || all[0].Version != got.Version || !all[0].Paused {
		t.Fatalf("after the commit, listed %+v", all)
	}
	// The cached row is the one stored: a commit conditioned on an older
	// version still conflicts.
	err = s.Commit(ctx, store.Change{PipelineChecks: []store.PipelineCheck{{ID: "a", Version: first.Version}}, Markers: []store.MarkerWrite{{Marker: store.Marker{Key: run.Key{PipelineID: "a", ScheduleID: "daily", Period: "2026-03-01"}, Kind: "k", At: at}}}})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a commit conditioned on the pipeline's old version: %v, want a conflict", err)
	}
}

// A commit's check of a pipeline's version is answered by the cached row,
// without SQL: a row changed behind the store's back (no Commit can do
// that; here the test does) is not seen by the check while the row is
// cached, and is once a read that missed has brought it back.
func TestScratchPipelineCheckAnsweredFromCache(t *testing.T) {
	ctx := t.Context()
	s := openScratch(t, filepath.Join(t.TempDir(), "scratch.db"))
	_, at := createPipeline(t, s, "a")
	read, err := s.PipelineGet(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.write.ExecContext(ctx, `UPDATE pipelines SET version = 99 WHERE id = 'a'`); err != nil {
		t.Fatal(err)
	}
	marker := func(kind string) []store.MarkerWrite {
		return []store.MarkerWrite{{Marker: store.Marker{Key: run.Key{PipelineID: "a", ScheduleID: "daily", Period: "2026-03-01"}, Kind: kind, At: at}}}
	}
	check := []store.PipelineCheck{{ID: "a", Version: read.Version}}
	if err := s.Commit(ctx, store.Change{PipelineChecks: check, Markers: marker("cached")}); err != nil {
		t.Fatalf("a check of the cached row's version: %v; want it answered from the cache", err)
	}
	// A commit of another pipeline empties the cache: the check is SQL's
	// again, and sees the row as the database holds it.
	createPipeline(t, s, "b")
	if err := s.Commit(ctx, store.Change{PipelineChecks: check, Markers: marker("sql")}); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a check with no cached row: %v; want the database's conflict", err)
	}
}

// While a commit that writes pipelines is under way, no check is
// answered from the cache, not even from a row read in the meantime (it
// may be the row that commit is about to change).
func TestPipelineCacheAnswersNoCheckDuringAPipelineCommit(t *testing.T) {
	c := newPipelineCache()
	c.begin()
	_, _, gen := c.get("a")
	c.put(gen, store.Pipeline{ID: "a", Version: 1})
	if _, ok := c.checker("a", 1)(); ok {
		t.Fatal("a check was answered from the cache during a commit of pipelines")
	}
	c.end()
	_, _, gen = c.get("a")
	c.put(gen, store.Pipeline{ID: "a", Version: 1})
	if n, ok := c.checker("a", 1)(); !ok || n != 1 {
		t.Fatalf("check of the cached version: %d, %v; want 1, true", n, ok)
	}
	if n, ok := c.checker("a", 2)(); !ok || n != 0 {
		t.Fatalf("check of another version: %d, %v; want 0, true", n, ok)
	}
}

// A read that missed and raced a commit of pipelines does not keep what
// it read: the commit moved the generation it started at.
func TestPipelineCacheKeepsNoReadFromBeforeACommit(t *testing.T) {
	c := newPipelineCache()
	_, ok, gen := c.get("a")
	if ok {
		t.Fatal("empty cache answered")
	}
	_, _, listGen := c.list()
	c.begin() // a commit of pipelines, between the read's start and its result
	c.end()
	c.put(gen, store.Pipeline{ID: "a", Version: 1})
	c.putList(listGen, []store.Pipeline{{ID: "a", Version: 1}})
	if _, ok, _ := c.get("a"); ok {
		t.Fatal("a row read before a commit was kept after it")
	}
	if _, ok, _ := c.list(); ok {
		t.Fatal("a list read before a commit was kept after it")
	}
	_, _, gen = c.get("a")
	c.put(gen, store.Pipeline{ID: "a", Version: 2})
	if got, ok, _ := c.get("a"); !ok || got.Version != 2 {
		t.Fatalf("a read after the commit was not kept: %+v %v", got, ok)
	}
}

// A scratch store answers a run read from memory between the run's
// writes (and a read of a run it found absent): a change made behind the
// store's back is not seen until a commit or Expire touches the run.
func TestScratchRunReadsCached(t *testing.T) {
	ctx := t.Context()
	s := openScratch(t, filepath.Join(t.TempDir(), "scratch.db"))
	at := time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)
	k := run.Key{PipelineID: "a", ScheduleID: "daily", Period: "2026-03-01"}
	if _, err := s.RunGet(ctx, k); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("no run yet: %v", err)
	}
	r := run.Run{Key: k, State: run.Evaluating, CreatedAt: at, UpdatedAt: at, StateSince: at, JobMeta: map[string]string{"a": "1"}}
	if err := s.Commit(ctx, store.Change{Runs: []store.RunWrite{{Run: r}}}); err != nil {
		t.Fatal(err)
	}
	got, err := s.RunGet(ctx, k)
	if err != nil || got.Version != 1 || got.State != run.Evaluating {
		t.Fatalf("after the run's first write (a cached absence before it): %+v, %v", got, err)
	}
	got.JobMeta["a"] = "changed by a caller"
	hit, err := s.RunGet(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	hit.JobMeta["a"] = "changed by a caller"
	// Behind the store's back: a cached read does not see it.
	if _, err := s.write.ExecContext(ctx, `UPDATE runs SET state = ? WHERE pipeline_id = ?`, string(run.Running), "a"); err != nil {
		t.Fatal(err)
	}
	again, err := s.RunGet(ctx, k)
	if err != nil || again.State != run.Evaluating {
		t.Fatalf("the second read was not served from memory: %+v, %v", again, err)
	}
	if again.JobMeta["a"] != "1" {
		t.Fatalf("a caller's change to a read run reached the cache: %v", again.JobMeta)
	}
	// A commit of the run replaces it: the next read is what it wrote.
	r.State, r.UpdatedAt = run.Completed, at.Add(time.Hour)
	if err := s.Commit(ctx, store.Change{Runs: []store.RunWrite{{Run: r, ExpectVersion: 1}}}); err != nil {
		t.Fatal(err)
	}
	if got, err := s.RunGet(ctx, k); err != nil || got.Version != 2 || got.State != run.Completed {
		t.Fatalf("after the commit: %+v, %v", got, err)
	}
	// Expire deletes runs: it drops every one.
	if _, err := s.Expire(ctx, store.ExpireParams{PeriodBefore: "2026-04-01", Before: at.AddDate(0, 1, 0), Limit: 100}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.RunGet(ctx, k); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after Expire deleted it: %v", err)
	}
}

// scratchAndDurable opens a scratch store and a durable one, to compare
// what each reads back of the same writes, and a zone that is not UTC for
// the times written.
func scratchAndDurable(t *testing.T) (scratch, durable *Store, ny *time.Location) {
	t.Helper()
	ny, err := time.LoadLocation("America/New_York")
	if err != nil {
		t.Fatal(err)
	}
	return openScratch(t, filepath.Join(t.TempDir(), "scratch.db")), openPath(t, filepath.Join(t.TempDir(), "durable.db")), ny
}

// A run read that raced a commit of the run does not keep what it read.
func TestRunCacheKeepsNoReadFromBeforeACommit(t *testing.T) {
	c := newRunCache()
	k := run.Key{PipelineID: "a", ScheduleID: "daily", Period: "2026-03-01"}
	_, _, gen := c.get(k)
	c.drop([]run.Key{k})
	c.put(gen, k, cached[run.Run]{v: run.Run{Key: k, Version: 1}, found: true})
	if _, ok, _ := c.get(k); ok {
		t.Fatal("a run read before a commit was kept after it")
	}
	// Expire drops every run, and after it again: a read while it ran
	// may have kept a run it deleted.
	g := c.drop(nil)
	_, _, during := c.get(k)
	c.put(during, k, cached[run.Run]{v: run.Run{Key: k, Version: 1}, found: true})
	c.finish(g, nil, nil)
	if _, ok, _ := c.get(k); ok {
		t.Fatal("a run read while Expire ran was kept after it")
	}
}

// A scratch store answers a timer read with what its commit wrote,
// decoded as a read of the row would be (the same timer committed to a
// durable store reads back equal), and a commit that failed leaves
// nothing of its writes.
func TestScratchTimerWritesRead(t *testing.T) {
	ctx := t.Context()
	s, d, ny := scratchAndDurable(t)
	due := time.Date(2026, 3, 1, 9, 0, 0, 123, ny) // not UTC, with nanoseconds
	k := run.Key{PipelineID: "a", ScheduleID: "daily", Period: "2026-03-01"}
	detail := sensor.NewObject(map[string]sensor.Value{"n": sensor.IntValue(3), "why": sensor.StringValue("late — again"), "ok": sensor.BoolValue(true)})
	c := store.Change{Timers: []store.TimerWrite{{Timer: store.Timer{Key: "step/a", Kind: "poll", Run: k, DueAt: due, Detail: detail}},
		{Timer: store.Timer{Key: "sla/a", Kind: "sla-breach", Run: k, DueAt: due}}}}
	for _, st := range []*Store{s, d} {
		if err := st.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	for _, key := range []string{"step/a", "sla/a"} {
		got, err := s.TimerGet(ctx, key)
		want, werr := d.TimerGet(ctx, key)
		if err != nil || werr != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("%s: scratch read %+v (%v), durable read %+v (%v)", key, got, err, want, werr)
		}
	}
	// Behind the store's back: the written timer is served from memory.
	if _, err := s.write.ExecContext(ctx, `UPDATE timers SET kind = 'x'`); err != nil {
		t.Fatal(err)
	}
	if got, err := s.TimerGet(ctx, "step/a"); err != nil || got.Kind != "poll" {
		t.Fatalf("the written timer was read again from the database: %+v, %v", got, err)
	}
	// A claim that fails (the due time moved) rolls back, with the
	// delete beside it: neither is remembered as done.
	moved := due.Add(time.Minute)
	err := s.Commit(ctx, store.Change{TimerDeletes: []store.TimerDelete{{Key: "sla/a"}, {Key: "step/a", ExpectDueAt: &moved}}})
	if !errors.Is(err, store.ErrConflict) {
		t.Fatalf("claim at a moved due time: %v, want a conflict", err)
	}
	if got, err := s.TimerGet(ctx, "sla/a"); err != nil || got.Key != "sla/a" {
		t.Fatalf("after the failed commit: %+v, %v", got, err)
	}
	if err := s.Commit(ctx, store.Change{TimerDeletes: []store.TimerDelete{{Key: "sla/a"}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.TimerGet(ctx, "sla/a"); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("after its delete: %v", err)
	}
}

// A commit of timers that ran beside another keeps nothing of what it
// wrote (the other may have written the same timers after it), and a
// read that raced a commit is not kept.
func TestTimerCacheKeepsOnlyACommitThatRanAlone(t *testing.T) {
	c := newTimerCache()
	x := map[string]cached[store.Timer]{"a": {v: store.Timer{Key: "a", Kind: "first"}, found: true}}
	ga := c.drop([]string{"a"})
	gb := c.drop([]string{"a"})
	c.finish(gb, []string{"a"}, map[string]cached[store.Timer]{"a": {v: store.Timer{Key: "a", Kind: "second"}, found: true}})
	c.finish(ga, []string{"a"}, x)
	if got, ok, _ := c.get("a"); ok {
		t.Fatalf("two commits of one timer at once: kept %+v", got)
	}
	_, _, gen := c.get("a")
	g := c.drop([]string{"a"})
	c.put(gen, "a", cached[store.Timer]{v: store.Timer{Key: "a", Kind: "read before"}, found: true})
	c.finish(g, []string{"a"}, x)
	if got, _, _ := c.get("a"); got.v.Kind != "first" {
		t.Fatalf("after a commit that ran alone: %+v", got)
	}
	// A read that started during a commit and ends after it.
	g = c.drop([]string{"a"})
	_, _, during := c.get("a")
	c.finish(g, []string{"a"}, map[string]cached[store.Timer]{"a": {v: store.Timer{Key: "a", Kind: "third"}, found: true}})
	c.put(during, "a", cached[store.Timer]{v: store.Timer{Key: "a", Kind: "read during"}, found: true})
	if got, _, _ := c.get("a"); got.v.Kind != "third" {
		t.Fatalf("a read from during a commit replaced what it wrote: %+v", got)
	}
}

// everyRunField is a run with every field set (a test fails when run.Run
// gains one it does not set), its times in a zone that is not UTC and with
// nanoseconds, its job metadata with text JSON escapes.
func everyRunField(t *testing.T, k run.Key, ny *time.Location) run.Run {
	t.Helper()
	at := time.Date(2026, 3, 1, 6, 0, 0, 123, ny)
	r := run.Run{Key: k, Version: 7, State: run.Running, Outcome: run.OutcomeSucceeded, Cause: run.CauseSensor,
		Generation: 2, Attempt: 3, CreatedAt: at, UpdatedAt: at.Add(time.Minute), StateSince: at.Add(2 * time.Minute),
		ExpiresAt: at.Add(time.Hour), EvalStartedAt: at.Add(3 * time.Minute), EvalDeadline: at.Add(4 * time.Minute),
		TriggerErrors: 1, TriggerInFlight: true, JobRunID: "job-1", JobMeta: map[string]string{"<a&b>": "ü \"q\"", "arn": "x"},
		JobStartedAt: at.Add(5 * time.Minute), PollDeadline: at.Add(6 * time.Minute), EndedAt: at.Add(7 * time.Minute),
		LastFailure: &run.Failure{Category: run.Transient, Message: "flaky"}, ConfigVersion: 4}
	v := reflect.ValueOf(r)
	for i := range v.NumField() {
		if v.Field(i).IsZero() {
			t.Fatalf("everyRunField leaves run.Run.%s unset", v.Type().Field(i).Name)
		}
	}
	return r
}

// A scratch store answers a run read with what its commit wrote, as a
// read of the row returns it (the same writes committed to a durable store
// read back equal, by RunGet and by Facts), without reading the row again;
// a run whose job metadata JSON would not give back as written is not
// kept.
func TestScratchRunWritesRead(t *testing.T) {
	ctx := t.Context()
	s, d, ny := scratchAndDurable(t)
	k := run.Key{PipelineID: "a", ScheduleID: "daily", Period: "2026-03-01"}
	r := everyRunField(t, k, ny)
	second := r
	second.State, second.JobMeta, second.LastFailure = run.Completed, map[string]string{}, &run.Failure{Category: run.Permanent}
	third := second
	third.JobMeta, third.LastFailure = map[string]string{"bad": "\xff"}, nil
	for i, w := range []store.RunWrite{{Run: r}, {Run: second, ExpectVersion: 1}, {Run: third, ExpectVersion: 2}} {
		for _, st := range []*Store{s, d} {
			w := w
			w.Run.JobMeta, w.Run.LastFailure = maps.Clone(w.Run.JobMeta), ptrCopy(w.Run.LastFailure)
			if err := st.Commit(ctx, store.Change{Runs: []store.RunWrite{w}}); err != nil {
				t.Fatal(err)
			}
			// The caller's run is its own again once committed.
			for k := range w.Run.JobMeta {
				w.Run.JobMeta[k] = "changed by the caller"
			}
			if w.Run.LastFailure != nil {
				w.Run.LastFailure.Message = "changed by the caller"
			}
		}
		want, err := d.RunGet(ctx, k)
		if err != nil {
			t.Fatal(err)
		}
		kept := i < 2
		if kept {
			// Behind the store's back: a run kept is not read again.
			if _, err := s.write.ExecContext(ctx, `UPDATE runs SET job_run_id = 'changed' WHERE pipeline_id = 'a'`); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.RunGet(ctx, k)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("write %d: scratch read %+v (%v), durable read %+v", i+1, got, err, want)
		}
		f, err := s.Facts(ctx, store.FactsQuery{Runs: []run.Key{k}})
		if err != nil || !reflect.DeepEqual(f.Runs[k], want) {
			t.Fatalf("write %d: scratch Facts %+v (%v), durable read %+v", i+1, f.Runs[k], err, want)
		}
		if _, err := s.write.ExecContext(ctx, `UPDATE runs SET job_run_id = ? WHERE pipeline_id = 'a'`, r.JobRunID); err != nil {
			t.Fatal(err)
		}
	}
}

func ptrCopy[T any](p *T) *T {
	if p == nil {
		return nil
	}
	c := *p
	return &c
}

// A run kept by the scratch store's cache is the one its database holds
// at every step: committed and read back through Facts in the same shared
// transaction and the next, and after a failed Change that wrote it
// (rolled back, the Changes before it applied again).
func TestScratchRunCacheNeverStale(t *testing.T) {
	ctx := t.Context()
	s := openScratch(t, filepath.Join(t.TempDir(), "scratch.db"))
	at := time.Date(2026, 3, 1, 6, 0, 0, 0, time.UTC)
	k := run.Key{PipelineID: "a", ScheduleID: "daily", Period: "2026-03-01"}
	check := func(step string, version int64) {
		t.Helper()
		stored, err := get(ctx, s.read, sqlstore.ScanRun, "run", `SELECT `+sqlstore.RunCols+` FROM runs WHERE pipeline_id = ? AND schedule_id = ? AND period = ?`,
			k.PipelineID, k.ScheduleID, k.Period)
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		f, err := s.Facts(ctx, store.FactsQuery{Runs: []run.Key{k}})
		if err != nil {
			t.Fatalf("%s: %v", step, err)
		}
		if !reflect.DeepEqual(f.Runs[k], stored) || stored.Version != version {
			t.Fatalf("%s: Facts read %+v, the database holds %+v (want version %d)", step, f.Runs[k], stored, version)
		}
	}
	write := func(state run.State, expect int64, also store.Change) error {
		r := run.Run{Key: k, State: state, CreatedAt: at, UpdatedAt: at.Add(time.Duration(expect) * time.Minute), JobRunID: string(state)}
		also.Runs = []store.RunWrite{{Run: r, ExpectVersion: expect}}
		return s.Commit(ctx, also)
	}
	marker := func(kind string) store.Change {
		return store.Change{Markers: []store.MarkerWrite{{Marker: store.Marker{Key: k, Kind: kind, At: at}, IfAbsent: true}}}
	}
	if err := write(run.Evaluating, 0, marker("first")); err != nil {
		t.Fatal(err)
	}
	check("created", 1)
	if err := write(run.Triggering, 1, store.Change{}); err != nil {
		t.Fatal(err)
	}
	check("written again in the same transaction", 2)
	// The marker exists: the Change fails, with its run write.
	if err := write(run.Running, 2, marker("first")); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a Change whose marker exists: %v, want a conflict", err)
	}
	check("after the failed Change and the replay", 2)
	if err := write(run.Running, 2, store.Change{}); err != nil {
		t.Fatal(err)
	}
	check("written after the replay", 3)
	for i := range scratchBatch {
		if err := s.Commit(ctx, marker(fmt.Sprint("m", i))); err != nil {
			t.Fatal(err)
		}
	}
	check("after the shared transaction was committed", 3)
	if err := write(run.Completed, 3, store.Change{}); err != nil {
		t.Fatal(err)
	}
	check("written in the next shared transaction", 4)
}

// A timer written again (sqlTimerPut: an upsert that leaves a row stored
// as written alone) stores what was written whichever one field differs,
// updating the row in place, and the same timer written twice is not
// written again. Read back from SQL (a file store: no row cache answers);
// what SQLite did to the row is logged by triggers the test adds to the
// file, as the store's own statements run: an insert, then an update
// when a field differs and nothing when none does.
func TestTimerRewriteStoresEachField(t *testing.T) {
	due := time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)
	base := store.Timer{Key: "k", Kind: "sla-warning", Run: run.Key{PipelineID: "p", ScheduleID: "daily", Period: "2026-03-01"},
		DueAt: due, Detail: sensor.NewObject(map[string]sensor.Value{"n": sensor.IntValue(1)})}
	for name, change := range map[string]func(*store.Timer){
		"same":      func(*store.Timer) {},
		"kind":      func(x *store.Timer) { x.Kind = "sla-breach" },
		"pipeline":  func(x *store.Timer) { x.Run.PipelineID = "q" },
		"schedule":  func(x *store.Timer) { x.Run.ScheduleID = "hourly" },
		"period":    func(x *store.Timer) { x.Run.Period = "2026-03-02" },
		"due":       func(x *store.Timer) { x.DueAt = due.Add(time.Nanosecond) },
		"detail":    func(x *store.Timer) { x.Detail = sensor.NewObject(map[string]sensor.Value{"n": sensor.IntValue(2)}) },
		"no detail": func(x *store.Timer) { x.Detail = sensor.Object{} },
	} {
		t.Run(name, func(t *testing.T) {
			s, writes := openLoggingTimerWrites(t)
			want := base
			change(&want)
			for _, x := range []store.Timer{base, want} {
				if err := s.Commit(t.Context(), store.Change{Timers: []store.TimerWrite{{Timer: x}}}); err != nil {
					t.Fatal(err)
				}
			}
			got, err := s.TimerGet(t.Context(), "k")
			if err != nil {
				t.Fatal(err)
			}
			wd, _ := want.Detail.MarshalJSON()
			gd, _ := got.Detail.MarshalJSON()
			if got.Key != want.Key || got.Kind != want.Kind || got.Run != want.Run || !got.DueAt.Equal(want.DueAt) || string(gd) != string(wd) {
				t.Errorf("stored after the rewrite: %+v (detail %s), want %+v (detail %s)", got, gd, want, wd)
			}
			wantWrites := []string{"insert", "update"}
			if name == "same" {
				wantWrites = wantWrites[:1]
			}
			if got := writes(); !slices.Equal(got, wantWrites) {
				t.Errorf("SQLite wrote the timer row: %q, want %q", got, wantWrites)
			}
		})
	}
}

// openLoggingTimerWrites opens a file store whose timers table logs each
// row SQLite inserts or updates (triggers added to the file before the
// store opens it); writes closes the store and returns the log in order.
func openLoggingTimerWrites(t *testing.T) (s *Store, writes func() []string) {
	t.Helper()
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	db, path := databaseAt(t, len(ms))
	if _, err := db.ExecContext(t.Context(), `CREATE TABLE timer_writes (seq INTEGER PRIMARY KEY, op TEXT NOT NULL);
		CREATE TRIGGER timer_inserted AFTER INSERT ON timers BEGIN INSERT INTO timer_writes (op) VALUES ('insert'); END;
		CREATE TRIGGER timer_updated AFTER UPDATE ON timers BEGIN INSERT INTO timer_writes (op) VALUES ('update'); END;`); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	s = openPath(t, path)
	return s, func() []string {
		t.Helper()
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		db, err := sql.Open("sqlite", fileURI(path))
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		return selectStrings(t, db, `SELECT op FROM timer_writes ORDER BY seq`)
	}
}
