package alert_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

var t0 = time.Date(2026, 3, 7, 6, 0, 0, 0, time.UTC)

// dbPath is a store file that outlives one Deliverer (a restart reopens it).
func dbPath(t *testing.T) string { return filepath.Join(t.TempDir(), "interlock.db") }

func openStore(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	st, err := sqlite.Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// appendEvents commits events to the log, as the engine does.
// appendEvents records the events in order, one commit each (a test may
// record one event twice, which one Change may not hold).
func appendEvents(t *testing.T, st store.Store, es ...event.Event) {
	t.Helper()
	for _, e := range es {
		if err := st.Commit(context.Background(), store.Change{Events: []event.Event{e}}); err != nil {
			t.Fatal(err)
		}
	}
}

// ev is an event of pipeline orders, schedule cron.
func ev(id string, typ event.Type, date string, at time.Time) event.Event {
	return event.Event{ID: id, Time: at, Type: typ, PipelineID: "orders", ScheduleID: "cron", Date: date, Message: string(typ) + " for orders"}
}

func newDeliverer(t *testing.T, st store.Store, o alert.Options, routes ...alert.Route) *alert.Deliverer {
	t.Helper()
	o.Store, o.Routes = st, routes
	if o.Holder == "" {
		o.Holder = "test-process" // as serve names itself: a restart keeps its leases
	}
	if o.Clock == nil {
		o.Clock = clock.NewVirtual(t0)
	}
	if o.MinBackoff == 0 {
		o.MinBackoff, o.MaxBackoff = time.Millisecond, 4*time.Millisecond
	}
	d, err := alert.NewDeliverer(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func deliver(t *testing.T, d *alert.Deliverer) {
	t.Helper()
	if err := d.DeliverPending(t.Context()); err != nil {
		t.Fatal(err)
	}
}

// recorder is a hand-written fake sink: it accepts alerts and records
// them, or fails as its fail function says.
type recorder struct {
	name string

	mu    sync.Mutex
	got   []alert.Alert
	calls map[string]int // per event id
	fail  func(a alert.Alert, call int) (retry bool, err error)
}

func newRecorder(name string) *recorder { return &recorder{name: name, calls: map[string]int{}} }

func (r *recorder) Name() string { return r.name }

func (r *recorder) Deliver(_ context.Context, a alert.Alert) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls[a.Event.ID]++
	if r.fail != nil {
		if retry, err := r.fail(a, r.calls[a.Event.ID]); err != nil {
			return retry, err
		}
	}
	r.got = append(r.got, a)
	return false, nil
}

func (r *recorder) setFail(f func(a alert.Alert, call int) (bool, error)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.fail = f
}

func (r *recorder) ids() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, a := range r.got {
		out = append(out, a.Event.ID)
	}
	return out
}

func (r *recorder) callsOf(id string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.calls[id]
}

func route(s alert.Sink, m alert.Match) alert.Route { return alert.Route{Sink: s, Match: m} }

// all is a match that takes every event.
var all = alert.Match{Levels: event.Levels()}

func wantIDs(t *testing.T, what string, got []string, want ...string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s: got %q, want %q", what, got, want)
	}
}

// failingCommits is the real store with Commit failing while armed: the
// crash between a send and the cursor commit, without killing the test.
type failingCommits struct {
	store.Store
	mu    sync.Mutex
	armed int // commits left to fail
}

func (f *failingCommits) Commit(ctx context.Context, c store.Change) error {
	f.mu.Lock()
	if f.armed > 0 {
		f.armed--
		f.mu.Unlock()
		return fmt.Errorf("simulated crash: %w", errors.New("disk I/O error"))
	}
	f.mu.Unlock()
	return f.Store.Commit(ctx, c)
}

var errTest = errors.New("refused for the test")
