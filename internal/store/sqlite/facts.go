package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

var _ store.FactsReader = (*Store)(nil)

// factsChunk bounds the keys one statement of Facts names (three host
// parameters each at most): far under SQLite's limit of parameters, and
// above any decision's needs, so a decision's query is one statement per
// kind of record.
const factsChunk = 250

// Facts reads q in one read transaction (on the one connection of an
// in-memory or scratch store: while no writer can run): one snapshot, as
// the single reads would answer at one instant. Each kind of record is one statement
// of primary-key lookups (pipelines, timers: id IN (…); a pipeline's
// sensors: key IN (…); runs, baselines and a period's markers and ledger:
// a list of periods, each a range of the primary key). On a store that has its
// database to itself the rows it caches (rowcache.go: pipelines, runs,
// timers) answer without SQL, read while no writer runs, as the
// statements are. A range read (RunList, SensorListPrefix,
// SensorListChanged, BackfillList, PipelineList, EventList) is its single read's statement, in the same
// transaction. There is no inbox: each inbox asked for is ErrNotFound.
func (s *Store) Facts(ctx context.Context, q store.FactsQuery) (store.Facts, error) {
	q, f, err := q.Prepare("sqlite")
	if err != nil {
		return store.Facts{}, err
	}
	q.Inboxes = nil
	if q.Empty() {
		return f, nil
	}
	// Point lookups, tens of microseconds: as get does, the context is
	// checked before they start and not watched while they run (watching
	// it costs the driver and database/sql a goroutine per statement).
	if err := ctx.Err(); err != nil {
		return store.Facts{}, fmt.Errorf("sqlite: read facts: %w", err)
	}
	ctx = context.WithoutCancel(ctx)
	if s.read == s.write {
		// One connection for reads and writes (an in-memory or scratch
		// store): every writer — a Commit's group leader, Expire — takes
		// group.writing before the connection, so while Facts holds it no
		// write lands between its statements, which run as any read does.
		// It saves the transaction's BEGIN and ROLLBACK, a fifth of a
		// step's Facts on the scratch store simulate runs on.
		// Its statements run on the connection's driver (rawread.go).
		s.group.writing.Lock()
		defer s.group.writing.Unlock()
		var rerr error
		err := s.read.onDriver(ctx, func(t *wtx) error {
			rerr = (&factsTx{s: s, raw: t}).read(ctx, q, &f)
			return nil
		})
		if err != nil {
			return store.Facts{}, fmt.Errorf("sqlite: read facts: %w", err)
		}
		if rerr != nil {
			return store.Facts{}, rerr
		}
		return f, nil
	}
	tx, err := s.read.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return store.Facts{}, fmt.Errorf("sqlite: read facts: %w", err)
	}
	r := factsTx{s: s, tx: tx}
	err = r.read(ctx, q, &f)
	// A read-only transaction: ending it either way changes nothing.
	if rerr := tx.Rollback(); err == nil && rerr != nil {
		err = fmt.Errorf("sqlite: read facts: %w", rerr)
	}
	// Statements first run unprepared are prepared now, outside the
	// transaction (preparing takes a connection: see pool.prepared).
	for _, query := range r.unprepared {
		s.read.prepared(query)
	}
	if err != nil {
		return store.Facts{}, err
	}
	return f, nil
}

// factsTx is one Facts call's reads: in its transaction, or (raw) on the
// one connection's driver while no writer can run.
type factsTx struct {
	s          *Store
	tx         *sql.Tx
	raw        *wtx
	unprepared []string
}

func (r *factsTx) read(ctx context.Context, q store.FactsQuery, f *store.Facts) error {
	pipes, keepPipes := cachedFirst(pipelineKeys(r.s.pipelines), q.Pipelines, f.Pipelines)
	if err := byKey(ctx, r, pipes, sqlstore.ScanPipeline, sqlstore.PipelineCols, "pipelines", "id",
		func(p store.Pipeline) { f.Pipelines[p.ID] = p }); err != nil {
		return err
	}
	keepPipes()

	for _, refs := range byPipeline(q.Sensors) {
		if err := eachChunk(refs, func(refs []store.SensorRef) error {
			args := []any{refs[0].PipelineID}
			for _, x := range refs {
				args = append(args, x.Key)
			}
			return readRows(ctx, r, dialect.ScanSensor, "sensors of "+refs[0].PipelineID, sensorsQuery(len(refs)), args,
				func(x store.Sensor) { f.Sensors[store.SensorRef{PipelineID: x.PipelineID, Key: x.Key}] = x })
		}); err != nil {
			return err
		}
	}

	runs, keepRuns := cachedFirst(runKeys(r.s.runs), q.Runs, f.Runs)
	if err := eachPeriods(runs, func(args []any) error {
		return readRows(ctx, r, sqlstore.ScanRun, "runs", periodsQuery(sqlstore.RunCols, "runs", "", len(args)/3), args,
			func(x run.Run) { f.Runs[x.Key] = x })
	}); err != nil {
		return err
	}
	keepRuns()

	timers, keepTimers := cachedFirst(timerKeys(r.s.timers), q.Timers, f.Timers)
	if err := byKey(ctx, r, timers, sqlstore.ScanTimer, sqlstore.TimerCols, "timers", "key",
		func(x store.Timer) { f.Timers[x.Key] = x }); err != nil {
		return err
	}
	keepTimers()

	if err := byKey(ctx, r, q.Silences, sqlstore.ScanSilence, sqlstore.SilenceCols, "silences", "id",
		func(x store.Silence) { f.Silences[x.ID] = x }); err != nil {
		return err
	}

	if err := eachPeriods(q.MarkersOf, func(args []any) error {
		return readRows(ctx, r, sqlstore.ScanMarker, "markers", periodsQuery(sqlstore.MarkerCols, "markers", "kind", len(args)/3), args,
			func(x store.Marker) { f.Markers[x.Key] = append(f.Markers[x.Key], x) })
	}); err != nil {
		return err
	}
	if err := eachPeriods(q.Baselines, func(args []any) error {
		return readRows(ctx, r, sqlstore.ScanBaseline, "baselines", periodsQuery(sqlstore.BaselineCols, "baselines", "", len(args)/3), args,
			func(x store.Baseline) { f.Baselines[x.Key] = x })
	}); err != nil {
		return err
	}
	if err := eachPeriods(q.Ledgers, func(args []any) error {
		return readRows(ctx, r, sqlstore.ScanLedger, "ledgers", periodsQuery(sqlstore.LedgerCols, "ledger", "seq", len(args)/3), args,
			func(x store.LedgerEntry) { f.Ledgers[x.Key] = append(f.Ledgers[x.Key], x) })
	}); err != nil {
		return err
	}

	// Range reads: the single reads' own statements, each in the
	// transaction or on the driver.
	for _, rd := range dialect.RangeReads(q, f) {
		if err := r.run(ctx, rd); err != nil {
			return err
		}
	}
	for _, p := range q.EventLists {
		page, err := eventPage(p, func(what, query string, args []any) (evs []event.Event, err error) {
			err = readRows(ctx, r, sqlstore.ScanEvent, what, query, args, func(x event.Event) { evs = append(evs, x) })
			return evs, err
		})
		if err != nil {
			return err
		}
		f.EventPages = append(f.EventPages, page)
	}
	return nil
}

// The statements of Facts, by the number of keys they name. Each reads
// its table by primary key (TestFactsQueryPlans). One key is the single
// read's own statement (RunGet, MarkerListOf, …): the pool prepares it
// once for both.

// keysQuery reads rows of table whose one-column primary key col is one
// of n values.
func keysQuery(cols, table, col string, n int) string {
	if n == 1 {
		return `SELECT ` + cols + ` FROM ` + table + ` WHERE ` + col + ` = ?`
	}
	return `SELECT ` + cols + ` FROM ` + table + ` WHERE ` + col + ` IN (` + params(n, 1) + `)`
}

// sensorsQuery reads n sensors of one pipeline (SensorGetMany's
// statement; SensorGet's for one).
func sensorsQuery(n int) string {
	if n == 1 {
		return `SELECT ` + sqlstore.SensorCols + ` FROM sensors WHERE pipeline_id = ? AND key = ?`
	}
	return `SELECT ` + sqlstore.SensorCols + ` FROM sensors WHERE pipeline_id = ? AND key IN (` + params(n, 1) + `) ORDER BY key`
}

// periodsQuery reads the rows of n periods of table, keyed by (pipeline_id,
// schedule_id, period[, order]), in order within each period when order
// names the key's last column. Several periods are a list of row values
// joined to the table: the plain row-value IN let the planner pick a
// secondary index (markers_pipeline_kind: every marker of the pipeline),
// CROSS JOIN keeps the list outside, each row a range of the primary key.
func periodsQuery(cols, table, order string, n int) string {
	by := ""
	if order != "" {
		by = ` ORDER BY pipeline_id, schedule_id, period, ` + order
	}
	if n == 1 {
		if order != "" {
			by = ` ORDER BY ` + order
		}
		return `SELECT ` + cols + ` FROM ` + table + ` WHERE pipeline_id = ? AND schedule_id = ? AND period = ?` + by
	}
	return `SELECT ` + cols + ` FROM (VALUES ` + params(n, 3) + `) AS k CROSS JOIN ` + table +
		` ON pipeline_id = k.column1 AND schedule_id = k.column2 AND period = k.column3` + by
}

// byKey reads the rows of table whose one-column primary key col is one
// of keys, handing each to put.
func byKey[T any](ctx context.Context, r *factsTx, keys []string, scan func(sqlstore.Scanner) (T, error), cols, table, col string, put func(T)) error {
	return eachChunk(keys, func(ks []string) error {
		return readRows(ctx, r, scan, table, keysQuery(cols, table, col, len(ks)), anys(ks), put)
	})
}

// eachPeriods calls read with the arguments naming keys' periods, a chunk
// at a time.
func eachPeriods(keys []run.Key, read func(args []any) error) error {
	return eachChunk(keys, func(ks []run.Key) error {
		args := make([]any, 0, 3*len(ks))
		for _, k := range ks {
			args = append(args, k.PipelineID, k.ScheduleID, k.Period)
		}
		return read(args)
	})
}

// byPipeline groups refs by pipeline, in first-seen order.
func byPipeline(refs []store.SensorRef) [][]store.SensorRef {
	var out [][]store.SensorRef
	at := map[string]int{}
	for _, x := range refs {
		i, ok := at[x.PipelineID]
		if !ok {
			i = len(out)
			at[x.PipelineID] = i
			out = append(out, nil)
		}
		out[i] = append(out[i], x)
	}
	return out
}

// query runs a statement in the transaction, prepared when the pool has
// it; one it has not is run as text and prepared after the transaction.
// Without a transaction (raw) it runs on the connection's driver.
func (r *factsTx) query(ctx context.Context, query string, args []any) (factsRows, error) {
	if r.raw != nil {
		return r.raw.rows(query, args)
	}
	if st := r.s.read.inTx(ctx, r.tx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	r.unprepared = append(r.unprepared, query)
	return r.tx.QueryContext(ctx, query, args...)
}

// factsRows are a factsTx query's rows: database/sql's, or the driver's
// (rawRows).
type factsRows interface {
	sqlstore.Rows
	Close() error
}

// run runs rd's statement in r and puts its rows into the Facts.
func (r *factsTx) run(ctx context.Context, rd sqlstore.Read) error {
	rows, err := r.query(ctx, rd.Query, rd.Args)
	if err == nil {
		defer rows.Close()
	}
	return rd.Put(rows, err)
}

// readRows runs query in r and hands each row, scanned, to each.
func readRows[T any](ctx context.Context, r *factsTx, scan func(sqlstore.Scanner) (T, error), what, query string, args []any, each func(T)) error {
	rows, err := r.query(ctx, query, args)
	if err == nil {
		defer rows.Close()
	}
	vs, err := sqlstore.List(&dialect, rows, err, scan, what)
	if err != nil {
		return err
	}
	for _, v := range vs {
		each(v)
	}
	return nil
}

// cachedFirst answers keys from c (nil: the store caches none) into m and
// returns the keys it could not answer, and keep: called once they were
// read into m, it gives c what was read (found or not) under the
// generation each key missed at, so a commit that moved it meanwhile wins.
func cachedFirst[K comparable, V any](c keyCache[K, V], keys []K, m map[K]V) (miss []K, keep func()) {
	if c == nil {
		return keys, func() {}
	}
	var gens map[K]uint64 // made at the first miss: most reads hit
	for _, k := range keys {
		x, ok, gen := c.get(k)
		switch {
		case !ok:
			if gens == nil {
				gens = map[K]uint64{}
			}
			miss = append(miss, k)
			gens[k] = gen
		case x.found:
			m[k] = x.v
		}
	}
	if len(miss) == 0 {
		return nil, func() {}
	}
	return miss, func() {
		for _, k := range miss {
			v, found := m[k]
			c.put(gens[k], k, cached[V]{v: v, found: found})
		}
	}
}

// pipelineKeys, runKeys and timerKeys are the store's caches as
// cachedFirst reads them: nil when the store has none.
func pipelineKeys(c *pipelineCache) keyCache[string, store.Pipeline] {
	if c == nil {
		return nil
	}
	return pipelineRows{c}
}

func runKeys(c *runCache) keyCache[run.Key, run.Run] {
	if c == nil {
		return nil
	}
	return c
}

func timerKeys(c *timerCache) keyCache[string, store.Timer] {
	if c == nil {
		return nil
	}
	return c
}

// pipelineRows is the pipeline cache as a keyCache: it keeps rows found,
// never that a row is absent.
type pipelineRows struct{ c *pipelineCache }

func (p pipelineRows) get(id string) (cached[store.Pipeline], bool, uint64) {
	row, ok, gen := p.c.get(id)
	return cached[store.Pipeline]{v: row, found: ok}, ok, gen
}

func (p pipelineRows) put(gen uint64, _ string, x cached[store.Pipeline]) {
	if x.found {
		p.c.put(gen, x.v)
	}
}

// params is n groups of width "?" host parameters: "?,?" (width 1) or
// "(?,?),(?,?)".
func params(n, width int) string {
	one := strings.TrimSuffix(strings.Repeat("?,", width), ",")
	if width > 1 {
		one = "(" + one + ")"
	}
	return strings.TrimSuffix(strings.Repeat(one+",", n), ",")
}

func anys(xs []string) []any {
	out := make([]any, len(xs))
	for i, x := range xs {
		out[i] = x
	}
	return out
}

// eachChunk calls read with xs a factsChunk at a time (never with none).
func eachChunk[K any](xs []K, read func([]K) error) error {
	for len(xs) > 0 {
		n := min(len(xs), factsChunk)
		if err := read(xs[:n]); err != nil {
			return err
		}
		xs = xs[n:]
	}
	return nil
}
