package storetest

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// The atomicity fixture: a store seeded with one record of every kind, and
// a Change that writes to every table. Each test appends one failing
// condition to the end of one list; the whole Change must then write
// nothing. No Change touches the same record twice (DynamoDB transactions
// cannot, and the port does not say what it means).
var (
	k12 = key("orders", "daily", "2026-03-12")
	k13 = key("orders", "daily", "2026-03-13")
	k14 = key("orders", "daily", "2026-03-14")
)

var atomicPipelines = []string{"orders", "audit", "billing"}
var atomicPeriods = []run.Key{k12, k13, k14}

func seedAtomic(t *testing.T, s store.Store) {
	t.Helper()
	commit(t, s, store.Change{
		Pipelines: []store.PipelineWrite{{Pipeline: fullPipeline("orders")}, {Pipeline: minimalPipeline("audit")}, {Pipeline: minimalPipeline("checked")}},
		Calendars: []store.CalendarWrite{
			{Calendar: fullCalendar("holidays")}, {Calendar: minimalCalendar("weekends")}, {Calendar: minimalCalendar("bridges")},
		},
		Sensors: []store.SensorWrite{
			{Sensor: fullSensor("orders", "orders-count")},
			{Sensor: minimalSensor("orders", "to-delete", 1)},
			{Sensor: minimalSensor("orders", "stale", 1)},
		},
		Runs:      []store.RunWrite{{Run: newRun(k12)}, {Run: fullRun(k13)}},
		Ledger:    []store.LedgerEntry{ledgerEntry(k13, 1)},
		Baselines: []store.Baseline{fullBaseline(k13)},
		Markers: []store.MarkerWrite{
			{Marker: fullMarker(k13, "first-trigger")},
			{Marker: fullMarker(k13, "to-delete")},
		},
		Timers: []store.TimerWrite{
			{Timer: fullTimer("t-existing", at(time.Hour))},
			{Timer: fullTimer("t-delete", at(2*time.Hour))},
			{Timer: fullTimer("t-moved", at(3*time.Hour))},
		},
		Events: []event.Event{newEvent("e0", event.JobCompleted, k13, at(0))},
	})
}

// atomicChange writes to every table; against the seeded store every
// condition in it holds.
func atomicChange() store.Change {
	orders := fullPipeline("orders")
	orders.ConfigVersion++
	holidays := fullCalendar("holidays")
	holidays.RemovedAt = time.Time{}
	count := fullSensor("orders", "orders-count")
	count.WrittenAt = at(time.Hour)
	r13 := withState(fullRun(k13), run.Completed)
	existing := fullTimer("t-existing", at(90*time.Minute))
	return store.Change{
		Pipelines: []store.PipelineWrite{
			{Pipeline: orders, ExpectVersion: 1},
			{Pipeline: minimalPipeline("billing")},
		},
		Calendars: []store.CalendarWrite{
			{Calendar: holidays, ExpectVersion: 1},
			{Calendar: minimalCalendar("closures")},
		},
		// Conditions that hold: checked is at version 1, ghost does not
		// exist, weekends is at version 1, phantom does not exist.
		PipelineChecks: []store.PipelineCheck{{ID: "checked", Version: 1}, {ID: "ghost", Version: 0}},
		CalendarChecks: []store.CalendarCheck{{Name: "weekends", Version: 1}, {Name: "phantom", Version: 0}},
		Sensors: []store.SensorWrite{
			{Sensor: count, ExpectVersion: 1},
			{Sensor: minimalSensor("orders", "orders-new", 1)},
		},
		SensorDeletes:  []store.SensorDelete{{PipelineID: "orders", Key: "to-delete"}},
		Runs:           []store.RunWrite{{Run: newRun(k14)}, {Run: r13, ExpectVersion: 1}},
		Ledger:         []store.LedgerEntry{ledgerEntry(k13, 2)},
		Baselines:      []store.Baseline{fullBaseline(k14)},
		BaselineDelete: []run.Key{k13},
		Markers:        []store.MarkerWrite{{Marker: fullMarker(k14, "first-trigger"), IfAbsent: true}},
		MarkerDeletes:  []store.MarkerDelete{{Key: k13, Kind: "to-delete"}},
		Timers: []store.TimerWrite{
			{Timer: fullTimer("t-new", at(5*time.Hour))},
			{Timer: existing, ExpectDueAt: ptr(at(time.Hour))},
		},
		TimerDeletes: []store.TimerDelete{{Key: "t-delete"}},
		Events: []event.Event{
			newEvent("e1", event.JobTriggered, k14, at(time.Minute)),
			newEvent("e2", event.SLAMet, k13, at(2*time.Minute)),
		},
	}
}

func testCommit(t *testing.T, o Options) {
	t.Run("EveryTableInOneChange", func(t *testing.T) {
		// The control for the failure cases below: without a failing
		// condition the same Change applies in full. Without this, a
		// Change that failed for some other reason would make every
		// "writes nothing" check pass.
		s := o.New(t)
		seedAtomic(t, s)
		commit(t, s, atomicChange())
		ctx := t.Context()
		if p := must(s.PipelineGet(ctx, "orders")).get(t); p.Version != 2 {
			t.Errorf("pipeline orders: version %d, want 2", p.Version)
		}
		if _, err := s.PipelineGet(ctx, "billing"); err != nil {
			t.Errorf("pipeline billing: %v", err)
		}
		if c := must(s.CalendarGet(ctx, "holidays")).get(t); c.Version != 2 || !c.RemovedAt.IsZero() {
			t.Errorf("calendar holidays: version %d removed %v, want 2 and not removed", c.Version, c.RemovedAt)
		}
		if _, err := s.CalendarGet(ctx, "closures"); err != nil {
			t.Errorf("calendar closures: %v", err)
		}
		// A check writes nothing: the checked records keep their versions.
		if p := must(s.PipelineGet(ctx, "checked")).get(t); p.Version != 1 {
			t.Errorf("checked pipeline: version %d, want 1", p.Version)
		}
		if c := must(s.CalendarGet(ctx, "weekends")).get(t); c.Version != 1 {
			t.Errorf("checked calendar weekends: version %d, want 1", c.Version)
		}
		_, err := s.PipelineGet(ctx, "ghost")
		notFound(t, "a pipeline checked absent", err)
		_, err = s.CalendarGet(ctx, "phantom")
		notFound(t, "a calendar checked absent", err)
		if n := len(must(s.SensorList(ctx, "orders")).get(t)); n != 3 {
			t.Errorf("orders has %d sensors, want 3 (count, stale, new)", n)
		}
		if r := must(s.RunGet(ctx, k13)).get(t); r.Version != 2 || r.State != run.Completed {
			t.Errorf("run %v: version %d state %s, want 2 COMPLETED", k13, r.Version, r.State)
		}
		if _, err := s.RunGet(ctx, k14); err != nil {
			t.Errorf("run %v: %v", k14, err)
		}
		if n := len(must(s.LedgerList(ctx, k13)).get(t)); n != 2 {
			t.Errorf("ledger of %v: %d entries, want 2", k13, n)
		}
		_, err = s.BaselineGet(ctx, k13)
		notFound(t, "deleted baseline", err)
		if _, err := s.BaselineGet(ctx, k14); err != nil {
			t.Errorf("baseline %v: %v", k14, err)
		}
		if _, err := s.MarkerGet(ctx, k13, "to-delete"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted marker: got %v, want ErrNotFound", err)
		}
		if _, err := s.MarkerGet(ctx, k14, "first-trigger"); err != nil {
			t.Errorf("marker: %v", err)
		}
		if tm := must(s.TimerGet(ctx, "t-existing")).get(t); !tm.DueAt.Equal(at(90 * time.Minute)) {
			t.Errorf("timer t-existing due %v, want %v", tm.DueAt, at(90*time.Minute))
		}
		if _, err := s.TimerGet(ctx, "t-delete"); !errors.Is(err, store.ErrNotFound) {
			t.Errorf("deleted timer: got %v, want ErrNotFound", err)
		}
		if n := len(allEvents(t, s)); n != 3 {
			t.Errorf("%d events, want 3", n)
		}
	})

	failing := []changeCase{
		{"StalePipelineVersion", func(c *store.Change) {
			c.Pipelines = append(c.Pipelines, store.PipelineWrite{Pipeline: minimalPipeline("audit"), ExpectVersion: 3})
		}},
		{"PipelineAlreadyExists", func(c *store.Change) {
			c.Pipelines = append(c.Pipelines, store.PipelineWrite{Pipeline: minimalPipeline("audit")})
		}},
		{"StaleCalendarVersion", func(c *store.Change) {
			c.Calendars = append(c.Calendars, store.CalendarWrite{Calendar: minimalCalendar("bridges"), ExpectVersion: 3})
		}},
		{"CalendarAlreadyExists", func(c *store.Change) {
			c.Calendars = append(c.Calendars, store.CalendarWrite{Calendar: minimalCalendar("bridges")})
		}},
		// A decision read a pipeline row or a calendar that has moved
		// since (a pause, a reload, a calendar change): it must not
		// commit.
		{"PipelineCheckOfMissingRow", func(c *store.Change) {
			c.PipelineChecks = append(c.PipelineChecks, store.PipelineCheck{ID: "orders-archive", Version: 1})
		}},
		{"PipelineCheckOfMovedRow", func(c *store.Change) {
			c.PipelineChecks[0].Version = 2 // checked is at 1
		}},
		{"PipelineCheckExpectsAbsent", func(c *store.Change) {
			c.PipelineChecks[1].ID = "audit" // ghost → audit, which exists
			c.PipelineChecks[0].ID = "ghost-2"
			c.PipelineChecks[0].Version = 0
		}},
		{"CalendarCheckOfMovedRow", func(c *store.Change) {
			c.CalendarChecks = append(c.CalendarChecks, store.CalendarCheck{Name: "bridges", Version: 2})
		}},
		{"CalendarCheckExpectsAbsent", func(c *store.Change) {
			c.CalendarChecks = append(c.CalendarChecks, store.CalendarCheck{Name: "bridges", Version: 0})
		}},
		{"StaleSensorVersion", func(c *store.Change) {
			c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: minimalSensor("orders", "stale", 2), ExpectVersion: 2})
		}},
		{"StaleRunVersion", func(c *store.Change) {
			c.Runs = append(c.Runs, store.RunWrite{Run: newRun(k12), ExpectVersion: 7})
		}},
		{"RunAlreadyExists", func(c *store.Change) {
			c.Runs = append(c.Runs, store.RunWrite{Run: newRun(k12)})
		}},
		{"UpdateOfMissingRun", func(c *store.Change) {
			c.Runs = append(c.Runs, store.RunWrite{Run: newRun(key("orders", "daily", "2026-03-01")), ExpectVersion: 1})
		}},
		{"DuplicateLedgerSeq", func(c *store.Change) {
			c.Ledger = append(c.Ledger, ledgerEntry(k13, 1))
		}},
		{"MarkerAlreadyPresent", func(c *store.Change) {
			c.Markers = append(c.Markers, store.MarkerWrite{Marker: fullMarker(k13, "first-trigger"), IfAbsent: true})
		}},
		{"TimerMoved", func(c *store.Change) {
			c.Timers = append(c.Timers, store.TimerWrite{Timer: fullTimer("t-moved", at(4*time.Hour)),
				ExpectDueAt: ptr(at(3*time.Hour + time.Nanosecond))})
		}},
		{"TimerWriteOfMissing", func(c *store.Change) {
			c.Timers = append(c.Timers, store.TimerWrite{Timer: fullTimer("t-ghost", at(4*time.Hour)), ExpectDueAt: ptr(at(0))})
		}},
		{"TimerClaimOfMoved", func(c *store.Change) {
			c.TimerDeletes = append(c.TimerDeletes, store.TimerDelete{Key: "t-moved", ExpectDueAt: ptr(at(time.Hour))})
		}},
		{"TimerClaimOfMissing", func(c *store.Change) {
			c.TimerDeletes = append(c.TimerDeletes, store.TimerDelete{Key: "t-ghost", ExpectDueAt: ptr(at(0))})
		}},
	}
	checkRefusedWhole(t, o, "LastConditionFailsWritesNothing", failing, conflict, func(t *testing.T, s store.Store) {
		// The store still takes the same Change without the failing
		// part: the failure left no lock or half-state behind.
		commit(t, s, atomicChange())
	})

	// A Change that touches one record twice, or more than
	// store.MaxChangeRecords records, is refused whole with
	// store.ErrInvalidChange, whichever backend: DynamoDB cannot apply it,
	// so no backend may.
	invalid := []changeCase{
		{"PipelineTwice", func(c *store.Change) {
			c.Pipelines = append(c.Pipelines, store.PipelineWrite{Pipeline: minimalPipeline("billing")})
		}},
		{"PipelineWrittenAndChecked", func(c *store.Change) {
			c.PipelineChecks = append(c.PipelineChecks, store.PipelineCheck{ID: "orders", Version: 1})
		}},
		{"PipelineCheckedTwice", func(c *store.Change) {
			c.PipelineChecks = append(c.PipelineChecks, store.PipelineCheck{ID: "checked", Version: 1})
		}},
		{"CalendarTwice", func(c *store.Change) {
			c.Calendars = append(c.Calendars, store.CalendarWrite{Calendar: minimalCalendar("closures")})
		}},
		{"CalendarWrittenAndChecked", func(c *store.Change) {
			c.CalendarChecks = append(c.CalendarChecks, store.CalendarCheck{Name: "holidays", Version: 1})
		}},
		{"SensorWrittenAndDeleted", func(c *store.Change) {
			c.SensorDeletes = append(c.SensorDeletes, store.SensorDelete{PipelineID: "orders", Key: "orders-new"})
		}},
		{"RunTwice", func(c *store.Change) { c.Runs = append(c.Runs, store.RunWrite{Run: newRun(k14)}) }},
		{"LedgerEntryTwice", func(c *store.Change) { c.Ledger = append(c.Ledger, ledgerEntry(k13, 2)) }},
		{"BaselinePutAndDeleted", func(c *store.Change) { c.BaselineDelete = append(c.BaselineDelete, k14) }},
		{"MarkerWrittenAndDeleted", func(c *store.Change) {
			c.MarkerDeletes = append(c.MarkerDeletes, store.MarkerDelete{Key: k14, Kind: "first-trigger"})
		}},
		{"TimerTwice", func(c *store.Change) {
			c.Timers = append(c.Timers, store.TimerWrite{Timer: fullTimer("t-new", at(6*time.Hour))})
		}},
		{"TimerWrittenAndDeleted", func(c *store.Change) {
			c.TimerDeletes = append(c.TimerDeletes, store.TimerDelete{Key: "t-new"})
		}},
		{"EventTwice", func(c *store.Change) {
			c.Events = append(c.Events, newEvent("e1", event.JobTriggered, k14, at(time.Minute)))
		}},
		{"TooManyRecords", func(c *store.Change) {
			for i := 0; len(c.Events) < store.MaxChangeRecords; i++ {
				c.Events = append(c.Events, newEvent(fmt.Sprintf("bulk-%d", i), event.JobTriggered, k14, at(time.Minute)))
			}
		}},
	}
	checkRefusedWhole(t, o, "InvalidChangeWritesNothing", invalid, func(t *testing.T, s store.Store, c store.Change) {
		if err := s.Commit(t.Context(), c); !errors.Is(err, store.ErrInvalidChange) {
			t.Fatalf("Commit: got error %v, want store.ErrInvalidChange", err)
		}
	}, nil)
	t.Run("AHundredRecordsIsAllowed", func(t *testing.T) {
		// 99 events of one pipeline and the counter of their shard.
		s := o.New(t)
		c := store.Change{}
		for i := 0; i < store.MaxChangeRecords-1; i++ {
			c.Events = append(c.Events, newEvent(fmt.Sprintf("bulk-%d", i), event.JobTriggered, k14, at(time.Minute)))
		}
		commit(t, s, c)
	})

	t.Run("EventShardCountersCount", func(t *testing.T) {
		// Each shard a Change appends to is one more record: its counter.
		// 98 events in one shard are 99 records; spread over three shards
		// they are 101, one too many.
		pipelines := []string{"orders", otherShard("orders"), otherShard(otherShard("orders"))}
		if store.EventShard(pipelines[2]) == store.EventShard("orders") {
			pipelines[2] = "" // the fixture wants three shards
		}
		var one, three store.Change
		for i := range store.MaxChangeRecords - 2 {
			one.Events = append(one.Events, newEvent(fmt.Sprintf("one-%d", i), event.JobTriggered, k14, at(0)))
			three.Events = append(three.Events, newEvent(fmt.Sprintf("three-%d", i), event.JobTriggered,
				key(pipelines[i%3], "daily", "2026-03-14"), at(0)))
		}
		s := o.New(t)
		if err := s.Commit(t.Context(), three); !errors.Is(err, store.ErrInvalidChange) {
			t.Fatalf("98 events in three shards: got error %v, want store.ErrInvalidChange", err)
		}
		commit(t, s, one)
	})

	t.Run("EmptyChangeWritesNothing", func(t *testing.T) {
		s := o.New(t)
		seedAtomic(t, s)
		before := takeSnapshot(t, s, atomicPipelines, atomicPeriods)
		commit(t, s, store.Change{})
		mustMatch(t, "store after an empty commit", takeSnapshot(t, s, atomicPipelines, atomicPeriods), before)
	})
}

// changeCase is a part added to the atomic Change (atomicChange) that
// makes the store refuse it.
type changeCase struct {
	name string
	add  func(c *store.Change)
}

// checkRefusedWhole commits, to a seeded store, the atomic Change with
// each case's part added: refuse commits it and checks how the store
// refused it; the store must then be as it was, and then (when not nil)
// checks what it still does.
func checkRefusedWhole(t *testing.T, o Options, name string, cases []changeCase,
	refuse func(t *testing.T, s store.Store, c store.Change), then func(t *testing.T, s store.Store)) {
	for _, tc := range cases {
		t.Run(name+"/"+tc.name, func(t *testing.T) {
			s := o.New(t)
			seedAtomic(t, s)
			before := takeSnapshot(t, s, atomicPipelines, atomicPeriods)
			c := atomicChange()
			tc.add(&c)
			refuse(t, s, c)
			mustMatch(t, "store after the refused commit", takeSnapshot(t, s, atomicPipelines, atomicPeriods), before)
			if then != nil {
				then(t, s)
			}
		})
	}
}
