package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"maps"
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
