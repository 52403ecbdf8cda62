package alert_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/alert/file"
	"github.com/interlockhq/interlock/internal/alert/slack"
	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

func TestDeliversEachSinkItsEventsInLogOrder(t *testing.T) {
	st := openStore(t, dbPath(t))
	everything, errorsOnly := newRecorder("everything"), newRecorder("errors")
	d := newDeliverer(t, st, alert.Options{}, route(everything, all), route(errorsOnly, alert.Match{Levels: []event.Level{event.LevelError}}))
	appendEvents(t, st,
		ev("1", event.ValidationPassed, "2026-03-07", t0),
		ev("2", event.JobFailed, "2026-03-07", t0.Add(time.Minute)),
		ev("3", event.SLAWarning, "2026-03-07", t0.Add(2*time.Minute)),
	)
	appendEvents(t, st, ev("4", event.SLABreach, "2026-03-07", t0.Add(3*time.Minute)))
	deliver(t, d)
	wantIDs(t, "everything", everything.ids(), "1", "2", "3", "4")
	wantIDs(t, "errors", errorsOnly.ids(), "2", "4")
	if a := everything.got[1]; a.Sink != "everything" || a.Thread.Period != "2026-03-07" || a.Thread.PipelineID != "orders" || a.Thread.ScheduleID != "cron" {
		t.Errorf("alert %+v: want the sink name and the period's thread key", a)
	}
	// A second sweep finds nothing new.
	deliver(t, d)
	wantIDs(t, "everything after a second sweep", everything.ids(), "1", "2", "3", "4")
}

// A restart — a new Deliverer on the reopened store — continues from each
// sink's cursor: nothing delivered is sent again, nothing new is missed.
func TestRestartContinuesFromTheCursor(t *testing.T) {
	path := dbPath(t)
	st := openStore(t, path)
	r := newRecorder("r")
	d := newDeliverer(t, st, alert.Options{}, route(r, all))
	appendEvents(t, st, ev("1", event.JobFailed, "2026-03-07", t0), ev("2", event.ValidationPassed, "2026-03-07", t0), ev("3", event.JobFailed, "2026-03-08", t0))
	deliver(t, d)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st2 := openStore(t, path)
	r2 := newRecorder("r")
	d2 := newDeliverer(t, st2, alert.Options{}, route(r2, all))
	appendEvents(t, st2, ev("4", event.SLABreach, "2026-03-08", t0), ev("5", event.JobFailed, "2026-03-09", t0))
	deliver(t, d2)
	wantIDs(t, "before the restart", r.ids(), "1", "2", "3")
	wantIDs(t, "after the restart", r2.ids(), "4", "5")
}

// Skipped events move the cursor too (lazily in Run, at once in
// DeliverPending), so a restart does not re-read them.
func TestSkippedEventsMoveTheCursor(t *testing.T) {
	path := dbPath(t)
	st := openStore(t, path)
	r := newRecorder("r")
	d := newDeliverer(t, st, alert.Options{}, route(r, alert.Match{Types: []event.Type{event.SLABreach}}))
	appendEvents(t, st, ev("1", event.ValidationPassed, "2026-03-07", t0), ev("2", event.JobTriggered, "2026-03-07", t0))
	deliver(t, d)
	st.Close()

	st2 := openStore(t, path)
	r2 := newRecorder("r")
	r2.setFail(func(a alert.Alert, _ int) (bool, error) {
		t.Errorf("event %s read again after the restart", a.Event.ID)
		return false, nil
	})
	d2 := newDeliverer(t, st2, alert.Options{}, route(r2, all))
	deliver(t, d2)
}

// A sink added to an existing project starts at the end of the log: it
// does not replay history. FromStart makes it replay.
func TestNewSinkStartsAtTheEndOfTheLog(t *testing.T) {
	st := openStore(t, dbPath(t))
	appendEvents(t, st, ev("old-1", event.JobFailed, "2026-03-05", t0), ev("old-2", event.JobFailed, "2026-03-06", t0))
	late := newRecorder("late")
	d := newDeliverer(t, st, alert.Options{}, route(late, all))
	appendEvents(t, st, ev("new", event.JobFailed, "2026-03-07", t0))
	deliver(t, d)
	wantIDs(t, "a new sink", late.ids(), "new")

	replay := newRecorder("replay")
	d = newDeliverer(t, st, alert.Options{FromStart: true}, route(replay, all))
	deliver(t, d)
	wantIDs(t, "a new sink with FromStart", replay.ids(), "old-1", "old-2", "new")
}

func TestRetriesThenDelivers(t *testing.T) {
	st := openStore(t, dbPath(t))
	r := newRecorder("r")
	r.setFail(func(a alert.Alert, call int) (bool, error) {
		if call < 3 {
			return true, errors.New("HTTP 503")
		}
		return false, nil
	})
	var failures atomic.Int32
	d := newDeliverer(t, st, alert.Options{OnFailure: func(string) { failures.Add(1) }}, route(r, all))
	appendEvents(t, st, ev("1", event.JobFailed, "2026-03-07", t0), ev("2", event.JobFailed, "2026-03-08", t0))
	deliver(t, d)
	wantIDs(t, "delivered", r.ids(), "1", "2")
	if r.callsOf("1") != 3 || r.callsOf("2") != 3 {
		t.Errorf("calls %d, %d: want 3 each (two failures, then success)", r.callsOf("1"), r.callsOf("2"))
	}
	if dls, _ := d.DeadLetters(t.Context()); len(dls) != 0 || failures.Load() != 0 {
		t.Errorf("dead letters %v, failures %d: want none", dls, failures.Load())
	}
}

// After MaxAttempts retryable failures, or one permanent failure, the
// event is dead-lettered: visible through DeadLetters (also after a
// restart), counted by OnFailure, and the sink moves on to the next event.
func TestDeadLetters(t *testing.T) {
	path := dbPath(t)
	st := openStore(t, path)
	r := newRecorder("r")
	r.setFail(func(a alert.Alert, _ int) (bool, error) {
		switch a.Event.ID {
		case "down":
			return true, errors.New("HTTP 503 Service Unavailable")
		case "refused":
			return false, errors.New("channel_not_found")
		}
		return false, nil
	})
	var failed []string
	clk := clock.NewVirtual(t0.Add(time.Hour))
	d := newDeliverer(t, st, alert.Options{Clock: clk, MaxAttempts: 4, OnFailure: func(s string) { failed = append(failed, s) }}, route(r, all))
	appendEvents(t, st,
		ev("down", event.JobFailed, "2026-03-07", t0),
		ev("refused", event.SLABreach, "2026-03-07", t0.Add(time.Minute)),
		ev("fine", event.SLAWarning, "2026-03-07", t0.Add(2*time.Minute)),
	)
	deliver(t, d)
	wantIDs(t, "delivered", r.ids(), "fine")
	if r.callsOf("down") != 4 || r.callsOf("refused") != 1 {
		t.Errorf("attempts: down %d (want MaxAttempts 4), refused %d (want 1: permanent)", r.callsOf("down"), r.callsOf("refused"))
	}
	if len(failed) != 2 || failed[0] != "r" {
		t.Errorf("OnFailure calls %q, want two for sink r", failed)
	}
	st.Close()

	d2 := newDeliverer(t, openStore(t, path), alert.Options{}, route(newRecorder("r"), all))
	dls, err := d2.DeadLetters(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if len(dls) != 2 {
		t.Fatalf("dead letters after a restart: %+v, want 2", dls)
	}
	want := []alert.DeadLetter{
		{Sink: "r", EventID: "down", Type: event.JobFailed, PipelineID: "orders", ScheduleID: "cron", Period: "2026-03-07",
			EventTime: t0, Attempts: 4, Error: "HTTP 503 Service Unavailable", At: t0.Add(time.Hour)},
		{Sink: "r", EventID: "refused", Type: event.SLABreach, PipelineID: "orders", ScheduleID: "cron", Period: "2026-03-07",
			EventTime: t0.Add(time.Minute), Attempts: 1, Error: "channel_not_found", At: t0.Add(time.Hour)},
	}
	for i := range want {
		if !dls[i].At.Equal(want[i].At) || !dls[i].EventTime.Equal(want[i].EventTime) {
			t.Errorf("dead letter %d times %v, %v; want %v, %v", i, dls[i].At, dls[i].EventTime, want[i].At, want[i].EventTime)
		}
		dls[i].At, dls[i].EventTime = want[i].At, want[i].EventTime
		if dls[i] != want[i] {
			t.Errorf("dead letter %d\n got %+v\nwant %+v", i, dls[i], want[i])
		}
	}
}

// The crash window: the sink accepted an alert, then the process died
// before its cursor commit. The process started again sends the alert
// again — once — to a sink that cannot tell (at least once), and not at
// all to the file sink, which recognises its last line (exactly once).
func TestCrashBetweenSendAndCursor(t *testing.T) {
	st := &failingCommits{Store: openStore(t, dbPath(t))}
	r := newRecorder("r")
	path := filepath.Join(t.TempDir(), "alerts.jsonl")
	f, err := file.Open(file.Config{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := newDeliverer(t, st, alert.Options{}, route(r, all))
	fd := newDeliverer(t, st, alert.Options{}, route(f, all))
	deliver(t, rd) // each takes its sink's lease: the crash below is the cursor commit's
	deliver(t, fd)
	appendEvents(t, st, ev("1", event.JobFailed, "2026-03-07", t0))

	for _, sink := range []alert.Sink{r, f} {
		d := map[alert.Sink]*alert.Deliverer{r: rd, f: fd}[sink]
		st.armed = 1
		if err := d.DeliverPending(t.Context()); err == nil || !strings.Contains(err.Error(), "simulated crash") {
			t.Fatalf("DeliverPending = %v, want the failed cursor commit", err)
		}
		restarted := newDeliverer(t, st, alert.Options{}, route(sink, all)) // the process again, its memory gone
		deliver(t, restarted)
		deliver(t, restarted)
	}
	wantIDs(t, "recorder (at least once)", r.ids(), "1", "1")
	b, _ := os.ReadFile(path)
	if n := strings.Count(string(b), "\n"); n != 1 {
		t.Errorf("the file has %d lines, want 1 (exactly once):\n%s", n, b)
	}
}

// A process whose cursor commit failed after the sink accepted an alert
// (its database connection cut mid-commit) and that still holds the sink's
// lease records the alert at the next sweep instead of sending it again: a
// Slack post is not repeated because PostgreSQL restarted.
func TestFailedRecordIsRecordedNotResent(t *testing.T) {
	st := &failingCommits{Store: openStore(t, dbPath(t))}
	r := newRecorder("r")
	d := newDeliverer(t, st, alert.Options{}, route(r, all))
	deliver(t, d) // takes the sink's lease: the failure below is the record's
	appendEvents(t, st, ev("1", event.JobFailed, "2026-03-07", t0), ev("2", event.JobFailed, "2026-03-08", t0))
	st.armed = 1
	if err := d.DeliverPending(t.Context()); err == nil || !strings.Contains(err.Error(), "simulated crash") {
		t.Fatalf("DeliverPending = %v, want the failed cursor commit", err)
	}
	deliver(t, d)
	deliver(t, d)
	wantIDs(t, "delivered (once each)", r.ids(), "1", "2")
	// Recorded: a process started now finds nothing left to send.
	deliver(t, newDeliverer(t, st, alert.Options{}, route(r, all)))
	wantIDs(t, "delivered after a restart", r.ids(), "1", "2")
}

// Ending the context during a backoff leaves the event pending: not dead-
// lettered, delivered by the next sweep.
func TestCancelDuringBackoffKeepsTheEvent(t *testing.T) {
	st := openStore(t, dbPath(t))
	r := newRecorder("r")
	ctx, cancel := context.WithCancel(t.Context())
	r.setFail(func(alert.Alert, int) (bool, error) { cancel(); return true, errors.New("timeout") })
	d := newDeliverer(t, st, alert.Options{MinBackoff: time.Hour, MaxBackoff: time.Hour}, route(r, all))
	appendEvents(t, st, ev("1", event.JobFailed, "2026-03-07", t0))
	if err := d.DeliverPending(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("DeliverPending = %v, want context.Canceled", err)
	}
	r.setFail(nil)
	deliver(t, d)
	wantIDs(t, "delivered", r.ids(), "1")
	if dls, _ := d.DeadLetters(t.Context()); len(dls) != 0 {
		t.Errorf("dead letters %+v, want none", dls)
	}
}

func TestSuppression(t *testing.T) {
	st := openStore(t, dbPath(t))
	r, off := newRecorder("r"), newRecorder("off")
	d := newDeliverer(t, st, alert.Options{}, route(r, all))
	dOff := newDeliverer(t, st, alert.Options{SuppressFor: -1}, route(off, all))
	missed := func(id, date string, at time.Time) event.Event { return ev(id, event.ScheduleMissed, date, at) }
	other := missed("other-msg", "2026-03-07", t0.Add(20*time.Minute))
	other.Message = "a different message"
	appendEvents(t, st,
		missed("first", "2026-03-07", t0),
		missed("repeat", "2026-03-07", t0.Add(10*time.Minute)), // identical within the hour: suppressed
		other, // another message: sent
		missed("other-period", "2026-03-08", t0.Add(30*time.Minute)),           // another period: sent
		ev("other-type", event.RunStuck, "2026-03-07", t0.Add(40*time.Minute)), // another type: sent
		missed("first", "2026-03-07", t0),                                      // the same event again (id and time): never sent twice
		missed("hour-later", "2026-03-07", t0.Add(61*time.Minute)),             // identical, but the window passed since "first": sent
	)
	deliver(t, d)
	deliver(t, dOff)
	wantIDs(t, "with suppression", r.ids(), "first", "other-msg", "other-period", "other-type", "hour-later")
	wantIDs(t, "without suppression", off.ids(), "first", "repeat", "other-msg", "other-period", "other-type", "hour-later")
}

// The default route sends all-clears (SLA_MET, *_RECOVERED, JOB_COMPLETED)
// only for a period it alerted on, and no info chatter.
func TestDefaultRouteSendsAllClearsAfterAProblemOnly(t *testing.T) {
	st := openStore(t, dbPath(t))
	def, explicit := newRecorder("default"), newRecorder("explicit")
	d := newDeliverer(t, st, alert.Options{}, route(def, alert.Match{}), route(explicit, alert.Match{Types: []event.Type{event.SLAMet}}))
	appendEvents(t, st,
		ev("quiet-validated", event.ValidationPassed, "2026-03-06", t0),
		ev("quiet-done", event.JobCompleted, "2026-03-06", t0),
		ev("quiet-met", event.SLAMet, "2026-03-06", t0),
		ev("warn", event.SLAWarning, "2026-03-07", t0),
		ev("dry", event.DryRunWouldTrigger, "2026-03-07", t0),
		ev("done", event.JobCompleted, "2026-03-07", t0),
		ev("met", event.SLAMet, "2026-03-07", t0),
		ev("missed", event.ScheduleMissed, "2026-03-08", t0),
		ev("recovered", event.ScheduleRecovered, "2026-03-08", t0),
	)
	deliver(t, d)
	wantIDs(t, "default route", def.ids(), "warn", "done", "met", "missed", "recovered")
	wantIDs(t, "types: [SLA_MET]", explicit.ids(), "quiet-met", "met")
}

// Three alerts of one period through the Deliverer to the Slack sink: one
// thread. Another period: another thread. After a restart the period's
// next alert still replies in its thread.
func TestSlackThreadsThroughTheDeliverer(t *testing.T) {
	const token = "xoxb-deliverer-test-TOKEN"
	path := dbPath(t)
	st := openStore(t, path)
	fake := slacktest.New(t, token)
	newSlack := func(st store.Store) *slack.Sink {
		s, err := slack.New(slack.Config{Channel: "C0ALERTS", Token: alert.StaticSecret(token), APIURL: fake.APIURL(),
			Threads: alert.StoreThreads{Store: st, Clock: clock.NewVirtual(t0)}})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	d := newDeliverer(t, st, alert.Options{}, route(newSlack(st), alert.Match{}))
	appendEvents(t, st,
		ev("w", event.SLAWarning, "2026-03-07", t0),
		ev("b", event.SLABreach, "2026-03-07", t0.Add(time.Minute)),
		ev("met", event.SLAMet, "2026-03-07", t0.Add(2*time.Minute)),
		ev("next", event.ScheduleMissed, "2026-03-08", t0.Add(3*time.Minute)),
	)
	deliver(t, d)
	st.Close()
	st2 := openStore(t, path)
	d2 := newDeliverer(t, st2, alert.Options{}, route(newSlack(st2), alert.Match{}))
	appendEvents(t, st2, ev("late", event.LateDataArrival, "2026-03-07", t0.Add(4*time.Minute)))
	deliver(t, d2)

	ps := fake.Posts()
	if len(ps) != 5 {
		t.Fatalf("%d posts, want 5: %+v", len(ps), ps)
	}
	if ps[0].ThreadTS != "" || ps[3].ThreadTS != "" {
		t.Errorf("the first alert of each period must start a thread: thread_ts %q, %q", ps[0].ThreadTS, ps[3].ThreadTS)
	}
	for _, i := range []int{1, 2, 4} {
		if ps[i].ThreadTS != ps[0].TS {
			t.Errorf("post %d (%s): thread_ts %q, want %q", i, ps[i].Text, ps[i].ThreadTS, ps[0].TS)
		}
	}
	if ps[3].TS == ps[0].TS {
		t.Error("two periods share a thread")
	}
}

// No secret in an error, a dead letter or a log line, even when the
// destination echoes the token back in its failures.
func TestSecretsStayOutOfLogsAndDeadLetters(t *testing.T) {
	const token = "xoxb-NEVER-SHOW-THIS-0000"
	st := openStore(t, dbPath(t))
	fake := slacktest.New(t, token)
	fake.SetMode(slacktest.ServerError)
	s, err := slack.New(slack.Config{Channel: "C0ALERTS", Token: alert.StaticSecret(token), APIURL: fake.APIURL()})
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	d := newDeliverer(t, st, alert.Options{MaxAttempts: 2, Logger: slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))},
		route(s, all))
	appendEvents(t, st, ev("1", event.JobFailed, "2026-03-07", t0))
	deliver(t, d)
	dls, err := d.DeadLetters(t.Context())
	if err != nil || len(dls) != 1 {
		t.Fatalf("dead letters %+v, %v: want 1", dls, err)
	}
	if !strings.Contains(dls[0].Error, "HTTP 500") || strings.Contains(dls[0].Error, token) {
		t.Errorf("dead letter error %q: want the status, not the token", dls[0].Error)
	}
	if !strings.Contains(logs.String(), "alert dead-lettered") || strings.Contains(logs.String(), token) {
		t.Errorf("logs:\n%s\nwant the dead letter logged, without the token", logs.String())
	}
	if fake.Requests() != 2 {
		t.Errorf("%d requests, want MaxAttempts 2", fake.Requests())
	}
}

func TestSinkNamesMustBeUnique(t *testing.T) {
	st := openStore(t, dbPath(t))
	_, err := alert.NewDeliverer(t.Context(), alert.Options{Store: st, Clock: clock.NewVirtual(t0),
		Routes: []alert.Route{route(newRecorder("x"), all), route(newRecorder("x"), alert.Match{})}})
	if err == nil || !strings.Contains(err.Error(), `sink "x"`) {
		t.Fatalf("err = %v, want the duplicate name refused", err)
	}
}
