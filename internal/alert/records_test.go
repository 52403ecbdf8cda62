package alert_test

import (
	"testing"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/alert/slack"
	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// Delivery state (cursors, threads, sent and alerted records, dead
// letters) is kept in the store's alert records, read by sink: none of it
// is a marker, so the watchdog's snapshot never reads it and no
// pipeline's markers hold it.
func TestDeliveryStateIsAlertRecordsNotMarkers(t *testing.T) {
	st := openStore(t, dbPath(t))
	fake := slacktest.New(t, "xoxb-markers-test")
	s, err := slack.New(slack.Config{Channel: "C1", Token: alert.StaticSecret("xoxb-markers-test"), APIURL: fake.APIURL(),
		Threads: alert.StoreThreads{Store: st, Clock: clock.NewVirtual(t0)}})
	if err != nil {
		t.Fatal(err)
	}
	dead := newRecorder("dead")
	dead.setFail(func(alert.Alert, int) (bool, error) { return false, errTest })
	d := newDeliverer(t, st, alert.Options{}, route(s, alert.Match{}), route(dead, all))
	appendEvents(t, st, ev("w", event.SLAWarning, "2026-03-07", t0), ev("met", event.SLAMet, "2026-03-07", t0))
	deliver(t, d)
	if len(fake.Posts()) != 2 {
		t.Fatalf("%d posts, want 2", len(fake.Posts()))
	}

	markers, err := st.MarkerList(t.Context(), store.MarkerListParams{})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range markers {
		t.Errorf("delivery left a marker: %+v", m)
	}
	cursors, err := st.DeliveryCursorList(t.Context())
	if err != nil || len(cursors) != 2 || cursors[0].Sink != "dead" || cursors[1].Sink != s.Name() {
		t.Fatalf("delivery cursors %+v, %v; want one per sink", cursors, err)
	}
	period := run.Key{PipelineID: "orders", ScheduleID: "cron", Period: "2026-03-07"}
	if th, err := st.AlertThreadGet(t.Context(), s.Name(), period); err != nil || th.TS == "" || th.Channel == "" {
		t.Errorf("thread of the period: %+v, %v", th, err)
	}
	if a, err := st.AlertAlertedGet(t.Context(), s.Name(), period); err != nil || a.EventID != "w" {
		t.Errorf("alerted record: %+v, %v; want the warning's", a, err)
	}
	if dls, err := st.DeadLetterList(t.Context(), "dead"); err != nil || len(dls) != 2 {
		t.Errorf("dead letters of the failing sink: %+v, %v; want 2", dls, err)
	}
	if dls, err := st.DeadLetterList(t.Context(), s.Name()); err != nil || len(dls) != 0 {
		t.Errorf("dead letters of the working sink: %+v, %v; want none", dls, err)
	}
}
