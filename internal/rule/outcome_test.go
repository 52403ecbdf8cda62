package rule

import (
	"testing"

	"github.com/interlockhq/interlock/internal/sensor"
)

func TestEvaluateAll(t *testing.T) {
	pass := Rule{Key: "k", Op: Exists}
	fail := Rule{Key: "missing", Op: Exists}
	cases := []struct {
		name     string
		mode     Mode
		rules    []Rule
		pass     bool
		wantMode Mode // the mode the outcome reports
		summary  string
	}{
		{"ALL all pass", All, []Rule{pass, pass}, true, All, "2/2 rules passed (ALL)"},
		{"ALL one fails", All, []Rule{pass, fail, pass}, false, All, "2/3 rules passed (ALL)"},
		{"ALL empty passes", All, nil, true, All, "0/0 rules passed (ALL)"},
		{"ANY one passes", Any, []Rule{fail, pass}, true, Any, "1/2 rules passed (ANY)"},
		{"ANY none pass", Any, []Rule{fail, fail}, false, Any, "0/2 rules passed (ANY)"},
		{"ANY empty fails", Any, nil, false, Any, "0/0 rules passed (ANY)"},
		{"empty mode is ALL", "", []Rule{pass, fail}, false, All, "1/2 rules passed (ALL)"},
		{"lowercase any", "any", []Rule{fail, pass}, true, Any, "1/2 rules passed (ANY)"},
		{"unknown mode fails closed", "MOST", []Rule{pass}, false, "MOST", `1/1 rules passed (invalid mode "MOST")`},
	}
	s := SensorMap{"k": sensor.Record{Key: "k"}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := EvaluateAll(c.mode, c.rules, s, now, Options{})
			if got.Passed != c.pass || got.Mode != c.wantMode || got.Summary() != c.summary {
				t.Fatalf("EvaluateAll = passed %v, mode %q, %q\nwant          passed %v, mode %q, %q",
					got.Passed, got.Mode, got.Summary(), c.pass, c.wantMode, c.summary)
			}
		})
	}
}

// explain shows every rule, so evaluation must not stop at the first
// failure (ALL) or the first pass (ANY).
func TestEvaluateAllEvaluatesEveryRule(t *testing.T) {
	s := SensorMap{"k": sensor.Record{Key: "k"}}
	rules := []Rule{{Key: "missing", Op: Exists}, {Key: "k", Op: Exists}, {Key: "also-missing", Op: Exists}}
	for _, mode := range Modes() {
		t.Run(string(mode), func(t *testing.T) {
			got := EvaluateAll(mode, rules, s, now, Options{})
			if len(got.Results) != len(rules) {
				t.Fatalf("%d results for %d rules", len(got.Results), len(rules))
			}
			for i, r := range got.Results {
				if r.Rule.Key != rules[i].Key || r.Reason == "" {
					t.Fatalf("result %d = %+v, want an evaluation of %+v", i, r, rules[i])
				}
			}
		})
	}
}
