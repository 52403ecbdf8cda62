package engine_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// A decision is made on facts read from the store and committed on the
// condition that they still hold. These tests commit a pause, a reload or
// a calendar change from a second engine (its own store connection, as a
// second process has) in the instant between a decision's reads and its
// commit: the commit must conflict, and the decision be made again on the
// fresh facts.

// meddlingStore runs meddle once, just before the first Commit that
// matches, then commits.
type meddlingStore struct {
	store.Store
	match  func(store.Change) bool
	meddle func()
	done   atomic.Bool
}

func (m *meddlingStore) Commit(ctx context.Context, c store.Change) error {
	if m.match(c) && m.done.CompareAndSwap(false, true) {
		m.meddle()
	}
	return m.Store.Commit(ctx, c)
}

// twoEngines opens the deciding engine (its store wrapped by meddling)
// and the meddling one on one SQLite file, with the orders pipeline.
func twoEngines(t *testing.T, doc string, m *meddlingStore) (decider, other *engine.Engine, jobs *countingJobs, st store.Store) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "e.db")
	open := func() store.Store {
		s, err := sqlite.Open(t.Context(), path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	clk := clock.NewVirtual(t0)
	jobs = &countingJobs{}
	st = open()
	m.Store = open()
	m.done.Store(true) // armed once the setup is done
	decider = engine.New(engine.Options{Store: m, Clock: clk, Jobs: jobs})
	other = engine.New(engine.Options{Store: st, Clock: clk, Jobs: jobs})
	for _, e := range []*engine.Engine{decider, other} {
		if err := e.Open(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := other.SetCalendars(t.Context(), map[string]schedule.Calendar{"holidays": {Name: "holidays"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := other.ApplyConfig(t.Context(), "orders.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	m.done.Store(false)
	return decider, other, jobs, st
}

func inFlightMark(c store.Change) bool {
	for _, w := range c.Runs {
		if w.Run.TriggerInFlight {
			return true
		}
	}
	return false
}

func createsRun(c store.Change) bool {
	for _, w := range c.Runs {
		if w.ExpectVersion == 0 {
			return true
		}
	}
	return false
}

func TestAPauseBetweenReadAndCommitHoldsTheTrigger(t *testing.T) {
	m := &meddlingStore{match: inFlightMark}
	decider, other, jobs, _ := twoEngines(t, orders, m)
	m.meddle = func() {
		if err := other.Pause(t.Context(), "orders", time.Time{}, "test"); err != nil {
			t.Errorf("pause: %v", err)
		}
	}
	if _, err := decider.PutSensor(t.Context(), "orders", "orders-landed", obj("date", "2026-03-10")); err != nil {
		t.Fatal(err)
	}
	if _, err := decider.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if !m.done.Load() {
		t.Fatal("the pause was never committed mid-decision: the test tests nothing")
	}
	if n := jobs.starts.Load(); n != 0 {
		t.Fatalf("the job was started %d times after a pause committed before the trigger's commit", n)
	}
}

func TestAReloadBetweenReadAndCommitIsDecidedWith(t *testing.T) {
	m := &meddlingStore{match: createsRun}
	decider, other, _, st := twoEngines(t, orders, m)
	m.meddle = func() {
		if _, err := other.ApplyConfig(t.Context(), "orders.yaml", []byte(strings.Replace(orders, "jobName: orders", "jobName: orders-v2", 1))); err != nil {
			t.Errorf("reload: %v", err)
		}
	}
	if _, err := decider.PutSensor(t.Context(), "orders", "orders-landed", obj("date", "2026-03-10")); err != nil {
		t.Fatal(err)
	}
	if !m.done.Load() {
		t.Fatal("the reload was never committed mid-decision")
	}
	r, err := st.RunGet(t.Context(), runKey("orders", "2026-03-10"))
	if err != nil {
		t.Fatal(err)
	}
	if r.ConfigVersion != 2 {
		t.Fatalf("run started under config version %d; version 2 was committed before its commit", r.ConfigVersion)
	}
}

func TestACalendarChangeBetweenReadAndCommitIsDecidedWith(t *testing.T) {
	doc := strings.Replace(orders, "  trigger:", "  exclude: {calendar: holidays}\n  trigger:", 1)
	m := &meddlingStore{match: createsRun}
	decider, other, _, st := twoEngines(t, doc, m)
	m.meddle = func() {
		d, _ := schedule.ParseDate("2026-03-10")
		if _, err := other.SetCalendars(t.Context(), map[string]schedule.Calendar{"holidays": {Name: "holidays", Dates: []schedule.Date{d}}}); err != nil {
			t.Errorf("calendar change: %v", err)
		}
	}
	if _, err := decider.PutSensor(t.Context(), "orders", "orders-landed", obj("date", "2026-03-10")); err != nil {
		t.Fatal(err)
	}
	if !m.done.Load() {
		t.Fatal("the calendar change was never committed mid-decision")
	}
	if _, err := st.RunGet(t.Context(), runKey("orders", "2026-03-10")); err == nil {
		t.Fatal("a run was started for a date its calendar excluded before the commit")
	}
	evsPage, err := st.EventList(t.Context(), store.EventListParams{Types: []event.Type{event.PipelineExcluded}})
	evs := evsPage.Events
	if err != nil || len(evs) != 1 {
		t.Fatalf("PIPELINE_EXCLUDED: %d (%v), want 1", len(evs), err)
	}
}

// TestOpenParsesNothing: opening an engine reads no pipeline (a cold start
// costs the same whatever the number of pipelines); the first decision
// about a pipeline reads and parses it.
func TestOpenParsesNothing(t *testing.T) {
	f := newFixture(t)
	c := &countingStore{Store: f.st}
	e := engine.New(engine.Options{Store: c, Clock: f.clk, Jobs: f.jobs})
	if err := e.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := c.pipelineReads.Load(); n != 0 {
		t.Fatalf("Open read pipelines %d times", n)
	}
	if _, err := e.PutSensor(t.Context(), "orders", "orders-landed", obj("date", "2026-03-10")); err != nil {
		t.Fatal(err)
	}
	if c.pipelineReads.Load() == 0 {
		t.Fatal("a decision did not read its pipeline from the store")
	}
}

type countingStore struct {
	store.Store
	pipelineReads atomic.Int64
}

func (c *countingStore) PipelineGet(ctx context.Context, id string) (store.Pipeline, error) {
	c.pipelineReads.Add(1)
	return c.Store.PipelineGet(ctx, id)
}

func (c *countingStore) PipelineList(ctx context.Context) ([]store.Pipeline, error) {
	c.pipelineReads.Add(1)
	return c.Store.PipelineList(ctx)
}
