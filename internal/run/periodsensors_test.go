package run

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// TestPeriodSensors: a plain key counts for a backfill or rerun of a past
// period only if it belongs to it; per-period keys always; runs started by
// data or ticks, and reruns of the current period, read plain keys as ever.
func TestPeriodSensors(t *testing.T) {
	p := mustPipeline(t, "pipeline: {id: g}\nschedule: {cron: \"0 6 * * *\"}\nvalidation: {rules: [{key: ready, check: exists}]}\njob: {type: glue, config: {jobName: g}}\n")
	day := func(d int) schedule.Period {
		return schedule.Daily(schedule.DateOf(time.Date(2026, 3, d, 12, 0, 0, 0, time.UTC), time.UTC))
	}
	at := func(d, h int) time.Time { return time.Date(2026, 3, d, h, 0, 0, 0, time.UTC) }
	plainToday := map[string]sensor.Record{"ready": {Key: "ready", ReceivedAt: at(10, 5)}}
	plainThen := map[string]sensor.Record{"ready": {Key: "ready", ReceivedAt: at(3, 5)}}
	dated := map[string]sensor.Record{"ready": {Key: "ready", ReceivedAt: at(10, 5), Data: Detail("date", "2026-03-03")}}
	perPeriod := map[string]sensor.Record{"ready": {Key: "ready#2026-03-03", ReceivedAt: at(10, 5)}}
	for _, c := range []struct {
		name    string
		cause   Cause
		sensors map[string]sensor.Record
		start   time.Time
		want    bool
	}{
		{"backfill of last week, today's plain flag", CauseBackfill, plainToday, at(10, 10), false},
		{"rerun of last week, today's plain flag", CauseRerun, plainToday, at(10, 10), false},
		{"backfill, the flag written that day", CauseBackfill, plainThen, at(10, 10), true},
		{"backfill, a plain flag whose date names the period", CauseBackfill, dated, at(10, 10), true},
		{"backfill, the per-period key", CauseBackfill, perPeriod, at(10, 10), true},
		{"rerun asked while the period is current", CauseRerun, plainToday, at(3, 20), true},
		{"a cron run evaluating past midnight", CauseCron, plainToday, at(10, 10), true},
		{"a late sensor-started run", CauseSensor, plainToday, at(10, 10), true},
	} {
		_, got := PeriodSensors(p, day(3), c.cause, c.sensors, c.start)["ready"]
		if got != c.want {
			t.Errorf("%s: counts %v, want %v", c.name, got, c.want)
		}
	}
}
