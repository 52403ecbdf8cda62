package alert_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/event"
)

// Run delivers at once when notified, otherwise on the poll interval, and
// stops when its context ends.
func TestRunWakesOnNotifyAndPolls(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := openStore(t, dbPath(t))
		r := newRecorder("r")
		d := newDeliverer(t, st, alert.Options{PollInterval: time.Minute}, route(r, all))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { d.Run(ctx); close(done) }()
		synctest.Wait()

		appendEvents(t, st, ev("1", event.JobFailed, "2026-03-07", t0))
		d.Notify()
		synctest.Wait()
		wantIDs(t, "after Notify", r.ids(), "1")

		appendEvents(t, st, ev("2", event.JobFailed, "2026-03-08", t0))
		time.Sleep(30 * time.Second)
		synctest.Wait()
		wantIDs(t, "half a poll interval later, without Notify", r.ids(), "1")
		time.Sleep(31 * time.Second)
		synctest.Wait()
		wantIDs(t, "after the poll interval", r.ids(), "1", "2")

		cancel()
		<-done
	})
}

// A sink that is down, waiting between retries, does not hold up the
// others; it delivers when its destination is back, honouring the
// destination's Retry-After.
func TestRunSinksAreIndependent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := openStore(t, dbPath(t))
		down, up := newRecorder("down"), newRecorder("up")
		down.setFail(func(a alert.Alert, call int) (bool, error) {
			if a.Event.ID == "1" && call == 1 {
				return true, alert.WithRetryAfter(errors.New("HTTP 429"), 3*time.Minute)
			}
			return false, nil
		})
		d := newDeliverer(t, st, alert.Options{PollInterval: time.Hour, MinBackoff: time.Second, MaxBackoff: 5 * time.Minute},
			route(down, all), route(up, all))
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan struct{})
		go func() { d.Run(ctx); close(done) }()
		synctest.Wait()

		appendEvents(t, st, ev("1", event.JobFailed, "2026-03-07", t0), ev("2", event.SLAWarning, "2026-03-08", t0))
		d.Notify()
		synctest.Wait()
		wantIDs(t, "the healthy sink", up.ids(), "1", "2")
		wantIDs(t, "the throttled sink, at once", down.ids())

		time.Sleep(2*time.Minute + 59*time.Second)
		synctest.Wait()
		wantIDs(t, "the throttled sink, before its Retry-After", down.ids())
		time.Sleep(2 * time.Second)
		synctest.Wait()
		wantIDs(t, "the throttled sink, after its Retry-After", down.ids(), "1", "2")

		cancel()
		<-done
	})
}

// A Retry-After longer than MaxBackoff is cut to MaxBackoff: a sink never
// sleeps longer than the configured bound.
func TestRetryAfterIsCappedAtMaxBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		st := openStore(t, dbPath(t))
		r := newRecorder("r")
		r.setFail(func(a alert.Alert, call int) (bool, error) {
			if call == 1 {
				return true, alert.WithRetryAfter(errors.New("ratelimited"), 24*time.Hour)
			}
			return false, nil
		})
		d := newDeliverer(t, st, alert.Options{MinBackoff: time.Second, MaxBackoff: 5 * time.Minute}, route(r, all))
		appendEvents(t, st, ev("1", event.JobFailed, "2026-03-07", t0))
		errc := make(chan error, 1)
		go func() { errc <- d.DeliverPending(t.Context()) }()
		time.Sleep(5*time.Minute - time.Second)
		synctest.Wait()
		wantIDs(t, "before MaxBackoff", r.ids())
		time.Sleep(2 * time.Second)
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
		wantIDs(t, "after MaxBackoff", r.ids(), "1")
	})
}
