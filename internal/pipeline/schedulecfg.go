package pipeline

import (
	"maps"
	"slices"
	"time"

	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/schedule"
)

const (
	defaultWindow   = time.Hour
	defaultInterval = 5 * time.Minute
)

func (b *builder) schedule(raw *rawSchedule) Schedule {
	s := Schedule{Location: time.UTC, Evaluation: Evaluation{Window: defaultWindow, Interval: defaultInterval}}
	if raw == nil {
		if !b.failed("schedule") && !b.startedByUpstream {
			b.errorf("schedule", "missing: a pipeline needs schedule.cron or schedule.trigger, or it never runs")
		}
		return s
	}
	s.Location = b.location("schedule.timezone", raw.Timezone)
	if raw.Cron != "" {
		c, err := schedule.ParseCron(raw.Cron)
		if err != nil {
			b.errorf("schedule.cron", "%s", syntaxMsg(err))
		}
		s.Cron = c
	}
	if raw.Time != "" {
		t, err := schedule.ParseClockTime(raw.Time)
		if err != nil {
			b.errorf("schedule.time", "%s", syntaxMsg(err))
		} else {
			s.Time = &t
		}
	}
	if raw.Trigger != nil {
		s.Trigger = &Trigger{Rule: buildRule(b.d, b.at("schedule.trigger"), raw.Trigger.rawRule)}
		s.Trigger.Deadline = b.deadline("schedule.trigger.deadline", raw.Trigger.Deadline, raw)
	}
	s.Evaluation = b.evaluation(raw.Evaluation)
	s.Include = b.include(raw)
	s.Exclude = b.exclude(raw.Exclude)

	// Only cron ticks and trigger sensors start runs; schedule.include
	// says on which dates a trigger is expected (the watchdog's
	// IRREGULAR_SCHEDULE_MISSED), so on its own it would never run.
	// An upstream rule starts runs too: the upstream's success is the
	// downstream's trigger (docs/dependencies.md).
	hasAny := raw.Cron != "" || raw.Trigger != nil || b.startedByUpstream
	// A key that failed to decode was reported already; null is absent.
	if !hasAny && !b.failed("schedule.cron") && !b.failed("schedule.trigger") {
		if raw.Include != nil {
			b.errorf("schedule", "needs a trigger: schedule.include only says on which dates trigger data is expected; add schedule.trigger, or the pipeline never runs")
		} else {
			b.errorf("schedule", "needs cron or trigger, or the pipeline never runs")
		}
	}
	return s
}

// periodsAreDaily reports whether every period of the pipeline is a day:
// a cron that fires at most once a day, or an inclusion calendar. A
// trigger-only pipeline may have hourly periods (the sensor's hour field
// decides), so it is not daily.
func periodsAreDaily(raw *rawSchedule, c schedule.Cron) bool {
	return (raw.Cron != "" && !c.IsZero() && !c.SubDaily()) || raw.Include != nil
}

// deadline parses an SLA or trigger deadline. A ":MM" deadline counts
// from the end of the period's hour, so it needs hourly periods.
func (b *builder) deadline(field, text string, raw *rawSchedule) schedule.Deadline {
	if text == "" {
		return schedule.Deadline{}
	}
	dl, err := schedule.ParseDeadline(text)
	if err != nil {
		b.errorf(field, "%s", syntaxMsg(err))
		return schedule.Deadline{}
	}
	if dl.HourlyOnly() && raw != nil {
		var c schedule.Cron
		if raw.Cron != "" {
			c, _ = schedule.ParseCron(raw.Cron)
		}
		if periodsAreDaily(raw, c) {
			b.errorf(field, "%q is an hourly deadline (minutes after the period's hour) but this pipeline's periods are days; use \"HH:MM\" or \"+Nd HH:MM\"", text)
		}
	}
	return dl
}

func (b *builder) evaluation(raw *rawEvaluation) Evaluation {
	e := Evaluation{Window: defaultWindow, Interval: defaultInterval}
	if raw == nil {
		return e
	}
	b.optDuration("schedule.evaluation.window", raw.Window, &e.Window, time.Minute, maxLongDuration)
	b.optDuration("schedule.evaluation.interval", raw.Interval, &e.Interval, time.Second, maxLongDuration)
	if e.Interval > e.Window && e.Interval >= time.Second && e.Window >= time.Minute {
		field := "schedule.evaluation.interval"
		if raw.Interval == nil {
			field = "schedule.evaluation.window"
		}
		b.errorf(field, "interval %s is longer than window %s: the rules would be checked once at most", e.Interval, e.Window)
	}
	return e
}

// dates parses a list of YYYY-MM-DD dates.
func (b *builder) dates(field string, raw []string) []schedule.Date {
	return parseEach(b, field, raw, schedule.ParseDate, make([]schedule.Date, 0, len(raw)))
}

// parseEach parses each item of the list field with parse, reports the
// ones that do not parse at their index, and appends the others to out.
func parseEach[T any](b *builder, field string, raw []string, parse func(string) (T, error), out []T) []T {
	for i, s := range raw {
		v, err := parse(s)
		if err != nil {
			b.d.ErrorAt(confdec.Index(b.at(field), i), "%s", syntaxMsg(err))
			continue
		}
		out = append(out, v)
	}
	return out
}

// calendar looks a named calendar up in Options.Calendars.
func (b *builder) calendar(field, name string) []schedule.Calendar {
	if name == "" {
		return nil
	}
	c, ok := b.opt.Calendars[name]
	if !ok {
		known := slices.Sorted(maps.Keys(b.opt.Calendars))
		if len(known) == 0 {
			b.errorf(field, "unknown calendar %q (no calendars are loaded)", name)
		} else {
			b.errorf(field, "%s", confdec.Unknown("calendar", name, known))
		}
		return nil
	}
	return []schedule.Calendar{c}
}

func (b *builder) include(raw *rawSchedule) *Include {
	in := raw.Include
	if in == nil {
		return nil
	}
	if raw.Cron != "" {
		b.errorf("schedule.include", "cannot be combined with schedule.cron: a pipeline runs on cron ticks or on inclusion dates, not both")
	}
	if len(in.Dates) == 0 && in.Calendar == "" {
		b.errorf("schedule.include", "needs dates or a calendar")
	}
	out := &Include{Dates: b.dates("schedule.include.dates", in.Dates), Calendar: in.Calendar}
	out.Days = schedule.NewDaySet(nil, out.Dates, b.calendar("schedule.include.calendar", in.Calendar)...)
	return out
}

func (b *builder) exclude(raw *rawExclude) Exclude {
	if raw == nil {
		return Exclude{}
	}
	ex := Exclude{Weekends: raw.Weekends, Calendar: raw.Calendar, Dates: b.dates("schedule.exclude.dates", raw.Dates)}
	ex.Weekdays = parseEach(b, "schedule.exclude.days", raw.Days, schedule.ParseWeekday, nil)
	days := slices.Clone(ex.Weekdays)
	if ex.Weekends {
		days = append(days, schedule.Weekends()...)
	}
	ex.Days = schedule.NewDaySet(days, ex.Dates, b.calendar("schedule.exclude.calendar", raw.Calendar)...)
	return ex
}

// maxRelativeSLA keeps the reference's bound on sla.maxDuration.
const maxRelativeSLA = 24 * time.Hour

func (b *builder) sla(raw *rawSLA, sched *rawSchedule, p *Pipeline) *SLA {
	if raw == nil {
		return nil
	}
	s := &SLA{Location: p.Schedule.Location, Critical: raw.Critical}
	if raw.Timezone != "" {
		s.Location = b.location("sla.timezone", raw.Timezone)
	}
	s.Deadline = b.deadline("sla.deadline", raw.Deadline, sched)
	b.optDuration("sla.expectedDuration", raw.ExpectedDuration, &s.ExpectedDuration, time.Second, maxLongDuration)
	if raw.MaxDuration != nil {
		s.MaxDuration = *raw.MaxDuration
		b.durationIn("sla.maxDuration", s.MaxDuration, time.Minute, maxRelativeSLA)
		if p.Schedule.Trigger == nil && !b.failed("schedule.trigger") {
			b.errorf("sla.maxDuration", "needs schedule.trigger: it counts from the first trigger-sensor arrival")
		}
	}
	if raw.Deadline == "" && raw.MaxDuration == nil && !b.failed("sla.deadline") && !b.failed("sla.maxDuration") {
		b.errorf("sla", "needs deadline or maxDuration")
	}
	return s
}
