package run

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
)

// Hourly reports whether a pipeline's periods are hours rather than days
// when nothing else says: a sub-daily cron, or an ":MM" SLA or trigger
// deadline (which only make sense for hourly periods).
func Hourly(p *pipeline.Pipeline) bool { return p.Hourly() }

// CurrentPeriod is the period of now in the schedule's time zone.
func CurrentPeriod(p *pipeline.Pipeline, now time.Time) schedule.Period {
	return schedule.PeriodAt(now, p.Schedule.Location, Hourly(p))
}

// SensorPeriod is the period a sensor write belongs to: the period in its
// key's suffix ("hourly-status#20260303T07"), else its `date`/`hour`
// fields, else the current period in the schedule's time zone. A
// malformed date or hour, or a key suffix shaped like a period that is
// not one (schedule.PeriodKey), is an error, never a silent fallback.
func SensorPeriod(p *pipeline.Pipeline, key string, data sensor.Object, now time.Time) (schedule.Period, error) {
	per, _, err := sensorPeriod(p, key, data, now)
	return per, err
}

// sensorPeriod also says where the period came from, in the writer's
// terms, for the messages of SensorWritePeriod.
func sensorPeriod(p *pipeline.Pipeline, key string, data sensor.Object, now time.Time) (schedule.Period, string, error) {
	per, from, err := namedPeriod(p, key, data, now)
	if err == nil && per.Hourly && DailyOnly(p) {
		per = schedule.Daily(per.Date) // a daily cron runs days, whatever hour the data names
	}
	return per, from, err
}

func namedPeriod(p *pipeline.Pipeline, key string, data sensor.Object, now time.Time) (schedule.Period, string, error) {
	if _, per, named, err := schedule.PeriodKey(key); named || err != nil {
		return per, "key suffix " + key[strings.LastIndexByte(key, '#'):], err
	}
	from := `field "date"`
	if _, ok := data.Get("date"); !ok {
		from = "the current period"
	}
	per, err := schedule.PeriodFromSensor(data, CurrentPeriod(p, now))
	return per, from, err
}

// DailyOnly reports whether a pipeline's periods are always days: it has
// a cron that fires at most once a day, or an inclusion calendar (a
// trigger-only pipeline may run hourly periods named by its sensors).
func DailyOnly(p *pipeline.Pipeline) bool { return p.DailyOnly() }

// PeriodKinds is which kinds of period a pipeline runs, and what says so.
type PeriodKinds struct {
	Days, Hours bool
	Why         string // completes "pipeline X runs daily periods: …"
}

// KindsOfPeriod says which kinds of period a pipeline runs. Its config
// decides when it can: a cron that fires more than once a day, or a
// ":MM" SLA or trigger deadline, makes hours; a cron that fires at most
// once a day, or an inclusion calendar, makes days. A trigger-only
// pipeline runs the periods its trigger sensors name (SensorPeriod): it
// runs hours when one of its stored trigger sensors names an hour, and
// days when one names a date or no period at all (its period is then
// today's date) — both when both happen. With no trigger sensor stored
// yet it runs days, the period of a sensor that names none. stored is the
// pipeline's sensors (any order; the others are ignored).
func KindsOfPeriod(p *pipeline.Pipeline, stored []sensor.Record) PeriodKinds {
	switch {
	case !p.Schedule.Cron.IsZero() && p.Schedule.Cron.SubDaily():
		return PeriodKinds{Hours: true, Why: "its cron fires more than once a day"}
	case Hourly(p):
		return PeriodKinds{Hours: true, Why: `it has a ":MM" deadline, which counts from the end of each hour`}
	case !p.Schedule.Cron.IsZero():
		return PeriodKinds{Days: true, Why: "its cron fires at most once a day"}
	case p.Schedule.Include != nil:
		return PeriodKinds{Days: true, Why: "it runs on the dates of its inclusion calendar"}
	}
	var k PeriodKinds
	for _, r := range stored {
		if !MatchesTrigger(p, r.Key) {
			continue
		}
		per, err := SensorPeriod(p, r.Key, r.Data, r.ReceivedAt)
		if err != nil {
			continue
		}
		if per.Hourly {
			k.Hours = true
		} else {
			k.Days = true
		}
	}
	switch {
	case k.Days && k.Hours:
		k.Why = "its trigger sensors name both dates and hours"
	case k.Hours:
		k.Why = "its trigger sensors name hours, none a date"
	case k.Days:
		k.Why = "its trigger sensors name dates, none an hour"
	default:
		k.Days = true
		k.Why = "none of its trigger sensors has named an hour yet"
	}
	return k
}

// CheckRerunPeriod refuses a rerun of a period the pipeline never runs
// (one of the wrong kind, see KindsOfPeriod: an hour of a daily pipeline,
// a date of an hourly one), that has not started yet, or that is before
// EarliestPeriod. stored is the pipeline's stored sensors, which decide
// the kinds of a trigger-only pipeline.
func CheckRerunPeriod(p *pipeline.Pipeline, per schedule.Period, now time.Time, stored []sensor.Record) error {
	if per.Date.Before(EarliestPeriod) {
		return fmt.Errorf("period %s is before %s, the earliest period Interlock runs", per, EarliestPeriod)
	}
	switch k := KindsOfPeriod(p, stored); {
	case per.Hourly && !k.Hours:
		return fmt.Errorf("%s is an hour, but pipeline %s runs daily periods (YYYY-MM-DD): %s", per, p.ID, k.Why)
	case !per.Hourly && !k.Days:
		return fmt.Errorf("%s is a date, but pipeline %s runs hourly periods (YYYY-MM-DDTHH): %s", per, p.ID, k.Why)
	}
	if per.Start(p.Schedule.Location).After(now) {
		return fmt.Errorf("period %s has not started yet", per)
	}
	return nil
}

// Excluded reports whether the period's date is excluded by the pipeline's
// calendar (judged on the period's date, which is in the schedule's zone).
func Excluded(p *pipeline.Pipeline, per schedule.Period) bool {
	return p.Schedule.Exclude.Days.Contains(per.Date)
}

// ExcludedBy names the rules of schedule.exclude that exclude the period's
// date: "weekends", "days", "dates", "calendar NAME" (none when it is not
// excluded). A named calendar is merged with the inline lists when the
// pipeline loads, so it is named when no inline rule explains the date.
func ExcludedBy(p *pipeline.Pipeline, per schedule.Period) []string {
	ex := p.Schedule.Exclude
	d := per.Date
	if !ex.Days.Contains(d) {
		return nil
	}
	wd := d.Weekday()
	var by []string
	if ex.Weekends && (wd == time.Saturday || wd == time.Sunday) {
		by = append(by, "weekends")
	}
	if slices.Contains(ex.Weekdays, wd) {
		by = append(by, "days")
	}
	if slices.Contains(ex.Dates, d) {
		by = append(by, "dates")
	}
	if len(by) == 0 {
		by = append(by, "calendar "+ex.Calendar)
	}
	return by
}

// ExclusionReason says why the period's date is excluded, naming the
// rule — "2026-03-14 (Saturday) is excluded as a weekend
// (exclude.weekends)" — or "" when it is not excluded.
func ExclusionReason(p *pipeline.Pipeline, per schedule.Period) string {
	by := ExcludedBy(p, per)
	if len(by) == 0 {
		return ""
	}
	wd := per.Date.Weekday()
	phrases := make([]string, len(by))
	for i, rule := range by {
		switch rule {
		case "weekends":
			phrases[i] = "as a weekend (exclude.weekends)"
		case "days":
			phrases[i] = "on " + wd.String() + "s (exclude.days)"
		case "dates":
			phrases[i] = "by date (exclude.dates)"
		default:
			phrases[i] = "by " + rule + " (exclude.calendar)"
		}
	}
	return fmt.Sprintf("%s (%s) is excluded %s", per.Date, wd, strings.Join(phrases, " and "))
}

// MatchesTrigger reports whether a sensor key is a trigger key of the
// pipeline (see KeyHasPrefix: "hourly-status" matches
// "hourly-status#20260303T07" and "hourly-status-v2", not
// "hourly-status#eu").
func MatchesTrigger(p *pipeline.Pipeline, key string) bool {
	t := p.Schedule.Trigger
	return t != nil && KeyHasPrefix(key, t.Rule.Key)
}

// MatchesPostRun returns the first post-run rule key that is a prefix of
// key (KeyHasPrefix).
func MatchesPostRun(p *pipeline.Pipeline, key string) (string, bool) {
	if p.PostRun == nil {
		return "", false
	}
	for _, r := range p.PostRun.Rules {
		if KeyHasPrefix(key, r.Key) {
			return r.Key, true
		}
	}
	return "", false
}

// KeyHasPrefix is how trigger and post-run rule keys, which are prefixes,
// match sensor keys: the key without its period suffix (a valid period
// after its last '#', schedule.SplitPeriodKey) must start with prefix, and
// the rest of it may not hold a '#'. So "orders" matches "orders",
// "orders-v2", "orders#2026-03-10" and "orders-v2#20260310T07", but not
// "orders#eu" nor "orders#2026-11-25T05:00" (a suffix that is no period
// is part of a plain key, which the prefix does not reach across its
// '#'), and "orders#eu" matches "orders#eu#2026-03-10". An empty prefix
// matches nothing.
func KeyHasPrefix(key, prefix string) bool {
	if prefix == "" {
		return false
	}
	if base, _, ok := schedule.SplitPeriodKey(key); ok {
		key = base
	}
	rest, ok := strings.CutPrefix(key, prefix)
	return ok && !strings.Contains(rest, "#")
}

// PeriodExists reports whether a period has any length in the schedule's
// zone: the hour skipped when clocks spring forward does not, and nothing
// is expected of it (no SLA, no trigger deadline).
func PeriodExists(p *pipeline.Pipeline, per schedule.Period) bool {
	loc := p.Schedule.Location
	return per.End(loc).After(per.Start(loc))
}

// NewData reports whether a sensor write is new data: nothing was stored
// under the key, the content differs, or the same content now belongs to
// another period (a daily {"status": "ready"} must start each day). An
// identical re-write for the same period is not new data: a re-delivered,
// already processed partition must start nothing (product spec §3 item 5).
func NewData(p *pipeline.Pipeline, key string, stored *sensor.Record, data sensor.Object, per schedule.Period) bool {
	if stored == nil || !stored.Data.Equal(data) {
		return true
	}
	storedPer, err := SensorPeriod(p, key, stored.Data, stored.ReceivedAt)
	return err == nil && storedPer != per
}

// OtherSchedule is the schedule id a period's run has when the pipeline's
// cron was added or removed since: runs are keyed "cron" with a cron and
// "stream" without one, and a reload must not make a period that already
// ran look as if it never did.
func OtherSchedule(k Key) Key {
	switch k.ScheduleID {
	case pipeline.ScheduleCron:
		k.ScheduleID = pipeline.ScheduleStream
	case pipeline.ScheduleStream:
		k.ScheduleID = pipeline.ScheduleCron
	}
	return k
}
