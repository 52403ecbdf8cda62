package alert_test

import (
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/alert/slack"
	"github.com/interlockhq/interlock/internal/alert/slack/slacktest"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// Delivery state (cursors, threads, sent and alerted markers, dead
// letters) lives under reserved '#' pipeline ids with an empty period:
// the watchdog's snapshot of recent periods never reads it, and no real
// pipeline's markers hold it.
func TestDeliveryStateStaysOutOfPipelineAndPeriodMarkers(t *testing.T) {
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

	recent, err := st.MarkerList(t.Context(), store.MarkerListParams{PeriodFrom: "2000-01-01"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range recent {
		t.Errorf("the watchdog's snapshot would read %+v", m)
	}
	ofPipeline, err := st.MarkerList(t.Context(), store.MarkerListParams{PipelineID: "orders"})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ofPipeline {
		t.Errorf("pipeline orders holds %+v", m)
	}
	everything, err := st.MarkerList(t.Context(), store.MarkerListParams{})
	if err != nil {
		t.Fatal(err)
	}
	if len(everything) == 0 {
		t.Fatal("no delivery state stored")
	}
	for _, m := range everything {
		if !strings.HasPrefix(m.Key.PipelineID, "#alert") || m.Key.Period != "" {
			t.Errorf("marker %+v is outside the reserved namespace", m)
		}
	}
}
