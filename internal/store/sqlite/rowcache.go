package sqlite

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlstore"
)

// pipelineCache keeps the pipeline rows of a store that has its database
// to itself (an in-memory database, a scratch store: one connection to a
// database in memory), so no writer other than this Store's
// Commit can change a row after open (the migrations run before any
// read). Every decision reads its pipeline's row, and the watchdog lists
// all of them each pass: in a simulation those reads of rows that almost
// never change, with their documents, are a tenth of the statements.
//
// A Commit that writes pipelines drops the cache before and after its
// transaction, and bumps gen both times; a read that missed stores what
// it read only if gen did not move meanwhile, so a row read before a
// commit is never kept after it. What the cache answers is what the
// database holds, as a read that started at the same instant would. Of
// the commit's conditions, only a check of a pipeline's version is
// answered from a cached row, when no commit of pipelines is under way
// (checker); every other condition is checked in SQL.
//
// The rows handed out share their Doc and PauseWindows with the cache:
// callers treat a stored row as read-only (none writes into them; a slice
// is clipped, so an append copies).
type pipelineCache struct {
	mu  sync.Mutex
	gen uint64
	// writing counts the Commits that write pipelines between begin and
	// end: while one is, the cache answers no commit's check (checker).
	writing int
	byID    map[string]store.Pipeline
	// all is every row sorted by id (PipelineList), when allOK.
	all   []store.Pipeline
	allOK bool
}

func newPipelineCache() *pipelineCache {
	return &pipelineCache{byID: map[string]store.Pipeline{}}
}

// get returns the cached row of id; when it has none, the generation a
// read must still find to store its result (put).
func (c *pipelineCache) get(id string) (store.Pipeline, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, ok := c.byID[id]
	return p, ok, c.gen
}

func (c *pipelineCache) put(gen uint64, p store.Pipeline) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen == c.gen {
		c.byID[p.ID] = clipPipeline(p)
	}
}

// list returns every row sorted by id (a copy of the slice), when cached.
func (c *pipelineCache) list() ([]store.Pipeline, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.allOK {
		return nil, false, c.gen
	}
	return slices.Clone(c.all), true, c.gen
}

func (c *pipelineCache) putList(gen uint64, rows []store.Pipeline) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	c.all = make([]store.Pipeline, len(rows))
	for i, p := range rows {
		c.all[i] = clipPipeline(p)
		c.byID[p.ID] = c.all[i]
	}
	c.allOK = true
}

// begin forgets every row: a Commit that writes pipelines is about to
// change the table. It calls end once its transaction is over.
func (c *pipelineCache) begin() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writing++
	c.forget()
}

// end forgets every row again: a read between begin and the transaction
// may have kept what the commit then changed (and gen stops a read that
// began before from keeping anything).
func (c *pipelineCache) end() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.writing--
	c.forget()
}

func (c *pipelineCache) forget() {
	c.gen++
	clear(c.byID)
	c.all, c.allOK = nil, false
}

// checker answers a commit's check that pipeline id is at version, when
// the row is cached and no Commit writing pipelines is under way: every
// write of the table goes through Commit (the migrations run before any
// read), so a row kept then is the row the database holds, inside the
// checking transaction too. Every decision's commit checks the pipeline
// it read; counting it in SQL was a statement per decision.
func (c *pipelineCache) checker(id string, version int64) func() (int64, bool) {
	return func() (int64, bool) {
		c.mu.Lock()
		defer c.mu.Unlock()
		p, ok := c.byID[id]
		if !ok || c.writing > 0 {
			return 0, false
		}
		if p.Version == version {
			return 1, true
		}
		return 0, true
	}
}

func clipPipeline(p store.Pipeline) store.Pipeline {
	p.Doc = slices.Clip(p.Doc)
	p.PauseWindows = slices.Clip(p.PauseWindows)
	return p
}

// rowCache keeps the rows of one table that a store that has its database
// to itself read or wrote, by key, and the keys it found no row for:
// runCache (a decision reads its run, and the decisions about one period
// — a sensor write, its trigger call and record, each step — read it
// again after each other's writes) and timerCache (a run's step timer is
// read by the decision that follows the one that set it).
//
// A Commit that writes rows drops their keys before its transaction
// (drop); once it committed, it keeps what it wrote as a read would
// return it, unless another commit of the table ran meanwhile (finish):
// a run as ScanRun reads its row back (runsWritten), a timer decoded (on
// the first read that asks) from the values it wrote (timersWritten). A
// Change that failed keeps nothing, and on a scratch store the Changes
// before it in the shared transaction, applied again (scratchtx.go),
// leave the rows they kept as they were. A read that missed keeps what it
// read only if gen did not move meanwhile (as for pipelineCache). Expire,
// which may delete rows, drops them all.
type rowCache[K comparable, V any] struct {
	mu  sync.Mutex
	gen uint64
	// inflight counts the commits between drop and finish.
	inflight int
	rows     map[K]cached[V]
	// clone gives a value a map and pointers of its own (nil: the values
	// are handed out as they are).
	clone func(V) V
}

// runCache and timerCache are the scratch store's caches of runs and
// timers.
type (
	runCache   = rowCache[run.Key, run.Run]
	timerCache = rowCache[string, store.Timer]
)

func newRunCache() *runCache {
	return &runCache{rows: map[run.Key]cached[run.Run]{}, clone: copyRun}
}

func newTimerCache() *timerCache { return &timerCache{rows: map[string]cached[store.Timer]{}} }

// cached is a read kept: the record, or that there was none. A row a
// commit wrote is kept undecoded (decode) until a read asks for it: most
// are written again before anything reads them.
type cached[V any] struct {
	v      V
	found  bool
	decode func() (V, error)
}

// keyCache is a cache of one table's point reads (runCache, timerCache).
type keyCache[K comparable, V any] interface {
	get(K) (cached[V], bool, uint64)
	put(uint64, K, cached[V])
}

// readThrough returns key's record as c holds it (or that there is none:
// store.ErrNotFound, worded as get words it), else read's answer, which c
// keeps unless a commit moved its generation meanwhile.
func readThrough[K comparable, V any](c keyCache[K, V], key K, what string, read func() (V, error)) (V, error) {
	x, ok, gen := c.get(key)
	if ok {
		if !x.found {
			return x.v, fmt.Errorf("%w: %s", store.ErrNotFound, what)
		}
		return x.v, nil
	}
	v, err := read()
	if err == nil || errors.Is(err, store.ErrNotFound) {
		c.put(gen, key, cached[V]{v: v, found: err == nil})
	}
	return v, err
}

// own is x with a value of its own (clone).
func (c *rowCache[K, V]) own(x cached[V]) cached[V] {
	if x.found && c.clone != nil {
		x.v = c.clone(x.v)
	}
	return x
}

// get returns the cached read of k (a copy the caller may change); when
// there is none, the generation a read must still find to store its
// result.
func (c *rowCache[K, V]) get(k K) (cached[V], bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	x, ok := c.rows[k]
	if ok && x.decode != nil {
		v, err := x.decode()
		if err != nil { // not kept: the database answers
			delete(c.rows, k)
			return cached[V]{}, false, c.gen
		}
		x = cached[V]{v: v, found: true}
		c.rows[k] = x
	}
	return c.own(x), ok, c.gen
}

func (c *rowCache[K, V]) put(gen uint64, k K, x cached[V]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen == c.gen {
		c.rows[k] = c.own(x)
	}
}

// drop forgets the rows of keys (every row when keys is nil). A Commit
// calls it before its transaction, and finish after it.
func (c *rowCache[K, V]) drop(keys []K) uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.inflight++
	if keys == nil {
		clear(c.rows)
	}
	for _, k := range keys {
		delete(c.rows, k)
	}
	return c.gen
}

// finish ends a commit that called drop (which returned gen): when it
// committed (xs: what it left of its rows, given to the cache) and no
// other commit of the table ran since or runs still, what it wrote is
// kept; otherwise its keys (every row when keys is nil) are forgotten
// again (a read during the commit may have kept what was there before).
// Either way a read that started before is not kept.
func (c *rowCache[K, V]) finish(gen uint64, keys []K, xs map[K]cached[V]) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.inflight--
	alone := gen == c.gen && c.inflight == 0
	c.gen++
	if xs != nil && alone {
		maps.Copy(c.rows, xs)
		return
	}
	if keys == nil {
		clear(c.rows)
	}
	for _, k := range keys {
		delete(c.rows, k)
	}
}

// forgetCached empties the store's caches (a scratch store whose
// transaction was lost, scratchtx.go: they may hold rows it rolled back).
func (s *Store) forgetCached() {
	if s.pipelines != nil {
		s.pipelines.mu.Lock()
		s.pipelines.forget()
		s.pipelines.mu.Unlock()
	}
	if s.runs != nil {
		s.runs.finish(s.runs.drop(nil), nil, nil)
	}
	if s.timers != nil {
		s.timers.finish(s.timers.drop(nil), nil, nil)
	}
}

// copyRun is r with its map and pointer fields of its own.
func copyRun(r run.Run) run.Run {
	r.JobMeta = maps.Clone(r.JobMeta)
	if r.LastFailure != nil {
		f := *r.LastFailure
		r.LastFailure = &f
	}
	return r
}

// timersWritten is what c leaves of the timers it writes or deletes, each
// written one to be decoded from the values the commit writes (as
// ScanTimer reads a row); ok is false when one does not encode, and
// nothing is then stored.
func timersWritten(c store.Change) (keys []string, xs map[string]cached[store.Timer], ok bool) {
	xs = make(map[string]cached[store.Timer], len(c.Timers)+len(c.TimerDeletes))
	e := sqlstore.Encoder{D: &dialect}
	for _, w := range c.Timers {
		t := w.Timer
		keys = append(keys, t.Key)
		row := values{t.Key, t.Kind, t.Run.PipelineID, t.Run.ScheduleID, t.Run.Period,
			e.Time("timer due at", t.DueAt), e.Object("timer detail", t.Detail)}
		xs[t.Key] = cached[store.Timer]{found: true, decode: func() (store.Timer, error) { return sqlstore.ScanTimer(row) }}
	}
	for _, d := range c.TimerDeletes {
		keys = append(keys, d.Key)
		xs[d.Key] = cached[store.Timer]{}
	}
	return keys, xs, e.Err == nil
}

// runsWritten is what c leaves of the runs it writes: each as a read of
// its row returns it (storedRun); ok is false when one would not read
// back as written, and nothing is then stored.
func runsWritten(c store.Change) (keys []run.Key, xs map[run.Key]cached[run.Run], ok bool) {
	keys = make([]run.Key, len(c.Runs))
	xs = make(map[run.Key]cached[run.Run], len(c.Runs))
	ok = true
	for i, w := range c.Runs {
		keys[i] = w.Run.Key
		r, kept := storedRun(w.Run, w.ExpectVersion+1)
		ok = ok && kept
		xs[w.Run.Key] = cached[run.Run]{v: r, found: true}
	}
	return keys, xs, ok
}

// storedRun is r as sqlstore.ScanRun reads back the row a Commit writes of
// it at version: its times as the Unix nanoseconds stored, in UTC, and no
// monotonic reading; its job metadata nil when empty (a NULL column), else
// a map of its own; its failure a copy. ok is false when the metadata
// holds text JSON would not give back as it is (invalid UTF-8).
// TestScratchRunWritesRead holds it to a durable store's read of every
// field.
func storedRun(r run.Run, version int64) (run.Run, bool) {
	r.Version = version
	for _, t := range []*time.Time{&r.CreatedAt, &r.UpdatedAt, &r.StateSince, &r.ExpiresAt,
		&r.EvalStartedAt, &r.EvalDeadline, &r.JobStartedAt, &r.PollDeadline, &r.EndedAt} {
		*t = storedTime(*t)
	}
	if len(r.JobMeta) == 0 {
		r.JobMeta = nil
	}
	for k, v := range r.JobMeta {
		if !utf8.ValidString(k) || !utf8.ValidString(v) {
			return run.Run{}, false
		}
	}
	return copyRun(r), true
}

// storedTime is t as a time column reads back (sqlstore.TimeCol): the zero
// time for none, else its Unix nanoseconds in UTC.
func storedTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return time.Unix(0, t.UnixNano()).UTC()
}
