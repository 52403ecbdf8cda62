package rule

import (
	"fmt"
	"time"
)

// Outcome is the verdict on a set of rules.
type Outcome struct {
	Mode    Mode
	Passed  bool
	Results []Result // one per rule, in rule order
}

// EvaluateAll judges rules under mode at instant now. ALL passes when every
// rule passes (no rules: pass, nothing is required); ANY when at least one
// does (no rules: fail, nothing can pass). Every rule is evaluated even
// once the verdict is known, so `explain` shows them all. A mode that
// ParseMode refuses fails closed; "" is ALL.
func EvaluateAll(mode Mode, rules []Rule, s Sensors, now time.Time, opt Options) Outcome {
	out := Outcome{Mode: mode, Results: make([]Result, len(rules))}
	passed := 0
	for i, r := range rules {
		out.Results[i] = Evaluate(r, s, now, opt)
		if out.Results[i].Passed {
			passed++
		}
	}
	m, err := ParseMode(string(mode))
	if err != nil {
		return out
	}
	out.Mode = m
	switch m {
	case All:
		out.Passed = passed == len(rules)
	case Any:
		out.Passed = passed > 0
	}
	return out
}

// Summary counts the passing rules: "2/3 rules passed (ALL)".
func (o Outcome) Summary() string {
	passed := 0
	for _, r := range o.Results {
		if r.Passed {
			passed++
		}
	}
	mode := string(o.Mode)
	if _, err := ParseMode(mode); err != nil {
		mode = fmt.Sprintf("invalid mode %q", mode)
	}
	return fmt.Sprintf("%d/%d rules passed (%s)", passed, len(o.Results), mode)
}
