package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/storetest"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
)

// TestMain deletes the tables the tests left in the pool and stops the
// DynamoDB Local the tests started.
func TestMain(m *testing.M) {
	code := m.Run()
	deletePooled()
	ddblocal.Stop()
	os.Exit(code)
}

// testRetention is the retention of the test stores: not the default, so
// a store that ignored Config.Retention fails the expiry checks, and long,
// because DynamoDB Local's TTL really deletes: storetest's fixtures are of
// early 2026, and with a short retention their items would vanish under
// the tests.
const testRetention = 50 * 365 * 24 * time.Hour

// pool keeps the table sets tests are done with, emptied, for the next
// test: emptying a test's few items takes a few requests, while creating
// four tables with their indexes and deleting them again takes some 130
// ms on DynamoDB Local — and storetest makes about 250 stores.
var pool struct {
	sync.Mutex
	client *dynamodb.Client
	free   []Tables
	all    []Tables
}

// newTables gives t an empty set of tables, from the pool or created, and
// empties it back into the pool when t ends.
func newTables(t testing.TB, c *dynamodb.Client) Tables {
	t.Helper()
	pool.Lock()
	var tables Tables
	if n := len(pool.free); n > 0 {
		tables, pool.free = pool.free[n-1], pool.free[:n-1]
		pool.Unlock()
	} else {
		pool.Unlock()
		tables = TablesFor(ddblocal.Prefix(t))
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := CreateTables(ctx, c, tables); err != nil {
			t.Fatal(err)
		}
		pool.Lock()
		pool.client, pool.all = c, append(pool.all, tables)
		pool.Unlock()
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := emptyTables(ctx, c, tables); err != nil {
			t.Errorf("empty the tables for the next test: %v", err)
			return // not reused
		}
		pool.Lock()
		pool.free = append(pool.free, tables)
		pool.Unlock()
	})
	return tables
}

// emptyTables deletes every item of the tables.
func emptyTables(ctx context.Context, c *dynamodb.Client, t Tables) error {
	var wg sync.WaitGroup
	errs := make([]error, 4)
	for i, name := range t.all() {
		wg.Go(func() { errs[i] = emptyTable(ctx, c, name) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

func emptyTable(ctx context.Context, c *dynamodb.Client, name string) error {
	in := &dynamodb.ScanInput{TableName: aws.String(name), ConsistentRead: aws.Bool(true), ProjectionExpression: aws.String("PK, SK")}
	for {
		out, err := c.Scan(ctx, in)
		if err != nil {
			return err
		}
		for start := 0; start < len(out.Items); start += 25 {
			var reqs []types.WriteRequest
			for _, it := range out.Items[start:min(start+25, len(out.Items))] {
				reqs = append(reqs, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: it}})
			}
			for try := 0; len(reqs) > 0; try++ {
				if try == 20 {
					return fmt.Errorf("%s: %d deletes still unprocessed", name, len(reqs))
				}
				res, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{name: reqs}})
				if err != nil {
					return err
				}
				reqs = res.UnprocessedItems[name]
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// deletePooled deletes every table set the tests created.
func deletePooled() {
	pool.Lock()
	defer pool.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, t := range pool.all {
		if err := DeleteTables(ctx, pool.client, t); err != nil {
			fmt.Fprintln(os.Stderr, "dynamodb tests: delete tables:", err)
		}
	}
}

// newStore opens a store on fresh tables.
func newStore(t testing.TB) *Store {
	t.Helper()
	c := ddblocal.Client(t)
	return openOn(t, c, newTables(t, c))
}

func openOn(t testing.TB, c *dynamodb.Client, tables Tables) *Store {
	t.Helper()
	s, err := Open(context.Background(), Config{Client: c, Tables: tables, Retention: testRetention})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.RunWithOptions(t, storetest.Options{
		New: func(t *testing.T) store.Store { return newStore(t) },
		Reopen: func(t *testing.T, s store.Store) store.Store {
			old := s.(*Store)
			if err := old.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			return openOn(t, old.c, old.Tables())
		},
		TTL: &storetest.TTLOptions{Retention: testRetention, ExpiresAt: expiresAt},
		// Events, Facts and queries read in parallel: every case runs
		// under the race detector.
		OwnGoroutines: true,
	})
}

// expiresAt reads a record's ttl attribute as stored.
func expiresAt(t *testing.T, st store.Store, r storetest.Record) (time.Time, bool) {
	t.Helper()
	s := st.(*Store)
	table, pk, sk := s.recordKey(t, r)
	it, err := s.get(t.Context(), table, pk, sk)
	if err != nil {
		t.Fatalf("%+v (%s %s/%s): %v", r, table, pk, sk, err)
	}
	if it[attrTTL] == nil {
		return time.Time{}, false
	}
	rd := readItem(it)
	n := rd.num(attrTTL)
	if rd.err != nil {
		t.Fatal(rd.err)
	}
	return time.Unix(n, 0).UTC(), true
}

// recordKey is where a storetest record is stored.
func (s *Store) recordKey(t *testing.T, r storetest.Record) (table, pk, sk string) {
	k := r.Key
	switch r.Kind {
	case "pipeline":
		return s.t.Control, pipelinePK(k.PipelineID), skConfig
	case "calendar":
		return s.t.Control, pkCalendars, skCalendarPrefix + r.Name
	case "sensor":
		return s.t.Control, pipelinePK(k.PipelineID), sensorStateSK(r.Name)
	case "run":
		return s.t.Control, pipelinePK(k.PipelineID), runSK(k.ScheduleID, k.Period)
	case "ledger":
		return s.t.Rerun, pipelinePK(k.PipelineID), ledgerSK(k, int(r.Seq))
	case "baseline":
		return s.t.Control, pipelinePK(k.PipelineID), baselineSK(k)
	case "marker":
		return s.t.Control, pipelinePK(k.PipelineID), markerSK(k, r.Name)
	case "timer":
		return s.t.Control, timerPK(r.Name), skTimer
	case "event":
		return s.t.Events, eventPK(r.Shard), eventSK(r.Seq)
	case "delivery cursor":
		return s.t.Events, pkAlertCursors, r.Sink
	case "dead letter":
		return s.t.Events, sinkPK(r.Sink), deadSK(r.Name)
	case "alert thread":
		return s.t.Events, sinkPK(r.Sink), threadSK(k)
	case "alert sent":
		return s.t.Events, sinkPK(r.Sink), sentSK(k, string(r.Type), r.Name)
	case "alert alerted":
		return s.t.Events, sinkPK(r.Sink), alertedSK(k)
	case "silence":
		return s.t.Control, pkSilences, skSilencePrefix + r.Name
	}
	t.Fatalf("storetest record kind %q: the test does not know where it is", r.Kind)
	return "", "", ""
}

// TestCreateTablesIsTheSchema: CreateTables is idempotent, and the tables
// are what docs/aws.md says: pay-per-request, streams of new images on
// control, job log and events (none on rerun), TTL on `ttl`.
func TestCreateTablesIsTheSchema(t *testing.T) {
	c := ddblocal.Client(t)
	tables := newTables(t, c)
	if err := CreateTables(t.Context(), c, tables); err != nil {
		t.Fatalf("CreateTables again: %v", err)
	}
	for _, name := range tables.all() {
		d, err := c.DescribeTable(t.Context(), &dynamodb.DescribeTableInput{TableName: &name})
		if err != nil {
			t.Fatal(err)
		}
		tb := d.Table
		if tb.BillingModeSummary == nil || tb.BillingModeSummary.BillingMode != "PAY_PER_REQUEST" {
			t.Errorf("%s: billing %+v, want PAY_PER_REQUEST", name, tb.BillingModeSummary)
		}
		stream := tb.StreamSpecification != nil && tb.StreamSpecification.StreamEnabled != nil && *tb.StreamSpecification.StreamEnabled
		if want := name != tables.Rerun; stream != want || (stream && tb.StreamSpecification.StreamViewType != "NEW_IMAGE") {
			t.Errorf("%s: stream %+v, want enabled=%v with NEW_IMAGE", name, tb.StreamSpecification, want)
		}
		ttl, err := c.DescribeTimeToLive(t.Context(), &dynamodb.DescribeTimeToLiveInput{TableName: &name})
		if err != nil {
			t.Fatal(err)
		}
		if s := ttl.TimeToLiveDescription; s == nil || s.TimeToLiveStatus != "ENABLED" || s.AttributeName == nil || *s.AttributeName != "ttl" {
			t.Errorf("%s: TTL %+v, want ENABLED on ttl", name, s)
		}
	}
	if err := DeleteTables(t.Context(), c, TablesFor(ddblocal.Prefix(t))); err != nil {
		t.Fatalf("DeleteTables of tables that do not exist: %v", err)
	}
}
