package sqlite

import (
	"maps"
	"slices"
	"sync"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// pipelineCache keeps the pipeline rows of a store that has its database
// to itself (an in-memory database, a scratch store: one connection, no
// other process can open the file), so no writer other than this Store's
// Commit can change a row after open (the migrations run before any
// read). Every decision reads its pipeline's row, and the watchdog lists
// all of them each pass: in a simulation those reads of rows that almost
// never change, with their documents, are a tenth of the statements.
//
// A Commit that writes pipelines drops the cache before and after its
// transaction, and bumps gen both times; a read that missed stores what
// it read only if gen did not move meanwhile, so a row read before a
// commit is never kept after it. What the cache answers is what the
// database holds, as a read that started at the same instant would; the
// commit's conditions are still checked in SQL (the cache never answers
// one).
//
// The rows handed out share their Doc and PauseWindows with the cache:
// callers treat a stored row as read-only (none writes into them; a slice
// is clipped, so an append copies).
type pipelineCache struct {
	mu   sync.Mutex
	gen  uint64
	byID map[string]store.Pipeline
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

// drop forgets every row: a commit that writes pipelines is about to
// change, or changed, the table.
func (c *pipelineCache) drop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.byID)
	c.all, c.allOK = nil, false
}

func clipPipeline(p store.Pipeline) store.Pipeline {
	p.Doc = slices.Clip(p.Doc)
	p.PauseWindows = slices.Clip(p.PauseWindows)
	return p
}

// runCache keeps the runs a store that has its database to itself has
// read, by key, and the keys it found no run for: a decision reads its
// run, and the decisions about one period (a sensor write, its trigger
// call and record, each step) read it again between two of its writes.
// A Commit that writes runs drops their keys before and after its
// transaction and bumps gen both times; Expire, which deletes runs, drops
// them all. A read that missed keeps what it read only if gen did not
// move meanwhile (as for pipelineCache).
type runCache struct {
	mu   sync.Mutex
	gen  uint64
	runs map[run.Key]cachedRun
}

type cachedRun struct {
	r     run.Run
	found bool
}

func newRunCache() *runCache { return &runCache{runs: map[run.Key]cachedRun{}} }

// get returns the cached read of k (a copy the caller may change); when
// there is none, the generation a read must still find to store its
// result.
func (c *runCache) get(k run.Key) (cachedRun, bool, uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	x, ok := c.runs[k]
	if ok && x.found {
		x.r = copyRun(x.r)
	}
	return x, ok, c.gen
}

func (c *runCache) put(gen uint64, k run.Key, x cachedRun) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen == c.gen {
		if x.found {
			x.r = copyRun(x.r)
		}
		c.runs[k] = x
	}
}

// drop forgets the runs of keys, or every run when keys is nil.
func (c *runCache) drop(keys []run.Key) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	if keys == nil {
		clear(c.runs)
	}
	for _, k := range keys {
		delete(c.runs, k)
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
