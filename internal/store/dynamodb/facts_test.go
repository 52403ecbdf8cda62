package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/smithy-go/middleware"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
)

// callCounter counts a client's calls by operation.
type callCounter struct {
	mu    sync.Mutex
	calls map[string]int
}

func (c *callCounter) client(base *dynamodb.Client) *dynamodb.Client {
	return dynamodb.New(base.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("countCalls", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				c.mu.Lock()
				c.calls[awsmiddleware.GetOperationName(ctx)]++
				c.mu.Unlock()
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
		})
	})
}

func (c *callCounter) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := maps.Clone(c.calls)
	clear(c.calls)
	return got
}

// TestFactsCalls: Facts reads every point key in one BatchGetItem (one a
// hundred keys), and each period's markers and ledger and each range read
// with a Query each, whatever else the query names.
func TestFactsCalls(t *testing.T) {
	base := ddblocal.Client(t)
	counter := &callCounter{calls: map[string]int{}}
	s := openOn(t, counter.client(base), newTables(t, base))
	ctx := t.Context()
	k := run.Key{PipelineID: "orders", ScheduleID: "daily", Period: "2026-03-10"}
	if err := s.Commit(ctx, store.Change{
		Sensors: []store.SensorWrite{{Sensor: store.Sensor{PipelineID: "orders", Key: "landed", Data: sensor.NewObject(nil)}}},
		Runs:    []store.RunWrite{{Run: run.Run{Key: k, State: run.Running}}},
		Markers: []store.MarkerWrite{{Marker: store.Marker{Key: k, Kind: "first-trigger"}}},
		Ledger:  []store.LedgerEntry{{Key: k, Seq: 1, Reason: "r"}},
	}); err != nil {
		t.Fatal(err)
	}
	other := run.Key{PipelineID: "orders", ScheduleID: "daily", Period: "2026-03-09"}
	step := store.FactsQuery{Pipelines: []string{"orders"}, Timers: []string{"step"}, Runs: []run.Key{k, other},
		Sensors:   []store.SensorRef{{PipelineID: "orders", Key: "landed"}, {PipelineID: "orders", Key: "rows"}},
		Inboxes:   []store.SensorRef{{PipelineID: "orders", Key: "landed"}},
		Baselines: []run.Key{k}, MarkersOf: []run.Key{k, other}, Ledgers: []run.Key{k}}
	var many store.FactsQuery
	for i := range 250 {
		many.Runs = append(many.Runs, run.Key{PipelineID: "orders", ScheduleID: "daily", Period: fmt.Sprintf("p%03d", i)})
	}
	for _, tc := range []struct {
		name string
		q    store.FactsQuery
		want map[string]int
	}{
		{"Step", step, map[string]int{"BatchGetItem": 1, "Query": 3}},
		{"PointKeysOnly", store.FactsQuery{Pipelines: step.Pipelines, Runs: step.Runs, Sensors: step.Sensors}, map[string]int{"BatchGetItem": 1}},
		{"PeriodsOnly", store.FactsQuery{MarkersOf: step.MarkersOf}, map[string]int{"Query": 2}},
		{"ManyKeys", many, map[string]int{"BatchGetItem": 3}},
		// Each range read is its single read's Query, beside the batch;
		// silences are keys of the batch.
		{"Ranges", store.FactsQuery{Pipelines: step.Pipelines, Silences: []string{"s1"},
			RunLists:       []store.RunListParams{{PipelineID: "orders", ScheduleID: "daily", PeriodFrom: "2026-03-09T00", PeriodTo: "2026-03-09T23"}, {PipelineID: "orders", ActiveOnly: true}},
			SensorPrefixes: []store.SensorListPrefixParams{{PipelineID: "orders", Prefix: "land"}},
			SensorsChanged: []store.SensorListChangedParams{{PipelineID: "orders", Limit: 1}},
			Backfills:      []string{"orders"}}, map[string]int{"BatchGetItem": 1, "Query": 5}},
		{"Nothing", store.FactsQuery{}, map[string]int{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			counter.take()
			f, err := s.Facts(ctx, tc.q)
			if err != nil {
				t.Fatal(err)
			}
			if got := counter.take(); !maps.Equal(got, tc.want) {
				t.Errorf("calls %v, want %v", got, tc.want)
			}
			if tc.name == "Step" && (len(f.Runs) != 1 || len(f.Sensors) != 1 || len(f.Markers[k]) != 1 || len(f.Ledgers[k]) != 1) {
				t.Errorf("Facts %+v: want the run, the sensor, the marker and the ledger entry written", f)
			}
		})
	}
}

// TestFactsFailsWithAnyRangeRead: a range read that fails fails Facts,
// whichever kind it is (none is dropped as an empty list).
func TestFactsFailsWithAnyRangeRead(t *testing.T) {
	base := ddblocal.Client(t)
	failing := dynamodb.New(base.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("failQueries", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if awsmiddleware.GetOperationName(ctx) == "Query" {
					return middleware.InitializeOutput{}, middleware.Metadata{}, errors.New("query refused by the test")
				}
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
		})
	})
	s := openOn(t, failing, newTables(t, base))
	k := run.Key{PipelineID: "orders", ScheduleID: "daily", Period: "2026-03-10"}
	// An event, so that a page of the log has a shard to Query.
	if err := s.Commit(t.Context(), store.Change{Events: []event.Event{{ID: "e1", Time: time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC), Type: event.SLABreach, PipelineID: "orders"}}}); err != nil {
		t.Fatal(err)
	}
	for name, q := range map[string]store.FactsQuery{
		"MarkersOf":      {MarkersOf: []run.Key{k}},
		"Ledgers":        {Ledgers: []run.Key{k}},
		"RunLists":       {RunLists: []store.RunListParams{{PipelineID: "orders", ActiveOnly: true}}},
		"SensorPrefixes": {SensorPrefixes: []store.SensorListPrefixParams{{PipelineID: "orders", Prefix: "land"}}},
		"SensorsChanged": {SensorsChanged: []store.SensorListChangedParams{{PipelineID: "orders", Limit: 1}}},
		"Backfills":      {Pipelines: []string{"orders"}, Backfills: []string{"orders"}},
		"AllPipelines":   {Pipelines: []string{"orders"}, AllPipelines: true},
		"EventLists":     {Pipelines: []string{"orders"}, EventLists: []store.EventListParams{{PipelineID: "orders"}}},
	} {
		if _, err := s.Facts(t.Context(), q); err == nil || !strings.Contains(err.Error(), "query refused by the test") {
			t.Errorf("Facts of %s with its Query failing = %v, want that failure", name, err)
		}
	}
}

// queryGate holds each Query a client sends until factsQueries of them
// are in flight, or all the test expects have been sent (the last of
// them), or a minute has passed (a bound below factsQueries would hold
// them forever): the most in flight at once is then factsQueries when
// Facts' range reads run concurrently at that bound, less when they run
// at a lower one, more when they are not bounded.
type queryGate struct {
	mu             sync.Mutex
	changed        *sync.Cond
	expect         int // Queries the test's Facts sends; 0: pass every Query
	sent, inFlight int
	most           int
	expired        bool
}

func (g *queryGate) client(base *dynamodb.Client) *dynamodb.Client {
	g.changed = sync.NewCond(&g.mu)
	return dynamodb.New(base.Options(), func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, func(s *middleware.Stack) error {
			return s.Initialize.Add(middleware.InitializeMiddlewareFunc("gateQueries", func(ctx context.Context, in middleware.InitializeInput, next middleware.InitializeHandler) (middleware.InitializeOutput, middleware.Metadata, error) {
				if awsmiddleware.GetOperationName(ctx) != "Query" {
					return next.HandleInitialize(ctx, in)
				}
				g.mu.Lock()
				if g.expect == 0 {
					g.mu.Unlock()
					return next.HandleInitialize(ctx, in)
				}
				g.sent++
				g.inFlight++
				g.most = max(g.most, g.inFlight)
				g.changed.Broadcast()
				for g.inFlight < factsQueries && g.sent < g.expect && !g.expired {
					g.changed.Wait()
				}
				g.mu.Unlock()
				defer func() {
					g.mu.Lock()
					g.inFlight--
					g.mu.Unlock()
				}()
				return next.HandleInitialize(ctx, in)
			}), middleware.After)
		})
	})
}

// TestFactsRangeReadsRunAtMostFactsQueriesAtOnce: three times
// factsQueries range reads (periods' markers and ledgers) run
// factsQueries at once, no more and no fewer, and Facts answers what the
// single reads answer one after the other.
func TestFactsRangeReadsRunAtMostFactsQueriesAtOnce(t *testing.T) {
	base := ddblocal.Client(t)
	gate := &queryGate{}
	s := openOn(t, gate.client(base), newTables(t, base))
	ctx := t.Context()
	var q store.FactsQuery
	at := time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC)
	for i := range 3 * factsQueries / 2 {
		k := run.Key{PipelineID: "orders", ScheduleID: "daily", Period: fmt.Sprintf("p%02d", i)}
		var c store.Change
		for seq := 1; seq <= i%3; seq++ {
			c.Ledger = append(c.Ledger, store.LedgerEntry{Key: k, Seq: seq, Reason: fmt.Sprintf("r%d", seq), At: at})
		}
		if i%2 == 0 {
			c.Markers = append(c.Markers, store.MarkerWrite{Marker: store.Marker{Key: k, Kind: "first-trigger"}})
		}
		if err := s.Commit(ctx, c); err != nil {
			t.Fatal(err)
		}
		q.MarkersOf, q.Ledgers = append(q.MarkersOf, k), append(q.Ledgers, k)
	}
	markers, ledgers := map[run.Key][]store.Marker{}, map[run.Key][]store.LedgerEntry{}
	for _, k := range q.MarkersOf {
		m, err := s.MarkerListOf(ctx, k)
		l, err2 := s.LedgerList(ctx, k)
		if err := errors.Join(err, err2); err != nil {
			t.Fatal(err)
		}
		if len(m) > 0 {
			markers[k] = m
		}
		if len(l) > 0 {
			ledgers[k] = l
		}
	}

	gate.mu.Lock()
	gate.expect = len(q.MarkersOf) + len(q.Ledgers)
	gate.mu.Unlock()
	expire := time.AfterFunc(time.Minute, func() {
		gate.mu.Lock()
		gate.expired = true
		gate.changed.Broadcast()
		gate.mu.Unlock()
	})
	defer expire.Stop()
	f, err := s.Facts(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	gate.mu.Lock()
	sent, most := gate.sent, gate.most
	gate.mu.Unlock()
	if sent != gate.expect || most != factsQueries {
		t.Errorf("%d Queries, at most %d at once; want %d, %d at once", sent, most, gate.expect, factsQueries)
	}
	if !reflect.DeepEqual(f.Markers, markers) || !reflect.DeepEqual(f.Ledgers, ledgers) {
		t.Errorf("Facts read markers %v and ledgers %v; the single reads %v and %v", f.Markers, f.Ledgers, markers, ledgers)
	}
}
