package simulate_test

import (
	"testing"

	"github.com/interlockhq/interlock/internal/scenario"
	"github.com/interlockhq/interlock/internal/simulate"
)

// TestRefusedActionsAreExpectations: an action marked refused: true fails
// the scenario when the engine accepts it, and passes when it is refused;
// an unmarked refusal is reported without failing anything.
func TestRefusedActionsAreExpectations(t *testing.T) {
	const src = `name: refusals
start: 2026-03-10T06:00:00Z
end: 2026-03-10T08:00:00Z
pipelines:
  - pipeline: {id: p}
    schedule: {trigger: {key: k, check: exists}}
    job: {type: glue, config: {jobName: j}}
timeline:
  - at: 2026-03-10T07:00:00Z
    sensor: {pipeline: p, key: k, data: {date: "2026-13-45"}}
    refused: true
  - at: 2026-03-10T07:01:00Z
    sensor: {pipeline: p, key: other, data: {ok: true}}
    refused: true
  - at: 2026-03-10T07:02:00Z
    sensor: {pipeline: p, key: k, data: {hour: "07"}}
`
	sc, err := scenario.Parse("refusals.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulate.Run(t.Context(), sc, simulate.Options{OpenStore: openSQLite, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Errors) != 2 {
		t.Fatalf("refused actions: %+v, want lines 9 and 15", res.Errors)
	}
	byLine := map[int]simulate.Check{}
	for _, c := range res.Checks {
		if c.Kind() != "refused" {
			t.Fatalf("unexpected check %s", c.What())
		}
		byLine[c.Matcher.Line] = c
	}
	if c := byLine[9]; !c.OK || c.What() != "timeline line 9 is refused" {
		t.Errorf("malformed date marked refused: %+v", c)
	}
	if c := byLine[12]; c.OK || c.Why != "accepted, want refused" {
		t.Errorf("an accepted write marked refused must fail: %+v", c)
	}
	if len(byLine) != 2 || res.Passed() {
		t.Errorf("checks %+v: want two, the scenario failed", res.Checks)
	}
}
