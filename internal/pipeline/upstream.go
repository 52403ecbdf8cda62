package pipeline

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/rule"
)

// CheckUpstream is the check of an upstream rule in validation.rules:
// `{check: upstream, pipeline: ID}`, with an optional `offset: -1d` or
// `hours: all`. It reads the upstream's runs, not a sensor, so it is not
// a rule.Op: the engine judges it (deps.UpstreamPeriods says which runs).
const CheckUpstream = "upstream"

// Upstream is one upstream rule: the downstream's run for a period waits
// until the upstream's run for each mapped period (deps.UpstreamPeriods)
// has succeeded.
type Upstream struct {
	Pipeline string // the upstream pipeline's id
	// Offset shifts the period, in whole periods of the downstream's
	// kind: -1 for `offset: -1d` on a daily pipeline (yesterday's run)
	// or `offset: -1h` on an hourly one.
	Offset int
	// AllHours (`hours: all`): a daily period waits for every hour of
	// its date (shifted by Offset days) on an hourly upstream.
	AllHours bool
	// Rule is the rule's index in validation.rules, for messages.
	Rule int
}

// ErrCycle is wrapped by the error of a dependency cycle (Cycle).
var ErrCycle = errors.New("upstream cycle")

// Hourly reports whether the pipeline's config makes its periods hours:
// a sub-daily cron, or an ":MM" SLA or trigger deadline (which only make
// sense for hourly periods).
func (p *Pipeline) Hourly() bool {
	if !p.Schedule.Cron.IsZero() && p.Schedule.Cron.SubDaily() {
		return true
	}
	if p.SLA != nil && p.SLA.Deadline.HourlyOnly() {
		return true
	}
	return p.Schedule.Trigger != nil && p.Schedule.Trigger.Deadline.HourlyOnly()
}

// DailyOnly reports whether the pipeline's periods are always days: a
// cron that fires at most once a day, or an inclusion calendar. A
// pipeline that is neither Hourly nor DailyOnly (started by trigger
// sensors or upstreams only) runs the periods its starts name.
func (p *Pipeline) DailyOnly() bool {
	return (!p.Schedule.Cron.IsZero() || p.Schedule.Include != nil) && !p.Hourly()
}

func hasUpstreamRule(v *rawValidation) bool {
	return v != nil && slices.ContainsFunc(v.Rules, func(r rawRule) bool { return r.Check == CheckUpstream })
}

// refuseUpstreamFields reports pipeline, offset and hours on a sensor
// rule: they mean something only to check upstream.
func refuseUpstreamFields(d *confdec.Decoder, path string, r rawRule) {
	for _, f := range []struct{ name, v string }{{"pipeline", r.Pipeline}, {"offset", r.Offset}, {"hours", r.Hours}} {
		if f.v != "" {
			d.ErrorAt(confdec.Join(path, f.name), "only for check upstream (this rule checks sensor data)")
		}
	}
}

// validationRules splits validation.rules into the sensor rules and the
// upstream rules, checking each at its index.
func (b *builder) validationRules(raw []rawRule, p *Pipeline) ([]rule.Rule, []Upstream) {
	path := b.at("validation.rules")
	rules := []rule.Rule{}
	var ups []Upstream
	for i, r := range raw {
		at := confdec.Index(path, i)
		if r.Check != CheckUpstream {
			rules = append(rules, buildRule(b.d, at, r))
			continue
		}
		u, ok := b.upstream(at, i, r, p)
		if !ok {
			continue
		}
		for _, prev := range ups {
			if prev.Pipeline == u.Pipeline && prev.Offset == u.Offset && prev.AllHours == u.AllHours {
				b.d.ErrorAt(at, "repeats validation.rules[%d]", prev.Rule)
				ok = false
			}
		}
		if ok {
			ups = append(ups, u)
		}
	}
	if len(rules) == 0 {
		rules = nil
	}
	return rules, ups
}

var offsetPattern = regexp.MustCompile(`^([+-]?)([0-9]{1,5})([dh])$`)

// Offsets beyond a year are mistakes, not plans (and runs that old are
// past any retention).
const (
	maxOffsetDays  = 366
	maxOffsetHours = 366 * 24
)

// upstream checks one upstream rule at path against its pipeline p (its
// schedule decides which offset unit fits).
func (b *builder) upstream(path string, i int, r rawRule, p *Pipeline) (Upstream, bool) {
	u := Upstream{Pipeline: r.Pipeline, Rule: i}
	ok := true
	bad := func(field, format string, args ...any) {
		b.d.ErrorAt(confdec.Join(path, field), format, args...)
		ok = false
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"key", r.Key != ""}, {"field", r.Field != ""}, {"value", !r.Value.IsNull()}} {
		if f.set {
			bad(f.name, "not used by check upstream (it reads the upstream pipeline's runs, not a sensor)")
		}
	}
	switch {
	case r.Pipeline == "":
		bad("pipeline", "missing required field (the id of the upstream pipeline)")
	case checkID(r.Pipeline) != "":
		bad("pipeline", "%s", checkID(r.Pipeline))
	case r.Pipeline == p.ID:
		bad("pipeline", "a pipeline cannot be its own upstream")
	}
	switch r.Hours {
	case "":
	case "all":
		u.AllHours = true
		if p.Hourly() {
			bad("hours", "hours: all is for a daily pipeline; this one runs hourly periods (each hour waits for the same hour upstream)")
		}
	default:
		bad("hours", "%q: want all (every hour of the day must have succeeded)", r.Hours)
	}
	if r.Offset != "" {
		m := offsetPattern.FindStringSubmatch(r.Offset)
		if m == nil {
			bad("offset", "%q: want a whole number of periods with its unit, such as -1d (days) or -1h (hours)", r.Offset)
			return u, false
		}
		n, _ := strconv.Atoi(m[2]) // the pattern allows digits only
		if m[1] == "-" {
			n = -n
		}
		u.Offset = n
		switch unit := m[3]; {
		case unit == "d" && (n > maxOffsetDays || n < -maxOffsetDays):
			bad("offset", "%q is out of range (want at most %d days either way)", r.Offset, maxOffsetDays)
		case unit == "h" && (n > maxOffsetHours || n < -maxOffsetHours):
			bad("offset", "%q is out of range (want at most %d hours either way)", r.Offset, maxOffsetHours)
		case unit == "h" && u.AllHours:
			bad("offset", "%q: with hours: all the offset counts days (such as -1d)", r.Offset)
		case unit == "d" && p.Hourly():
			bad("offset", "%q: this pipeline runs hourly periods, so the offset counts hours (write %dh)", r.Offset, n*24)
		case unit == "h" && p.DailyOnly():
			bad("offset", "%q: this pipeline runs daily periods, so the offset counts days (such as -1d)", r.Offset)
		}
	}
	return u, ok
}

// UpstreamIDs lists the distinct upstream pipelines of p, sorted.
func (p *Pipeline) UpstreamIDs() []string {
	var ids []string
	for _, u := range p.Upstreams {
		ids = append(ids, u.Pipeline)
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// Cycle finds a dependency cycle among the pipelines (edges from each
// downstream to its upstreams) and returns it as the path that closes
// it, first id repeated last ("a", "b", "a"), in the direction data
// flows (a is b's upstream, b is a's); nil when there is none.
// Upstreams that are not in all are ignored. The search visits ids and
// edges in sorted order, so the same configs always name the same cycle.
func Cycle(all []*Pipeline) []string {
	byID := make(map[string]*Pipeline, len(all))
	ids := make([]string, 0, len(all))
	for _, p := range all {
		if _, dup := byID[p.ID]; !dup {
			ids = append(ids, p.ID)
		}
		byID[p.ID] = p
	}
	slices.Sort(ids)
	const (
		unseen = iota
		onPath
		done
	)
	state := make(map[string]int, len(all))
	var path []string
	var visit func(id string) []string
	visit = func(id string) []string {
		state[id] = onPath
		path = append(path, id)
		for _, up := range byID[id].UpstreamIDs() {
			if _, ok := byID[up]; !ok {
				continue
			}
			switch state[up] {
			case onPath:
				// path runs downstream to upstream; name the cycle in
				// the direction data flows, each pipeline feeding the next.
				c := append(slices.Clone(path[slices.Index(path, up):]), up)
				slices.Reverse(c)
				return c
			case unseen:
				if c := visit(up); c != nil {
					return c
				}
			}
		}
		path = path[:len(path)-1]
		state[id] = done
		return nil
	}
	for _, id := range ids {
		if state[id] == unseen {
			if c := visit(id); c != nil {
				return c
			}
		}
	}
	return nil
}

// CycleError is the config error of a cycle: "upstream cycle: a -> b ->
// a". It wraps ErrCycle.
func CycleError(cycle []string) error {
	return fmt.Errorf("%w: %s (a pipeline cannot wait for itself through its upstreams)", ErrCycle, strings.Join(cycle, " -> "))
}

// CycleThrough is the cycle a config p being loaded closes with the
// pipelines running now (its own running version replaced by p), as
// Cycle names it; nil when none goes through p (none does when p has no
// upstream rule: the engine then reads no running pipeline).
func CycleThrough(p *Pipeline, running []*Pipeline) []string {
	all := []*Pipeline{p}
	for _, q := range running {
		if q.ID != p.ID {
			all = append(all, q)
		}
	}
	if cycle := Cycle(all); slices.Contains(cycle, p.ID) {
		return cycle
	}
	return nil
}
