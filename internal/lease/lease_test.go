package lease

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

var t0 = time.Date(2026, 3, 10, 6, 0, 0, 0, time.UTC)

func TestTake(t *testing.T) {
	held := store.Lease{Name: "watchdog", Holder: "a", Expires: t0.Add(10 * time.Second), Version: 4}
	for _, tc := range []struct {
		name   string
		cur    store.Lease
		found  bool
		holder string
		now    time.Time
		ok     bool
		expect int64
	}{
		{"no record: take it", store.Lease{}, false, "b", t0, true, 0},
		{"held by another, unexpired: wait", held, true, "b", t0, false, 0},
		{"held by another, a nanosecond before expiry: wait", held, true, "b", t0.Add(10*time.Second - 1), false, 0},
		{"held by another, expired at now: take it", held, true, "b", t0.Add(10 * time.Second), true, 4},
		{"held by another, long expired: take it", held, true, "b", t0.Add(time.Hour), true, 4},
		{"own, unexpired: renew", held, true, "a", t0, true, 4},
		{"own, expired: renew (a restart with the same identity)", held, true, "a", t0.Add(time.Hour), true, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, ok := Take("watchdog", tc.cur, tc.found, tc.holder, tc.now, 30*time.Second)
			if ok != tc.ok {
				t.Fatalf("ok = %v, want %v", ok, tc.ok)
			}
			if !ok {
				return
			}
			want := store.LeaseWrite{Lease: store.Lease{Name: "watchdog", Holder: tc.holder, Expires: tc.now.Add(30 * time.Second), Version: tc.expect + 1}, ExpectVersion: tc.expect}
			if w != want {
				t.Errorf("write %+v, want %+v", w, want)
			}
		})
	}
}

func TestRenewAndHeld(t *testing.T) {
	l := store.Lease{Name: "alert-sink/slack", Holder: "a", Expires: t0.Add(30 * time.Second), Version: 7}
	w := Renew(l, t0.Add(20*time.Second), 30*time.Second)
	if w.ExpectVersion != 7 || w.Lease.Version != 8 || !w.Lease.Expires.Equal(t0.Add(50*time.Second)) || w.Lease.Holder != "a" {
		t.Errorf("Renew: %+v", w)
	}
	if !Held(l, t0.Add(14*time.Second), 15*time.Second) || Held(l, t0.Add(15*time.Second), 15*time.Second) || Held(store.Lease{}, t0, 0) {
		t.Error("Held: wrong at the margin")
	}
}

// TestAcquireOnAStore: two processes' identities on one store take turns
// only by expiry; the same identity coming back keeps its lease.
func TestAcquireOnAStore(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "i.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ttl := 30 * time.Second
	step := func(holder string, now time.Time, want bool) {
		t.Helper()
		l, ok, err := Acquire(ctx, st, "watchdog", holder, now, ttl)
		if err != nil || ok != want {
			t.Fatalf("%s at %s: ok=%v err=%v, want ok=%v", holder, now.Format(time.TimeOnly), ok, err, want)
		}
		if ok && (l.Holder != holder || !l.Expires.Equal(now.Add(ttl))) {
			t.Fatalf("%s: lease %+v", holder, l)
		}
	}
	step("a", t0, true)
	step("b", t0.Add(time.Second), false)
	step("a", t0.Add(20*time.Second), true) // renewed: expires at +50s
	step("b", t0.Add(40*time.Second), false)
	step("b", t0.Add(50*time.Second), true) // a stopped renewing
	step("a", t0.Add(51*time.Second), false)
	step("b", t0.Add(70*time.Second), true) // b restarted with its identity, before its lease expired
}
