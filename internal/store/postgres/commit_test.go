package postgres

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// These tests pin what storetest cannot see from outside the port: a
// condition that writes nothing (a check) must hold until the commit ends,
// even against a writer that commits between the check and the commit.
// Each holds a competing transaction open on a connection of its own,
// starts a Commit, waits (bounded) until PostgreSQL reports the Commit
// waiting on a lock, then commits the competitor: the Commit must then see
// what the competitor did.

var t0 = time.Date(2026, time.March, 14, 6, 30, 15, 123456789, time.UTC)

func pipeline(id string) store.Pipeline {
	return store.Pipeline{ID: id, Doc: []byte("id: " + id), Hash: "h", File: id + ".yaml", FirstLoadedAt: t0, UpdatedAt: t0}
}

// competitor opens a transaction on its own connection to u.
func competitor(t *testing.T, u string) pgx.Tx {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), u)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	tx, err := conn.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	return tx
}

// commitBehind starts c on s and waits until it blocks on a lock (another
// session of the database waiting, per pg_stat_activity), then returns the
// channel its result arrives on.
func commitBehind(t *testing.T, s *Store, c store.Change) <-chan error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.Commit(context.Background(), c) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		var waiting int
		err := s.pool.QueryRow(t.Context(), `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> pg_backend_pid()`).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			return done
		}
		select {
		case err := <-done:
			t.Fatalf("the commit ended (%v) without waiting for the competing transaction", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("the commit never waited on a lock")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func result(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		t.Fatal("the commit did not end after the competitor committed")
		return nil
	}
}

// TestCheckHoldsUntilCommit: a Change that checks a pipeline at version 1
// while another transaction moves it to 2 and commits is a conflict, not a
// decision on a row that no longer is.
func TestCheckHoldsUntilCommit(t *testing.T) {
	u := schemaURL(t)
	s := open(t, u)
	if err := s.Commit(t.Context(), store.Change{Pipelines: []store.PipelineWrite{{Pipeline: pipeline("orders")}}}); err != nil {
		t.Fatal(err)
	}
	tx := competitor(t, u)
	if _, err := tx.Exec(t.Context(), `UPDATE pipelines SET version = 2, paused = true WHERE id = 'orders'`); err != nil {
		t.Fatal(err)
	}
	k := run.Key{PipelineID: "orders", ScheduleID: "daily", Period: "2026-03-14"}
	done := commitBehind(t, s, store.Change{
		PipelineChecks: []store.PipelineCheck{{ID: "orders", Version: 1}},
		Runs:           []store.RunWrite{{Run: run.Run{Key: k, State: run.Triggering, CreatedAt: t0}}},
	})
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := result(t, done); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("commit checked against a pipeline paused meanwhile: %v, want a conflict", err)
	}
	if _, err := s.RunGet(t.Context(), k); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("the run was written anyway: %v", err)
	}
}

// TestAbsentCheckSeesConcurrentCreate: a Change that checks a calendar is
// absent while another transaction creates it (taking the key's lock, as
// Commit does) and commits is a conflict.
func TestAbsentCheckSeesConcurrentCreate(t *testing.T) {
	u := schemaURL(t)
	s := open(t, u)
	tx := competitor(t, u)
	create, err := calendarsTable.put("calendar holidays", []any{"holidays"}, 0, encodeCalendar(&encoder{}, store.Calendar{Name: "holidays", File: "c.yaml"}))
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range create {
		q, args := o.sql()
		if _, err := tx.Exec(t.Context(), q, args...); err != nil {
			t.Fatal(err)
		}
	}
	done := commitBehind(t, s, store.Change{
		CalendarChecks: []store.CalendarCheck{{Name: "holidays", Version: 0}},
		Pipelines:      []store.PipelineWrite{{Pipeline: pipeline("orders")}},
	})
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := result(t, done); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("commit checked the calendar absent while it was created: %v, want a conflict", err)
	}
}

// TestCreateWaitsForAbsentCheck is the other side: while a transaction
// that checked a pipeline absent is open, creating the pipeline waits for
// it, so the check stays true until the checker commits.
func TestCreateWaitsForAbsentCheck(t *testing.T) {
	u := schemaURL(t)
	s := open(t, u)
	tx := competitor(t, u)
	check, err := versionCheck("pipeline orders", "pipelines", "id", "orders", 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, o := range check {
		q, args := o.sql()
		if _, err := tx.Exec(t.Context(), q, args...); err != nil {
			t.Fatal(err)
		}
	}
	done := commitBehind(t, s, store.Change{Pipelines: []store.PipelineWrite{{Pipeline: pipeline("orders")}}})
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := result(t, done); err != nil {
		t.Fatalf("the create after the check: %v", err)
	}
}

// TestEventCounterHeldUntilCommit: an event appended while another
// transaction holds its shard's next number takes the number after it,
// and a reader never sees the later one without the earlier.
func TestEventCounterHeldUntilCommit(t *testing.T) {
	u := schemaURL(t)
	s := open(t, u)
	tx := competitor(t, u)
	first := eventOps(&encoder{}, []event.Event{{ID: "first", Type: event.JobTriggered, PipelineID: "orders", Time: t0}})
	q, args := first[0].sql()
	if _, err := tx.Exec(t.Context(), q, args...); err != nil {
		t.Fatal(err)
	}
	done := commitBehind(t, s, store.Change{Events: []event.Event{{ID: "second", Type: event.JobTriggered, PipelineID: "orders", Time: t0.Add(-time.Hour)}}})
	page, err := s.EventList(t.Context(), store.EventListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 0 {
		t.Fatalf("a reader sees %v before either commit", page.Events)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := result(t, done); err != nil {
		t.Fatal(err)
	}
	page, err = s.EventList(t.Context(), store.EventListParams{PipelineID: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 2 || page.Events[0].ID != "first" || page.Events[0].Seq != 1 || page.Events[1].Seq != 2 {
		t.Fatalf("events %+v, want first at 1, second at 2", page.Events)
	}
}

// TestDeadlockRetried: a Commit that PostgreSQL picks as a deadlock's
// victim runs again once the other transaction is through, and succeeds
// when its conditions still hold.
func TestDeadlockRetried(t *testing.T) {
	u := schemaURL(t)
	s := open(t, u)
	x := run.Key{PipelineID: "orders", ScheduleID: "daily", Period: "2026-03-13"}
	y := run.Key{PipelineID: "orders", ScheduleID: "daily", Period: "2026-03-14"}
	seed := store.Change{Runs: []store.RunWrite{{Run: run.Run{Key: x, State: run.Triggering}}, {Run: run.Run{Key: y, State: run.Triggering}}}}
	if err := s.Commit(t.Context(), seed); err != nil {
		t.Fatal(err)
	}
	tx := competitor(t, u)
	// The competitor must not be the victim: it waits longer before it
	// looks for a deadlock than the Commit (1 s, the server's default).
	if _, err := tx.Exec(t.Context(), `SET LOCAL deadlock_timeout = '20s'`); err != nil {
		t.Fatalf("set deadlock_timeout (the test user must be a superuser): %v", err)
	}
	lock := `UPDATE runs SET cause = cause WHERE pipeline_id = $1 AND schedule_id = $2 AND period = $3`
	if _, err := tx.Exec(t.Context(), lock, y.PipelineID, y.ScheduleID, y.Period); err != nil {
		t.Fatal(err)
	}
	// The Commit locks x, then waits for y.
	done := commitBehind(t, s, store.Change{Runs: []store.RunWrite{
		{Run: run.Run{Key: x, State: run.Running}, ExpectVersion: 1},
		{Run: run.Run{Key: y, State: run.Running}, ExpectVersion: 1},
	}})
	// The competitor now waits for x: a deadlock, which the Commit's
	// session detects, aborting its own transaction.
	if _, err := tx.Exec(t.Context(), lock, x.PipelineID, x.ScheduleID, x.Period); err != nil {
		t.Fatalf("the competitor was the deadlock's victim: %v", err)
	}
	if err := tx.Commit(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := result(t, done); err != nil {
		t.Fatalf("the deadlock's victim was not run again: %v", err)
	}
	for _, k := range []run.Key{x, y} {
		r, err := s.RunGet(t.Context(), k)
		if err != nil || r.Version != 2 || r.State != run.Running {
			t.Fatalf("run %v after the retried commit: %+v, %v", k, r, err)
		}
	}
}

func TestRetryable(t *testing.T) {
	for code, want := range map[string]bool{"40001": true, "40P01": true, "23505": false, "22021": false, "57014": false} {
		err := fmt.Errorf("wrapped: %w", &pgconn.PgError{Code: code})
		if got := retryable(err); got != want {
			t.Errorf("retryable(%s) = %v, want %v", code, got, want)
		}
	}
	if retryable(errors.New("plain")) {
		t.Error("a plain error is retryable")
	}
}

// stallAfterResults is a pgx tracer that, on a batch whose results have
// been read (TraceBatchEnd, what a slow or descheduled client does before
// it sends anything else), says so and waits until released.
type stallAfterResults struct {
	stalled chan struct{}
	release chan struct{}
}

func (s stallAfterResults) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}
func (s stallAfterResults) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}
func (s stallAfterResults) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}
func (s stallAfterResults) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}
func (s stallAfterResults) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {
	s.stalled <- struct{}{}
	<-s.release
}

// TestCommitHoldsNoLockWhileClientReads: a commit is over, locks released,
// by the time its client has read the results. The event shard counters
// are the rows every commit of a shard locks; when a commit kept them
// locked across a round trip of its own (results read, then COMMIT sent)
// a client slow to answer — descheduled on a loaded machine, one replica
// of three on two cores — held every commit of the shard, in every
// replica, behind it: the replica tail of issue 28. Here one store's client
// stalls after reading its commit's results, and another store's commit
// of an event on the same shard must not wait for it.
func TestCommitHoldsNoLockWhileClientReads(t *testing.T) {
	u := schemaURL(t)
	cfg, err := pgxpool.ParseConfig(u)
	if err != nil {
		t.Fatal(err)
	}
	stall := stallAfterResults{stalled: make(chan struct{}), release: make(chan struct{})}
	cfg.ConnConfig.Tracer = stall
	pool, err := pgxpool.NewWithConfig(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	slow := &Store{pool: pool}
	t.Cleanup(func() { slow.Close() })
	fast := open(t, u) // migrates the schema
	ev := func(id string) store.Change {
		return store.Change{Events: []event.Event{{ID: id, Type: event.JobTriggered, PipelineID: "orders", Time: t0}}}
	}
	done := make(chan error, 1)
	go func() { done <- slow.Commit(context.Background(), ev("slow")) }()
	select {
	case <-stall.stalled:
	case err := <-done:
		t.Fatalf("the slow commit ended (%v) without reading a batch's results", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the slow commit never read its results")
	}
	// The other commit is given ample time; a lock held by the stalled
	// client would keep it waiting until released, far beyond this.
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	err = fast.Commit(ctx, ev("fast"))
	cancel()
	close(stall.release)
	if err != nil {
		t.Fatalf("a commit on the same event shard waited for a client that had read its results: %v", err)
	}
	if err := result(t, done); err != nil {
		t.Fatal(err)
	}
	page, err := fast.EventList(t.Context(), store.EventListParams{PipelineID: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	if len(page.Events) != 2 || page.Events[0].ID != "slow" || page.Events[1].ID != "fast" {
		t.Fatalf("events %+v, want slow then fast", page.Events)
	}
}
