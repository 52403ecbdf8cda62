package schedule

import (
	"fmt"
	"math/bits"
	"strings"
	"time"

	robfig "github.com/robfig/cron/v3"
)

// Cron is a parsed cron schedule: five fields (minute, hour, day of month,
// month, day of week) or a descriptor (@hourly, @daily/@midnight, @weekly,
// @monthly, @yearly/@annually). It has no seconds field and no time zone of
// its own; the zone is the schedule's, passed to each method.
//
// Parsing is delegated to github.com/robfig/cron/v3; nothing else in the
// module imports it. Its Next is not used: it skips a daily tick whose time
// falls in a spring-forward gap (02:30 New York on 2026-03-08 fires on
// 03-09 instead) and fires a daily tick twice in a fall-back overlap. Tick
// arithmetic here works on wall-clock readings instead; see Next.
type Cron struct {
	expr string
	// Bit i set means value i matches. Days of month and week keep
	// whether the field was "*" (or "?"), because standard cron matches a
	// day when either restricted field matches, but requires both when one
	// of them is unrestricted.
	minute, hour, dom, month, dow uint64
	domStar, dowStar              bool
}

// robfig marks "*" fields with this bit in its bit sets.
const robfigStar = uint64(1) << 63

var cronDescriptors = map[string]bool{
	"@hourly": true, "@daily": true, "@midnight": true, "@weekly": true,
	"@monthly": true, "@yearly": true, "@annually": true,
}

var cronFieldNames = [5]string{"minute", "hour", "day-of-month", "month", "day-of-week"}

// ParseCron reads a cron expression. Errors say which field is wrong and
// why. A schedule that can never fire ("0 0 31 2 *") is an error: in a
// safety controller a schedule that silently never runs is a broken one.
func ParseCron(expr string) (Cron, error) {
	fail := func(format string, args ...any) (Cron, error) {
		return Cron{}, fmt.Errorf("%w: cron %q: %s", ErrSyntax, expr, fmt.Sprintf(format, args...))
	}
	fields := strings.Fields(expr)
	if len(fields) == 0 {
		return fail("empty expression")
	}
	if strings.HasPrefix(fields[0], "TZ=") || strings.HasPrefix(fields[0], "CRON_TZ=") {
		return fail("a time zone prefix is not allowed; set schedule.timezone instead")
	}
	var canonical string
	if strings.HasPrefix(fields[0], "@") {
		d := strings.ToLower(fields[0])
		switch {
		case d == "@every":
			return fail("@every is not supported; write a 5-field cron expression")
		case !cronDescriptors[d]:
			return fail("unknown descriptor %s (want @hourly, @daily, @weekly, @monthly or @yearly)", fields[0])
		case len(fields) > 1:
			return fail("unexpected text after %s", fields[0])
		}
		canonical = d
	} else {
		switch n := len(fields); {
		case n == 6:
			return fail("6 fields: a seconds field is not supported; want minute hour day-of-month month day-of-week")
		case n != 5:
			return fail("%d fields: want 5 (minute hour day-of-month month day-of-week)", n)
		}
		for i, f := range fields {
			if err := checkCronField(i, f); err != nil {
				return fail("%s", err)
			}
		}
		canonical = strings.Join(fields, " ")
	}
	spec, err := parseRobfig(canonical)
	if err != nil {
		return fail("%v", err)
	}
	c := Cron{
		expr:    canonical,
		minute:  spec.Minute &^ robfigStar,
		hour:    spec.Hour &^ robfigStar,
		dom:     spec.Dom &^ robfigStar,
		month:   spec.Month &^ robfigStar,
		dow:     spec.Dow &^ robfigStar,
		domStar: spec.Dom&robfigStar != 0,
		dowStar: spec.Dow&robfigStar != 0,
	}
	if !c.canFire() {
		return fail("no date matches the day-of-month and month fields")
	}
	return c, nil
}

// checkCronField parses one field on its own, the others unrestricted, so
// an error can name the field; robfig's messages name only the text.
func checkCronField(i int, f string) error {
	probe := []string{"*", "*", "*", "*", "*"}
	probe[i] = f
	spec, err := parseRobfig(strings.Join(probe, " "))
	if err != nil {
		hint := ""
		if i == 4 {
			hint = " (days of the week are 0–6 or sun–sat, Sunday is 0)"
		}
		return fmt.Errorf("%s field %q: %v%s", cronFieldNames[i], f, err, hint)
	}
	got := [5]uint64{spec.Minute, spec.Hour, spec.Dom, spec.Month, spec.Dow}[i]
	if got&^robfigStar == 0 {
		return fmt.Errorf("%s field %q matches no value", cronFieldNames[i], f)
	}
	return nil
}

// parseRobfig calls the library defensively. Its parser has panicked on
// malformed input before ("TZ=UTC" without a space slices out of range, and
// that prefix is refused above); a panic here would take a config loader
// down with it, so it is turned into an error.
func parseRobfig(s string) (spec *robfig.SpecSchedule, err error) {
	defer func() {
		if r := recover(); r != nil {
			spec, err = nil, fmt.Errorf("unparseable: %v", r)
		}
	}()
	sched, err := robfig.ParseStandard(s)
	if err != nil {
		return nil, err
	}
	spec, ok := sched.(*robfig.SpecSchedule)
	if !ok || spec.Second != 1 {
		return nil, fmt.Errorf("not a minute-resolution schedule")
	}
	return spec, nil
}

// canFire reports whether some real date matches. Only one combination
// can fail: day of week unrestricted, so every listed day of month must be
// checked against the listed months' lengths (February counting its leap
// day, which recurs at most eight years apart).
func (c Cron) canFire() bool {
	if c.minute == 0 || c.hour == 0 || c.month == 0 || c.dom == 0 || c.dow == 0 {
		return false
	}
	if !c.dowStar || c.domStar {
		return true
	}
	for m := time.January; m <= time.December; m++ {
		if c.month&(1<<uint(m)) == 0 {
			continue
		}
		last := daysIn(2028, m) // a leap year
		if c.dom&(uint64(1)<<uint(last+1)-1) != 0 {
			return true
		}
	}
	return false
}

// String is the expression as parsed, whitespace normalised and
// descriptors lower-cased; ParseCron(c.String()) gives c back.
func (c Cron) String() string { return c.expr }

// IsZero reports whether c is the zero Cron, which never fires.
func (c Cron) IsZero() bool { return c.expr == "" }

// SubDaily reports whether c can fire more than once on a local date, in
// which case its runs are for hourly periods. Extra ticks caused only by a
// daylight saving change do not count.
func (c Cron) SubDaily() bool {
	return bits.OnesCount64(c.minute)*bits.OnesCount64(c.hour) > 1
}

// everyHour reports whether c fires in every hour of the day. Such a cron
// is about elapsed time ("every 15 minutes"), so, like Vixie cron's
// wildcard jobs, it also fires in the second pass of a repeated hour;
// fixed-time crons fire only in the first.
func (c Cron) everyHour() bool { return c.hour == 1<<24-1 }

// PeriodOf is the period a tick starts a run for: the tick's date in loc,
// or its hour for a sub-daily cron. Both passes through a repeated hour
// map to the same hourly period, so the second tick finds the run the
// first one started.
func (c Cron) PeriodOf(tick time.Time, loc *time.Location) Period {
	return PeriodAt(tick, loc, c.SubDaily())
}

func (c Cron) dayMatches(d Date) bool {
	if c.month&(1<<uint(d.Month)) == 0 {
		return false
	}
	domOK := c.dom&(1<<uint(d.Day)) != 0
	dowOK := c.dow&(1<<uint(d.Weekday())) != 0
	if c.domStar || c.dowStar {
		return domOK && dowOK
	}
	return domOK || dowOK
}
