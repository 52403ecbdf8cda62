package alert_test

import (
	"errors"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
)

// Status reads each sink's backlog, last success and dead letters from
// the store: a second Deliverer on the same store (another replica, one
// that delivered nothing) reports what the first one did.
func TestStatusPerSink(t *testing.T) {
	path := dbPath(t)
	st := openStore(t, path)
	clk := clock.NewVirtual(t0.Add(time.Hour))
	ok, bad := newRecorder("ok"), newRecorder("bad")
	bad.setFail(func(alert.Alert, int) (bool, error) { return false, errors.New("channel_not_found") })
	errorsOnly := alert.Match{Levels: []event.Level{event.LevelError}}
	d := newDeliverer(t, st, alert.Options{Clock: clk}, route(ok, all), route(bad, all))
	appendEvents(t, st, ev("a", event.JobFailed, "2026-03-07", t0))
	deliver(t, d)

	// Later events nobody delivered yet: two for "ok" (all levels), and
	// the one error among them also for the second replica's "errs".
	appendEvents(t, st, ev("b", event.JobFailed, "2026-03-07", t0.Add(time.Minute)), ev("c", event.SLAWarning, "2026-03-07", t0.Add(2*time.Minute)))
	other := newDeliverer(t, openStore(t, path), alert.Options{Clock: clk, FromStart: true}, route(newRecorder("ok"), all), route(newRecorder("errs"), errorsOnly))
	got, err := other.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("status of %d sinks, want ok, errs, bad: %+v", len(got), got)
	}
	at := t0.Add(time.Hour)
	okS, errsS, badS := got[0], got[1], got[2]
	if okS.Sink != "ok" || !okS.Configured || okS.Backlog != 2 || okS.BacklogMore || okS.DeadLetters != 0 || okS.LastSuccess == nil || !okS.LastSuccess.Equal(at) {
		t.Errorf("sink ok: %+v; want configured, backlog 2, no dead letter, last success %v", okS, at)
	}
	// errs started from the log's start (FromStart) and takes errors only:
	// a and b.
	if errsS.Sink != "errs" || !errsS.Configured || errsS.Backlog != 2 {
		t.Errorf("sink errs: %+v; want configured with backlog 2 (the two JOB_FAILED)", errsS)
	}
	// bad is no longer configured in this replica: listed from its
	// cursor, with its dead letter and no last success (its last move was
	// the dead letter).
	if badS.Sink != "bad" || badS.Configured || badS.Backlog != 0 || badS.DeadLetters != 1 || badS.LastSuccess != nil ||
		badS.LastDeadLetter == nil || badS.LastDeadLetter.Error != "channel_not_found" || badS.CursorAt == nil {
		t.Errorf("sink bad: %+v; want unconfigured, 1 dead letter (channel_not_found), no last success", badS)
	}
}

// The backlog count stops at StatusScan events and says there may be more.
func TestStatusBacklogIsBounded(t *testing.T) {
	st := openStore(t, dbPath(t))
	d := newDeliverer(t, st, alert.Options{FromStart: true}, route(newRecorder("r"), all))
	var es []event.Event
	for i := range alert.StatusScan + 1 {
		es = append(es, ev("e"+string(rune('a'+i%26))+time.Duration(i).String(), event.JobFailed, "2026-03-07", t0.Add(time.Duration(i)*time.Second)))
	}
	appendEvents(t, st, es...)
	got, err := d.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Backlog != alert.StatusScan || !got[0].BacklogMore {
		t.Fatalf("status %+v, want backlog %d and more", got, alert.StatusScan)
	}
}

// A sink failing on every attempt is reported failing at its first failed
// attempt, by any replica reading the store — not only once the alert is
// given up after MaxAttempts — and a cursor that only started is no "last
// success": LastSuccess is the last alert the sink accepted.
func TestStatusSaysFailingAtOnce(t *testing.T) {
	path := dbPath(t)
	st := openStore(t, path)
	clk := clock.NewVirtual(t0.Add(time.Hour))
	flaky := newRecorder("flaky")
	other := newDeliverer(t, openStore(t, path), alert.Options{Clock: clk, FromStart: true}, route(newRecorder("flaky"), all))
	var during []alert.SinkStatus
	flaky.setFail(func(_ alert.Alert, call int) (bool, error) {
		if call == 3 {
			// Read while the third attempt runs: two failed before it.
			var err error
			if during, err = other.Status(t.Context()); err != nil {
				t.Error(err)
			}
			return false, nil
		}
		return true, errors.New("HTTP 503 from the webhook")
	})
	d := newDeliverer(t, st, alert.Options{Clock: clk, FromStart: true}, route(flaky, all))
	before, err := other.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(before) != 1 || before[0].CursorAt == nil || before[0].LastSuccess != nil || before[0].Failing != nil {
		t.Fatalf("a sink whose cursor only started: %+v, want a cursor, no last success, not failing", before)
	}
	appendEvents(t, st, ev("a", event.JobFailed, "2026-03-07", t0))
	deliver(t, d)
	if len(during) != 1 || during[0].Failing == nil || during[0].Failing.Attempts != 2 ||
		during[0].Failing.LastError != "HTTP 503 from the webhook" || !during[0].Failing.Since.Equal(t0.Add(time.Hour)) || during[0].DeadLetters != 0 {
		t.Fatalf("status during the third attempt: %+v, want failing after 2 attempts with the last error, no dead letter yet", during)
	}
	after, err := other.Status(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 1 || after[0].Failing != nil || after[0].LastSuccess == nil || !after[0].LastSuccess.Equal(t0.Add(time.Hour)) {
		t.Fatalf("status after the delivery: %+v, want not failing, last success at the delivery", after)
	}
}
