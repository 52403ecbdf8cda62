package alert_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// TestReplicasDeliverEachAlertOnce: two processes (two stores on one
// database file, two holders) run a deliverer for the same sink; only the
// holder of the sink's lease delivers, so every alert goes out once. When
// the holder stops, the other takes the lease once it expires, reads the
// cursor the first one left, and goes on from there: nothing lost, nothing
// sent twice.
func TestReplicasDeliverEachAlertOnce(t *testing.T) {
	path := dbPath(t)
	clk := clock.NewVirtual(t0)
	sink := newRecorder("pager")
	stores := []*sqlite.Store{openStore(t, path), openStore(t, path)}
	var ds []*alert.Deliverer
	for i, st := range stores {
		ds = append(ds, newDeliverer(t, st, alert.Options{Clock: clk, Holder: fmt.Sprintf("replica-%d", i), PollInterval: 2 * time.Millisecond, SuppressFor: -1}, route(sink, all)))
	}
	ctxs := make([]context.CancelFunc, len(ds))
	var wg sync.WaitGroup
	for i, d := range ds {
		ctx, cancel := context.WithCancel(t.Context())
		ctxs[i] = cancel
		wg.Go(func() { d.Run(ctx) })
	}
	defer func() {
		for _, c := range ctxs {
			c()
		}
		wg.Wait()
	}()

	write := func(from, to int) {
		for i := from; i < to; i++ {
			e := ev(strconv.Itoa(i), event.JobFailed, "2026-03-07", t0.Add(time.Duration(i)*time.Second))
			e.Message = "attempt " + e.ID + " failed" // each its own text: no repeat suppression
			appendEvents(t, stores[0], e)
			for _, d := range ds {
				d.Notify()
			}
		}
	}
	waitFor := func(n int) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for len(sink.ids()) < n {
			if time.Now().After(deadline) {
				t.Fatalf("%d alerts delivered, want %d", len(sink.ids()), n)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}
	// One alert the sink refuses for good: dead-lettered, never tried again
	// (the new holder must start from the cursor, not from its own idea of
	// it).
	sink.setFail(func(a alert.Alert, _ int) (bool, error) {
		if a.Event.ID == "5" {
			return false, errors.New("400 bad request")
		}
		return false, nil
	})
	write(0, 40)
	waitFor(39)

	l, err := stores[0].LeaseGet(t.Context(), "alert-sink/pager")
	if err != nil {
		t.Fatal(err)
	}
	holder := slices.Index([]string{"replica-0", "replica-1"}, l.Holder)
	if holder < 0 {
		t.Fatalf("the sink's lease is held by %q", l.Holder)
	}
	ctxs[holder]() // the holder stops
	write(40, 60)
	time.Sleep(50 * time.Millisecond) // the other polls meanwhile: the lease has not expired
	if n := len(sink.ids()); n != 39 {
		t.Fatalf("%d alerts delivered while the stopped holder's lease was unexpired, want 39", n)
	}
	clk.Set(clk.Now().Add(alert.DefaultLeaseTTL))
	waitFor(59)
	time.Sleep(20 * time.Millisecond)

	var want []string
	for i := range 60 {
		if i != 5 {
			want = append(want, strconv.Itoa(i))
		}
	}
	got := sink.ids()
	slices.SortFunc(got, func(a, b string) int { x, _ := strconv.Atoi(a); y, _ := strconv.Atoi(b); return x - y })
	if !slices.Equal(got, want) {
		t.Errorf("delivered %v, want each of 0..59 but 5 once", got)
	}
	if n := sink.callsOf("5"); n != 1 {
		t.Errorf("the refused alert was tried %d times, want 1 (dead-lettered once)", n)
	}
	l, err = stores[0].LeaseGet(t.Context(), "alert-sink/pager")
	if err != nil || l.Holder == fmt.Sprintf("replica-%d", holder) {
		t.Errorf("after the takeover the lease is %+v (%v), want the other replica's", l, err)
	}
}
