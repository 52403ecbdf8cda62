// Package dynamodb is the storage port (store.Store) on Amazon DynamoDB:
// the four tables of seed 003 (control, job log, rerun, events), string
// PK/SK, pay-per-request, TTL on `ttl`, with the secondary indexes the
// port's list reads need. docs/aws.md, "Tables, keys and indexes", is the
// layout; only this package builds or parses a key.
//
// Every read is a GetItem, a BatchGetItem or a Query of one key range of
// one index (cross-pipeline indexes are sharded 16 ways and read in
// parallel); Scan serves only the unfiltered lists (store.IndexScan) that
// tests and tools use. Every Commit is one TransactWriteItems whose
// condition expressions are the Change's conditions. Retention is the
// `ttl` attribute (ttl.go); Expire deletes nothing.
//
// Besides the port, the package owns the items other writers make — a
// sensor written by anyone with a PutItem (the inbox), job reports,
// rerun requests — and decodes stream records (stream.go), so the AWS
// runtime never sees a key.
//
// The store never reads the clock: every time it writes comes from the
// caller.
package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/interlockhq/interlock/internal/store"
)

// Config opens a Store.
type Config struct {
	Client *dynamodb.Client // the AWS SDK v2 client (endpoint set by the caller)
	Tables Tables
	// Retention is the ttl of period records and events (0: 90 days); it
	// should be the project's retention setting.
	Retention time.Duration
}

// Store is a store.Store on DynamoDB. It is safe for concurrent use, and
// any number of Stores (processes, Lambdas) may share the tables.
type Store struct {
	c         *dynamodb.Client
	t         Tables
	retention time.Duration

	// counters holds the last value seen of each event shard's counter: a
	// guess that saves a read per Commit. The transaction checks it (a
	// wrong guess fails the counter's condition and is read again), so it
	// never decides anything.
	mu       sync.Mutex
	counters map[int]int64
}

var _ store.Store = (*Store)(nil)

// Open returns a Store on c's tables. It reads nothing: the tables must
// exist (CreateTables), and a cold start costs the same for any number of
// pipelines.
func Open(ctx context.Context, c Config) (*Store, error) {
	if c.Client == nil {
		return nil, errors.New("dynamodb: Config.Client is required")
	}
	for _, name := range c.Tables.all() {
		if name == "" {
			return nil, fmt.Errorf("dynamodb: Config.Tables names no table: %+v (use TablesFor)", c.Tables)
		}
	}
	r := c.Retention
	if r == 0 {
		r = DefaultRetention
	}
	if r < 0 {
		return nil, fmt.Errorf("dynamodb: retention %s is negative", r)
	}
	return &Store{c: c.Client, t: c.Tables, retention: r, counters: map[int]int64{}}, nil
}

// Tables returns the tables the store uses.
func (s *Store) Tables() Tables { return s.t }

// Close releases nothing: the client is the caller's.
func (s *Store) Close() error { return nil }

// Expire deletes nothing and reports no more: DynamoDB's TTL expires what
// carries a `ttl` (ttl.go), which the port allows (store.Store.Expire).
func (s *Store) Expire(ctx context.Context, p store.ExpireParams) (store.ExpireResult, error) {
	if p.Limit <= 0 {
		return store.ExpireResult{}, fmt.Errorf("dynamodb: expire: limit %d: want a positive bound", p.Limit)
	}
	return store.ExpireResult{Deleted: map[string]int{}}, nil
}
