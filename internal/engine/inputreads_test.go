package engine_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// inputReads counts a store's read calls by method: the batch read
// (Facts) and every single read a decision could make instead.
type inputReads struct {
	store.Store
	mu sync.Mutex
	n  map[string]int
}

// countCall counts a call of method m, then makes it.
func countCall[T any](c *inputReads, m string, call func() (T, error)) (T, error) {
	c.mu.Lock()
	c.n[m]++
	c.mu.Unlock()
	return call()
}

// take returns the counts since the last take.
func (c *inputReads) take() map[string]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = map[string]int{}
	return n
}

func (c *inputReads) Facts(ctx context.Context, q store.FactsQuery) (store.Facts, error) {
	return countCall(c, "Facts", func() (store.Facts, error) { return store.ReadFacts(ctx, c.Store, q) })
}

func (c *inputReads) PipelineGet(ctx context.Context, id string) (store.Pipeline, error) {
	return countCall(c, "PipelineGet", func() (store.Pipeline, error) { return c.Store.PipelineGet(ctx, id) })
}

func (c *inputReads) SensorGet(ctx context.Context, id, key string) (store.Sensor, error) {
	return countCall(c, "SensorGet", func() (store.Sensor, error) { return c.Store.SensorGet(ctx, id, key) })
}

func (c *inputReads) SensorGetMany(ctx context.Context, p store.SensorGetManyParams) ([]store.Sensor, error) {
	return countCall(c, "SensorGetMany", func() ([]store.Sensor, error) { return c.Store.SensorGetMany(ctx, p) })
}

func (c *inputReads) RunGet(ctx context.Context, k run.Key) (run.Run, error) {
	return countCall(c, "RunGet", func() (run.Run, error) { return c.Store.RunGet(ctx, k) })
}

func (c *inputReads) TimerGet(ctx context.Context, key string) (store.Timer, error) {
	return countCall(c, "TimerGet", func() (store.Timer, error) { return c.Store.TimerGet(ctx, key) })
}

func (c *inputReads) MarkerGet(ctx context.Context, k run.Key, kind string) (store.Marker, error) {
	return countCall(c, "MarkerGet", func() (store.Marker, error) { return c.Store.MarkerGet(ctx, k, kind) })
}

func (c *inputReads) MarkerListOf(ctx context.Context, k run.Key) ([]store.Marker, error) {
	return countCall(c, "MarkerListOf", func() ([]store.Marker, error) { return c.Store.MarkerListOf(ctx, k) })
}

func (c *inputReads) BaselineGet(ctx context.Context, k run.Key) (store.Baseline, error) {
	return countCall(c, "BaselineGet", func() (store.Baseline, error) { return c.Store.BaselineGet(ctx, k) })
}

func (c *inputReads) LedgerList(ctx context.Context, k run.Key) ([]store.LedgerEntry, error) {
	return countCall(c, "LedgerList", func() ([]store.LedgerEntry, error) { return c.Store.LedgerList(ctx, k) })
}

// inputReadsPipeline has every kind of read a run's way makes: trigger
// data, a validation rule, a post-run rule (the baseline at success), an
// SLA (markers) and an upstream (its row and run).
const inputReadsPipeline = `
pipeline: {id: orders}
schedule:
  trigger: {key: orders-landed, check: exists}
validation:
  rules: [{key: orders-landed, check: exists}, {check: upstream, pipeline: raw}]
postRun:
  rules: [{key: orders-count, check: exists}]
sla: {deadline: "23:00"}
job: {type: glue, config: {jobName: orders}, pollInterval: 1m}
`

const inputReadsUpstream = `
pipeline: {id: raw}
schedule: {trigger: {key: raw-landed, check: exists}}
job: {type: glue, config: {jobName: raw}, pollInterval: 1m}
`

// TestInputReadsOneBatch follows the inputs of two runs' way (trigger
// data, the rule write, each step and timer) on a store that offers the
// batch read: every input reads its facts through Facts — one call, or
// a further one when its config or its runs name more — and makes no
// single read of what a decision reads. It logs the calls per input
// (the before/after figure).
func TestInputReadsOneBatch(t *testing.T) {
	ctx := t.Context()
	h := newReadsHarness(t, configFile{"raw.yaml", inputReadsUpstream}, configFile{"orders.yaml", inputReadsPipeline})
	eng, st, clk := h.eng, h.st, h.clk
	check := func(input string) {
		r := h.took(input)
		if r.calls["Facts"] != int(r.rounds) || r.single > 0 {
			t.Errorf("%s: read %v, want one Facts call per round (%d) and no single read", input, r.calls, r.rounds)
		}
		if r.redecided > 0 {
			t.Errorf("%s: %d decisions made again (a fact found missing), want each made once", input, r.redecided)
		}
	}
	runDue := func() {
		for {
			ts, err := eng.DueTimers(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			if len(ts) == 0 {
				return
			}
			st.take() // the listing
			if err := eng.ProcessTimer(ctx, ts[0]); err != nil {
				t.Fatal(err)
			}
			check("timer " + ts[0].Kind)
		}
	}
	writes := 0
	put := func(pipeline, key string) {
		writes++ // new content each time: each write is new data
		if _, err := eng.PutSensor(ctx, pipeline, key, run.Detail("write", writes)); err != nil {
			t.Fatal(err)
		}
		check("sensor " + key)
	}
	runDue()
	put("orders", "orders-landed") // waits for raw
	put("raw", "raw-landed")
	for range 5 {
		runDue()
		clk.Advance(time.Minute)
	}
	put("orders", "orders-count")  // post-run data after success
	put("orders", "orders-landed") // late data: a rerun
	runDue()
	st.take()
	t.Logf("store reads per input:\n%s", strings.Join(h.lines, "\n"))
	if s := eng.FactsStats(); s.LateReads > 0 {
		t.Errorf("late reads: %+v", s)
	}
}

// configFile is a pipeline document and the file it is applied from.
type configFile struct{ name, doc string }

// readsHarness is an engine on SQLite behind a store that counts its
// read calls (inputReads), with configs applied: what TestInputReadsOneBatch
// and TestOperatorReadsOneBatch follow the inputs on.
type readsHarness struct {
	eng    *engine.Engine
	st     *inputReads
	clk    *clock.Virtual
	before engine.FactsStats
	lines  []string // a line per input taken: its decisions, rounds and calls
}

func newReadsHarness(t *testing.T, files ...configFile) *readsHarness {
	t.Helper()
	ctx := t.Context()
	clk := clock.NewVirtual(t0)
	inner, err := sqlite.Open(ctx, t.TempDir()+"/e.db")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = inner.Close() })
	st := &inputReads{Store: inner, n: map[string]int{}}
	eng := engine.New(engine.Options{Store: st, Clock: clk, Jobs: &countingJobs{}})
	if err := eng.Open(ctx); err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if _, err := eng.ApplyConfig(ctx, f.name, []byte(f.doc)); err != nil {
			t.Fatal(err)
		}
	}
	h := &readsHarness{eng: eng, st: st, clk: clk}
	h.reset() // the loads
	return h
}

// reset forgets the calls and decisions so far.
func (h *readsHarness) reset() {
	h.st.take()
	h.before = h.eng.FactsStats()
}

// inputRead is what one input read: its store calls by method, how many
// of them were single reads (not Facts), its decisions, their rounds and
// the decisions made again for a missing fact.
type inputRead struct {
	calls                     map[string]int
	single                    int
	inputs, rounds, redecided int64
}

// took returns what the input read since the last take, and logs it.
func (h *readsHarness) took(input string) inputRead {
	now := h.eng.FactsStats()
	r := inputRead{calls: h.st.take(), inputs: now.Inputs - h.before.Inputs, redecided: now.Redecided - h.before.Redecided}
	r.rounds = r.inputs + now.ExtraRounds - h.before.ExtraRounds
	h.before = now
	for m, n := range r.calls {
		if m != "Facts" {
			r.single += n
		}
	}
	h.lines = append(h.lines, fmt.Sprintf("%-22s %d decisions, %d rounds: %v", input, r.inputs, r.rounds, r.calls))
	return r
}

// TestRemovedPipelineNamesNoMore writes a sensor of a removed pipeline
// whose config the process has not parsed: the round reads its row,
// finds it removed and names nothing more (configsRead resolves no
// removed row's config), so the write is refused as unknown in one round.
func TestRemovedPipelineNamesNoMore(t *testing.T) {
	ctx := t.Context()
	h := newReadsHarness(t, configFile{"orders.yaml", inputReadsPipeline})
	if forgot, err := h.eng.Forget(ctx, "orders"); err != nil || !forgot {
		t.Fatalf("Forget(orders) = %v, %v; want true", forgot, err)
	}
	h.eng.ForgetConfig("orders") // a process that never parsed it
	h.reset()
	if _, err := h.eng.PutSensor(ctx, "orders", "orders-landed", run.Detail("write", 1)); err == nil {
		t.Fatal("a removed pipeline's sensor write was taken, want it refused as unknown")
	}
	if r := h.took("sensor of a removed pipeline"); r.rounds != r.inputs || r.single > 0 {
		t.Errorf("read %v in %d rounds for %d decisions: want one round each and no single read", r.calls, r.rounds, r.inputs)
	}
}
