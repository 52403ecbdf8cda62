package dynamodb

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

var t2030 = time.Date(2030, 3, 10, 7, 0, 0, 0, time.UTC)

func newRunAt(k run.Key) run.Run {
	return run.Run{Key: k, State: run.Evaluating, Cause: run.CauseCron, CreatedAt: t2030, UpdatedAt: t2030, StateSince: t2030}
}

// TestCancellationReasons: a transaction cancelled for a condition of
// the Change is store.ErrConflict naming the record; one DynamoDB refuses
// for another reason is an error that is not a conflict (retrying it
// would never help); neither writes anything.
func TestCancellationReasons(t *testing.T) {
	st := newStore(t)
	ctx := t.Context()
	k := run.Key{PipelineID: "orders", ScheduleID: "daily", Period: "2030-03-10"}
	if err := st.Commit(ctx, store.Change{Runs: []store.RunWrite{{Run: newRunAt(k)}}}); err != nil {
		t.Fatal(err)
	}
	stale := store.Change{
		Runs:   []store.RunWrite{{Run: newRunAt(k), ExpectVersion: 7}},
		Events: []event.Event{{ID: "lost", Type: event.JobTriggered, PipelineID: "orders", Time: t2030}},
	}
	err := st.Commit(ctx, stale)
	if !errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "run {orders daily 2030-03-10}") {
		t.Fatalf("stale version: %v, want ErrConflict naming the run", err)
	}

	// One record over DynamoDB's item size: refused before DynamoDB sees
	// it, with the record named.
	big := store.Pipeline{ID: "big", Doc: []byte(strings.Repeat("x", 500<<10))}
	err = st.Commit(ctx, store.Change{Pipelines: []store.PipelineWrite{{Pipeline: big}}})
	if err == nil || errors.Is(err, store.ErrConflict) || !strings.Contains(err.Error(), "pipeline big") || !strings.Contains(err.Error(), "400 KB") {
		t.Fatalf("a 500 KB pipeline document: %v, want a clear refusal", err)
	}
	// A transaction over DynamoDB's 4 MB: DynamoDB refuses it whole.
	var c store.Change
	for i := range 12 {
		c.Pipelines = append(c.Pipelines, store.PipelineWrite{Pipeline: store.Pipeline{ID: fmt.Sprint("p", i), Doc: []byte(strings.Repeat("y", 370<<10))}})
	}
	if err := st.Commit(ctx, c); err == nil || errors.Is(err, store.ErrConflict) {
		t.Fatalf("a 4.4 MB transaction: %v, want an error that is not a conflict", err)
	}
	ps, err := st.PipelineList(ctx)
	if err != nil || len(ps) != 0 {
		t.Fatalf("pipelines after refused commits: %d, %v", len(ps), err)
	}
	page, err := st.EventList(ctx, store.EventListParams{})
	if err != nil || len(page.Events) != 0 {
		t.Fatalf("events after refused commits: %v, %v", page.Events, err)
	}
	if r, err := st.RunGet(ctx, k); err != nil || r.Version != 1 {
		t.Fatalf("run after refused commits: %+v, %v", r, err)
	}
}

// TestTwoProcessesRaceOnOneRun: writers in two Stores (two processes, each
// with its own counter cache) start the same run at once: exactly one
// wins, the others get store.ErrConflict, and only the winner's event is
// in the log.
func TestTwoProcessesRaceOnOneRun(t *testing.T) {
	a := newStore(t)
	b := openOn(t, a.c, a.t)
	k := run.Key{PipelineID: "orders", ScheduleID: "daily", Period: "2030-03-10"}
	const writers = 12
	errs := make([]error, writers)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i := range writers {
		st := a
		if i%2 == 1 {
			st = b
		}
		wg.Go(func() {
			<-start
			r := newRunAt(k)
			r.JobRunID = fmt.Sprint("w", i)
			errs[i] = st.Commit(t.Context(), store.Change{Runs: []store.RunWrite{{Run: r}},
				Events: []event.Event{{ID: fmt.Sprint("ev", i), Type: event.ValidationPassed, PipelineID: "orders", Time: t2030}}})
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, err := range errs {
		switch {
		case err == nil && winner >= 0:
			t.Fatalf("writers %d and %d both won", winner, i)
		case err == nil:
			winner = i
		case !errors.Is(err, store.ErrConflict):
			t.Fatalf("writer %d: %v, want ErrConflict", i, err)
		}
	}
	if winner < 0 {
		t.Fatal("no writer won")
	}
	r, err := b.RunGet(t.Context(), k)
	if err != nil || r.JobRunID != fmt.Sprint("w", winner) {
		t.Fatalf("stored run %+v, %v; want writer %d's", r, err, winner)
	}
	page, err := a.EventList(t.Context(), store.EventListParams{})
	if err != nil || len(page.Events) != 1 || page.Events[0].ID != fmt.Sprint("ev", winner) || page.Events[0].Seq != 1 {
		t.Fatalf("events %+v, %v; want only the winner's, at seq 1", page.Events, err)
	}
}

// TestStaleShardCountersAreReadAgain: a Store's guess of a shard counter
// goes stale when another process appends to the shard; its next commit's
// counter condition fails, the store reads the counter and retries —
// under concurrent appends from two processes every commit lands, and the
// shard counts 1, 2, 3 … with no gap and no repeat.
func TestStaleShardCountersAreReadAgain(t *testing.T) {
	a := newStore(t)
	b := openOn(t, a.c, a.t)
	ctx := t.Context()
	ev := func(id string) event.Event {
		return event.Event{ID: id, Type: event.JobCompleted, PipelineID: "orders", Time: t2030}
	}
	if err := a.Commit(ctx, store.Change{Events: []event.Event{ev("a0")}}); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(ctx, store.Change{Events: []event.Event{ev("b0"), ev("b1"), ev("b2")}}); err != nil {
		t.Fatal(err)
	}
	if got := a.counter(store.EventShard("orders")); got != 1 {
		t.Fatalf("a's guess is %d, want the stale 1 (the test needs it stale)", got)
	}
	if err := a.Commit(ctx, store.Change{Events: []event.Event{ev("a1")}}); err != nil {
		t.Fatal(err)
	}

	const perStore, commits = 4, 6
	var wg sync.WaitGroup
	errs := make(chan error, 2*perStore*commits)
	for w := range 2 * perStore {
		st := a
		if w%2 == 1 {
			st = b
		}
		wg.Go(func() {
			for c := range commits {
				evs := []event.Event{ev(fmt.Sprintf("w%d-%d-x", w, c))}
				if c%2 == 0 {
					evs = append(evs, ev(fmt.Sprintf("w%d-%d-y", w, c)), event.Event{ID: fmt.Sprintf("w%d-%d-z", w, c), Type: event.JobCompleted, PipelineID: "billing", Time: t2030})
				}
				if err := st.Commit(ctx, store.Change{Events: evs}); err != nil {
					errs <- fmt.Errorf("writer %d commit %d: %w", w, c, err)
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	page, err := b.EventList(ctx, store.EventListParams{PipelineID: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	all, err := b.EventList(ctx, store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	// orders and billing share a shard (storetest's fixture says so).
	if store.EventShard("orders") != store.EventShard("billing") {
		t.Fatal("orders and billing should share a shard")
	}
	want := 5 + 2*perStore*(commits+commits/2*2)
	if len(all.Events) != want {
		t.Fatalf("%d events in the log, want %d", len(all.Events), want)
	}
	for i, e := range all.Events {
		if e.Seq != int64(i+1) {
			t.Fatalf("event %d (%s) at seq %d: the shard has a gap or a repeat", i, e.ID, e.Seq)
		}
	}
	if got := page.Events[:5]; fmt.Sprint(eventIDsOf(got)) != "[a0 b0 b1 b2 a1]" {
		t.Fatalf("first events %v", eventIDsOf(got))
	}
}

func eventIDsOf(evs []event.Event) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.ID)
	}
	return out
}

// TestReadsPageOverOneMegabyte: DynamoDB returns at most 1 MB a Query and
// 100 keys (16 MB) a BatchGetItem; every list read pages past both.
func TestReadsPageOverOneMegabyte(t *testing.T) {
	st := newStore(t)
	ctx := t.Context()
	pad := sensor.StringValue(strings.Repeat("z", 60<<10))
	const bigSensors, events = 30, 24
	var keys []string
	for i := range bigSensors {
		data := sensor.NewObject(map[string]sensor.Value{"pad": pad, "i": sensor.IntValue(int64(i))})
		x := store.Sensor{PipelineID: "orders", Key: fmt.Sprintf("big-%02d", i), Data: data, ChangedAt: t2030.Add(time.Duration(i)), WrittenAt: t2030}
		if err := st.Commit(ctx, store.Change{Sensors: []store.SensorWrite{{Sensor: x}},
			Events: []event.Event{{ID: fmt.Sprint("e", i), Type: event.JobCompleted, PipelineID: "orders", Time: t2030, Detail: data}}}); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, x.Key)
	}
	for i := range 150 { // more keys than one BatchGetItem takes
		keys = append(keys, fmt.Sprint("missing-", i))
	}
	list, err := st.SensorList(ctx, "orders")
	if err != nil || len(list) != bigSensors {
		t.Fatalf("SensorList over %d KB: %d sensors, %v", bigSensors*60, len(list), err)
	}
	many, err := st.SensorGetMany(ctx, store.SensorGetManyParams{PipelineID: "orders", Keys: keys})
	if err != nil || len(many) != bigSensors {
		t.Fatalf("SensorGetMany of %d keys: %d sensors, %v", len(keys), len(many), err)
	}
	changed, err := st.SensorListChanged(ctx, store.SensorListChangedParams{PipelineID: "orders", Since: t2030.Add(5), Limit: 20})
	if err != nil || len(changed) != 20 || changed[0].Key != "big-05" {
		t.Fatalf("SensorListChanged with a limit: %d, %v", len(changed), err)
	}
	page, err := st.EventList(ctx, store.EventListParams{})
	if err != nil || len(page.Events) != bigSensors {
		t.Fatalf("EventList over %d KB: %d events, %v", bigSensors*60, len(page.Events), err)
	}
	byPipeline, err := st.EventList(ctx, store.EventListParams{PipelineID: "orders", After: store.Cursor{}.Advance(page.Events[2]), Limit: events})
	if err != nil || len(byPipeline.Events) != events || byPipeline.Events[0].ID != "e3" {
		t.Fatalf("EventList by pipeline after e2, limit %d: %d events, %v", events, len(byPipeline.Events), err)
	}
}

// TestBatchReadsRetryUnprocessedKeys: BatchGetItem answers at most 16 MB;
// the keys it leaves unprocessed are read again.
func TestBatchReadsRetryUnprocessedKeys(t *testing.T) {
	st := newStore(t)
	ctx := t.Context()
	pad := sensor.StringValue(strings.Repeat("q", 340<<10))
	var keys []string
	for i := range 56 { // 56 x 340 KB: 19 MB, more than one answer holds
		x := store.Sensor{PipelineID: "orders", Key: fmt.Sprintf("k%02d", i), Data: sensor.NewObject(map[string]sensor.Value{"pad": pad}),
			ChangedAt: t2030, WrittenAt: t2030}
		if err := st.Commit(ctx, store.Change{Sensors: []store.SensorWrite{{Sensor: x}}}); err != nil {
			t.Fatal(err)
		}
		keys = append(keys, x.Key)
	}
	got, err := st.SensorGetMany(ctx, store.SensorGetManyParams{PipelineID: "orders", Keys: keys})
	if err != nil || len(got) != len(keys) {
		t.Fatalf("SensorGetMany of %d sensors of 340 KB: %d, %v", len(keys), len(got), err)
	}
}
