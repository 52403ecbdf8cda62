package simulate

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/scenario"
)

// Check is the verdict on one expectation.
type Check struct {
	Matcher scenario.Matcher // Line only, for a Refusal
	Absent  bool             // from expect.absent: must match nothing
	Refusal bool             // a timeline action marked refused: true
	// Order is the sequence of an expect.order check (Matcher is its
	// first): each matcher's first event comes after the previous one's.
	Order   []scenario.Matcher
	Matched int
	OK      bool
	Why     string
}

// Verify evaluates expectations against the events of a simulation in
// which nothing was silenced.
func Verify(exp scenario.Expect, evs []event.Event) []Check {
	return VerifySilenced(exp, evs, nil)
}

// VerifySilenced evaluates expectations against the events of a
// simulation; silenced maps the ids of silenced events to what silenced
// them (Result.Silenced).
func VerifySilenced(exp scenario.Expect, evs []event.Event, silenced map[string]string) []Check {
	count := func(m scenario.Matcher, evs []event.Event) int {
		n := 0
		for _, e := range evs {
			if MatchesSilenced(m, e, silenced[e.ID]) {
				n++
			}
		}
		return n
	}
	var out []Check
	for _, m := range exp.Events {
		n := count(m, evs)
		c := Check{Matcher: m, Matched: n}
		switch {
		case m.Count != nil:
			c.OK = n == *m.Count
			c.Why = fmt.Sprintf("matched %d, want exactly %d", n, *m.Count)
		default:
			c.OK = n > 0
			c.Why = fmt.Sprintf("matched %d, want at least 1", n)
		}
		out = append(out, c)
	}
	for _, m := range exp.Absent {
		n := count(m, evs)
		out = append(out, Check{Matcher: m, Absent: true, Matched: n, OK: n == 0, Why: fmt.Sprintf("matched %d, want none", n)})
	}
	for _, seq := range exp.Order {
		out = append(out, orderCheck(seq, evs, silenced))
	}
	return out
}

// orderCheck judges one expect.order sequence: the first event each
// matcher matches, by its place in the log, after the previous one's.
func orderCheck(seq []scenario.Matcher, evs []event.Event, silenced map[string]string) Check {
	c := Check{Matcher: seq[0], Order: seq, OK: true}
	var places []string
	prev := -1
	for _, m := range seq {
		at := -1
		for i, e := range evs {
			if MatchesSilenced(m, e, silenced[e.ID]) {
				at = i
				break
			}
		}
		if at < 0 {
			c.OK = false
			places = append(places, Describe(m)+" never")
			continue
		}
		c.Matched++
		places = append(places, fmt.Sprintf("%s #%d at %s", Describe(m), at+1, evs[at].Time.UTC().Format(time.RFC3339)))
		if at <= prev {
			c.OK = false
		}
		prev = max(prev, at)
	}
	c.Why = strings.Join(places, ", ")
	if !c.OK {
		c.Why += ": want them in this order"
	}
	return c
}

// Matches reports whether an event nothing silenced satisfies a matcher.
func Matches(m scenario.Matcher, e event.Event) bool { return MatchesSilenced(m, e, "") }

// MatchesSilenced reports whether an event satisfies a matcher;
// silencedBy is what silenced it ("": nothing).
func MatchesSilenced(m scenario.Matcher, e event.Event, silencedBy string) bool {
	if m.Silenced != nil && *m.Silenced != (silencedBy != "") {
		return false
	}
	// Paged: what Paged says, and not silenced.
	if m.Paged != nil && *m.Paged != (Paged(e) && silencedBy == "") {
		return false
	}
	if e.Type != m.Type {
		return false
	}
	if m.Pipeline != "" && e.PipelineID != m.Pipeline {
		return false
	}
	if m.Schedule != "" && e.ScheduleID != m.Schedule {
		return false
	}
	if m.Date != "" && e.Date != m.Date {
		return false
	}
	if m.After != nil && e.Time.Before(*m.After) {
		return false
	}
	if m.Before != nil && e.Time.After(*m.Before) {
		return false
	}
	for k, want := range m.Detail {
		got, ok := e.Detail.Get(k)
		if !ok || !got.Equal(want) {
			return false
		}
	}
	if m.BlockedBy != "" {
		if b, ok := deps.BlockedByOf(e); !ok || b.PipelineID != m.BlockedBy {
			return false
		}
	}
	if m.Message != "" {
		n := strings.Count(e.Message, m.Message)
		if m.MessageTimes != nil && n != *m.MessageTimes || m.MessageTimes == nil && n == 0 {
			return false
		}
	}
	return true
}

// Mark is what the timeline prints after an event's message: the root
// it is blocked by (docs/root-cause.md), or nothing.
func Mark(e event.Event) string {
	if b, ok := deps.BlockedByOf(e); ok {
		return fmt.Sprintf("  [blocked by %s %s: %s]", b.PipelineID, b.Date, b.Reason)
	}
	return ""
}

// Paged reports whether a default alert route pages e on its own: a
// warning or an error, not an all-clear, and not blocked by an upstream
// root (listed under the root's alert instead).
func Paged(e event.Event) bool {
	if lv := e.Level(); lv != event.LevelWarning && lv != event.LevelError {
		return false
	}
	_, blocked := deps.BlockedByOf(e)
	return !alert.IsAllClear(e.Type) && !blocked
}

// Kind names where the expectation comes from: "events", "absent", or
// "refused" (a timeline action marked refused: true).
func (c Check) Kind() string {
	switch {
	case c.Order != nil:
		return "order"
	case c.Refusal:
		return "refused"
	case c.Absent:
		return "absent"
	}
	return "events"
}

// What renders the expectation for people.
func (c Check) What() string {
	if c.Refusal {
		return fmt.Sprintf("timeline line %d is refused", c.Matcher.Line)
	}
	if c.Order != nil {
		parts := make([]string, len(c.Order))
		for i, m := range c.Order {
			parts[i] = Describe(m)
		}
		return strings.Join(parts, " then ")
	}
	return Describe(c.Matcher)
}

// refusals checks the timeline actions marked refused: true against the
// actions the engine refused.
func refusals(timeline []scenario.Action, refused []ActionError) []Check {
	got := map[int]bool{}
	for _, a := range refused {
		got[a.Line] = true
	}
	var out []Check
	for _, a := range timeline {
		if !a.Refused {
			continue
		}
		c := Check{Matcher: scenario.Matcher{Line: a.Line}, Refusal: true, OK: got[a.Line], Why: "refused, as expected"}
		if c.OK {
			c.Matched = 1
		} else {
			c.Why = "accepted, want refused"
		}
		out = append(out, c)
	}
	return out
}

// Describe renders a matcher for people.
func Describe(m scenario.Matcher) string {
	parts := []string{string(m.Type)}
	add := func(k, v string) {
		if v != "" {
			parts = append(parts, k+"="+v)
		}
	}
	add("pipeline", m.Pipeline)
	add("schedule", m.Schedule)
	add("date", m.Date)
	if m.After != nil {
		add("after", m.After.UTC().Format(time.RFC3339))
	}
	if m.Before != nil {
		add("before", m.Before.UTC().Format(time.RFC3339))
	}
	for k, v := range m.Detail {
		add("detail."+k, v.String())
	}
	add("blockedBy", m.BlockedBy)
	if m.Message != "" {
		add("message", strconv.Quote(m.Message))
		if m.MessageTimes != nil {
			add("times", fmt.Sprint(*m.MessageTimes))
		}
	}
	if m.Silenced != nil {
		add("silenced", fmt.Sprint(*m.Silenced))
	}
	if m.Paged != nil {
		add("paged", fmt.Sprint(*m.Paged))
	}
	if m.Count != nil {
		add("count", fmt.Sprint(*m.Count))
	}
	return strings.Join(parts, " ")
}
