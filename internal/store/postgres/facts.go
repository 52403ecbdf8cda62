package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

var _ store.FactsReader = (*Store)(nil)

// Facts reads q in one round trip: a statement per kind of record, each
// of primary-key lookups over arrays of keys (= ANY, or row values IN
// unnest), sent as one batch inside a REPEATABLE READ READ ONLY
// transaction that the same batch opens and ends, so every statement
// reads one snapshot. A query of one kind is its one statement (a
// snapshot by itself). A range read (RunList, SensorListPrefix,
// SensorListChanged, BackfillList, PipelineList, EventList) is its single read's statement, in the same batch.
// The store has no inbox: each inbox asked for is store.ErrNotFound.
func (s *Store) Facts(ctx context.Context, q store.FactsQuery) (store.Facts, error) {
	q, f, err := q.Prepare("postgres")
	if err != nil {
		return store.Facts{}, err
	}
	reads := factsReads(q, &f)
	if len(reads) == 0 {
		return f, nil
	}
	var b pgx.Batch
	snapshot := len(reads) > 1
	if snapshot {
		b.Queue(`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`)
	}
	for _, r := range reads {
		b.Queue(r.Query, r.Args...)
	}
	if snapshot {
		b.Queue(`COMMIT`)
	}
	br := s.pool.SendBatch(ctx, &b)
	err = func() error {
		if snapshot {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("postgres: read facts: begin: %w", err)
			}
		}
		for _, r := range reads {
			if err := put(br, r); err != nil {
				return err
			}
		}
		if snapshot {
			if _, err := br.Exec(); err != nil {
				return fmt.Errorf("postgres: read facts: commit: %w", err)
			}
		}
		return nil
	}()
	// Closing the batch after an error leaves the connection in the
	// failed transaction: the pool drops it rather than reuse it.
	if cerr := br.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("postgres: read facts: %w", cerr)
	}
	if err != nil {
		return store.Facts{}, err
	}
	return f, nil
}

// put puts the batch's next result into the Facts with r.
func put(br pgx.BatchResults, r sqlstore.Read) error {
	rows, err := br.Query()
	if err == nil {
		defer rows.Close()
	}
	return r.Put(rows, err)
}

// readInto is sqlstore.ReadInto in PostgreSQL's dialect.
func readInto[T any](what, query string, args []any, scan func(scanner) (T, error), put func(T)) sqlstore.Read {
	return sqlstore.ReadInto(&dialect, what, query, args, scan, put)
}

// factsReads are the statements that read q into f, one per kind of
// record q names.
func factsReads(q store.FactsQuery, f *store.Facts) []sqlstore.Read {
	var reads []sqlstore.Read
	if ids := q.Pipelines; len(ids) > 0 {
		reads = append(reads, readInto("pipelines", `SELECT `+sqlstore.PipelineCols+` FROM pipelines WHERE id = ANY($1::text[])`,
			[]any{ids}, sqlstore.ScanPipeline, func(p store.Pipeline) { f.Pipelines[p.ID] = p }))
	}
	if refs := q.Sensors; len(refs) > 0 {
		pids, keys := make([]string, len(refs)), make([][]byte, len(refs))
		for i, r := range refs {
			pids[i], keys[i] = r.PipelineID, []byte(r.Key)
		}
		reads = append(reads, readInto("sensors", `SELECT `+sqlstore.SensorCols+` FROM sensors
			WHERE (pipeline_id, key) IN (SELECT * FROM unnest($1::text[], $2::bytea[]))`,
			[]any{pids, keys}, dialect.ScanSensor, func(x store.Sensor) { f.Sensors[store.SensorRef{PipelineID: x.PipelineID, Key: x.Key}] = x }))
	}
	if args := periodArgs(q.Runs); args != nil {
		reads = append(reads, readInto("runs", `SELECT `+sqlstore.RunCols+` FROM runs WHERE `+inPeriods, args,
			sqlstore.ScanRun, func(x run.Run) { f.Runs[x.Key] = x }))
	}
	if keys := q.Timers; len(keys) > 0 {
		reads = append(reads, readInto("timers", `SELECT `+sqlstore.TimerCols+` FROM timers WHERE key = ANY($1::text[])`,
			[]any{keys}, sqlstore.ScanTimer, func(x store.Timer) { f.Timers[x.Key] = x }))
	}
	if ids := q.Silences; len(ids) > 0 {
		reads = append(reads, readInto("silences", `SELECT `+sqlstore.SilenceCols+` FROM silences WHERE id = ANY($1::text[])`,
			[]any{ids}, sqlstore.ScanSilence, func(x store.Silence) { f.Silences[x.ID] = x }))
	}
	if args := periodArgs(q.MarkersOf); args != nil {
		reads = append(reads, readInto("markers", `SELECT `+sqlstore.MarkerCols+` FROM markers WHERE `+inPeriods+` ORDER BY pipeline_id, schedule_id, period, kind`, args,
			sqlstore.ScanMarker, func(x store.Marker) { f.Markers[x.Key] = append(f.Markers[x.Key], x) }))
	}
	if args := periodArgs(q.Baselines); args != nil {
		reads = append(reads, readInto("baselines", `SELECT `+sqlstore.BaselineCols+` FROM baselines WHERE `+inPeriods, args,
			sqlstore.ScanBaseline, func(x store.Baseline) { f.Baselines[x.Key] = x }))
	}
	if args := periodArgs(q.Ledgers); args != nil {
		reads = append(reads, readInto("ledgers", `SELECT `+sqlstore.LedgerCols+` FROM ledger WHERE `+inPeriods+` ORDER BY pipeline_id, schedule_id, period, seq`, args,
			sqlstore.ScanLedger, func(x store.LedgerEntry) { f.Ledgers[x.Key] = append(f.Ledgers[x.Key], x) }))
	}
	// Range reads: the single reads' own statements, in the batch.
	reads = append(reads, dialect.RangeReads(q, f)...)
	for i, p := range q.EventLists {
		query, args, shards := eventListQuery(p)
		f.EventPages = append(f.EventPages, store.EventPage{})
		reads = append(reads, sqlstore.Read{Query: query, Args: args, Put: func(rows sqlstore.Rows, err error) error {
			evs, err := sqlstore.List(&dialect, rows, err, sqlstore.ScanEvent, "events")
			if err != nil {
				return err
			}
			f.EventPages[i], err = eventPage(p, shards, evs)
			return err
		}})
	}
	return reads
}

// inPeriods is the condition naming the periods periodArgs lists.
const inPeriods = `(pipeline_id, schedule_id, period) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))`

// periodArgs are keys (each once) as inPeriods's three arrays; nil when
// there are none.
func periodArgs(keys []run.Key) []any {
	if len(keys) == 0 {
		return nil
	}
	pids, sids, periods := make([]string, len(keys)), make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		pids[i], sids[i], periods[i] = k.PipelineID, k.ScheduleID, k.Period
	}
	return []any{pids, sids, periods}
}
