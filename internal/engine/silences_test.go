package engine_test

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
)

// TestSilenceEndAlertsOnceAcrossReplays: the alert sent when a silence
// ends is committed with a marker, so a second firing of the end timer —
// a replica that read it too, a process that died after the alert and
// before removing the timer — sends nothing more, across a restart too.
func TestSilenceEndAlertsOnceAcrossReplays(t *testing.T) {
	f := newFixture(t)
	if _, err := f.eng.ApplyConfig(t.Context(), "gold.yaml", []byte(`
pipeline: {id: gold}
schedule:
  trigger: {key: gold-landed, check: exists}
validation:
  rules: [{key: gold-landed, check: exists}]
sla: {deadline: "10:00", expectedDuration: 30m}
job: {type: glue, config: {jobName: gold}}
`)); err != nil {
		t.Fatal(err)
	}
	s, err := f.eng.CreateSilence(t.Context(), engine.SilenceRequest{Matchers: silence.Matchers{Pipelines: []string{"gold"}}, Duration: 3 * time.Hour, By: "test"})
	if err != nil {
		t.Fatal(err)
	}
	afterSilence := func() int {
		n := 0
		for _, e := range f.events(t, event.SLABreach) {
			if v, ok := e.Detail.Get("afterSilence"); ok && v.String() == "true" {
				n++
			}
		}
		return n
	}
	for _, at := range []time.Duration{90 * time.Minute, 2 * time.Hour, 3 * time.Hour} { // 09:30, 10:00 silenced; 11:00 the end
		f.clk.Set(t0.Add(at))
		if _, err := f.eng.WatchdogPass(t.Context(), time.Hour); err != nil {
			t.Fatal(err)
		}
		if _, err := f.eng.RunDue(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(f.events(t, event.SLABreach)); n != 2 {
		t.Fatalf("%d SLA_BREACH, want the silenced one and the one after the silence", n)
	}
	if n := afterSilence(); n != 1 {
		t.Fatalf("%d SLA_BREACH after the silence, want 1", n)
	}
	// The end timer fires again, after a restart.
	end := s.End()
	if err := f.st.Commit(t.Context(), store.Change{Timers: []store.TimerWrite{{Timer: store.Timer{Key: "silence-end/" + s.ID, Kind: "silence-end", DueAt: end}}}}); err != nil {
		t.Fatal(err)
	}
	f.open(t)
	if _, err := f.eng.RunDue(t.Context()); err != nil {
		t.Fatal(err)
	}
	if n := afterSilence(); n != 1 {
		t.Fatalf("%d SLA_BREACH after the end timer fired twice, want 1", n)
	}
	if _, err := f.st.TimerGet(t.Context(), "silence-end/"+s.ID); err == nil {
		t.Fatal("the end timer is still armed")
	}
}
