package watchdog

import (
	"fmt"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
)

// BenchmarkPass10k is one pass over 10,000 pipelines (product spec §8:
// under 1 s): a quarter each daily cron in New York, hourly cron,
// sensor-triggered with an SLA, a trigger deadline and post-run rules,
// and an inclusion calendar; each with the runs, markers and sensors of
// a healthy lookback window (so the pass finds nothing).
func BenchmarkPass10k(b *testing.B) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	docs := []string{
		"schedule: {cron: \"0 6 * * *\", timezone: America/New_York, time: \"07:00\"}\nsla: {deadline: \"10:00\", expectedDuration: 30m}\n",
		"schedule: {cron: \"5 * * * *\"}\nsla: {deadline: \":30\"}\n",
		"schedule: {trigger: {key: up, check: equals, field: status, value: ready, deadline: \"11:00\"}}\nsla: {deadline: \"+1d 02:00\", maxDuration: 4h}\npostRun: {rules: [{key: audit, check: exists}]}\n",
		"schedule: {trigger: {key: up, check: exists}, include: {dates: [2026-03-09, 2026-03-10]}, time: \"09:00\"}\n",
	}
	s := snap(now)
	for i := range 10000 {
		id := fmt.Sprintf("p%05d", i)
		p := parse(b, "pipeline: {id: "+id+"}\n"+docs[i%len(docs)]+job)
		s.Pipelines = append(s.Pipelines, loaded(p))
		sched := p.ScheduleID()
		periods := []string{"2026-03-08", "2026-03-09", "2026-03-10"}
		if run.Hourly(p) {
			periods = nil
			for h := now.Add(-Lookback); !h.After(now); h = h.Add(time.Hour) {
				periods = append(periods, h.Format("2006-01-02T15"))
			}
		}
		for _, per := range periods {
			k := key(id, sched, per)
			s.addRun(run.Run{Key: k, State: run.Completed, Outcome: run.OutcomeSucceeded, EndedAt: now.Add(-time.Hour)})
			s.addMarker(k, run.MarkerFirstArrival, now.Add(-3*time.Hour))
			s.BreachTimers[k] = true
		}
		s.addSensor(id, "up", now.Add(-3*time.Hour), map[string]sensor.Value{"status": str("ready")})
		s.addSensor(id, "audit", now.Add(-30*time.Minute), map[string]sensor.Value{"count": sensor.IntValue(1)})
	}
	b.ResetTimer()
	for b.Loop() {
		res := Pass(s)
		if res.Degraded() || len(res.Findings) > 0 {
			b.Fatalf("failed %v, %d findings (first: %v)", res.Failed, len(res.Findings), got(res.Findings[:min(3, len(res.Findings))]))
		}
	}
}
