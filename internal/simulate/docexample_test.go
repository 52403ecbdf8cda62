package simulate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/scenario"
	"github.com/interlockhq/interlock/internal/simulate"
)

// TestDependenciesDocExample runs the worked example of
// docs/dependencies.md as a reader who copies it would, so the page
// cannot drift from what Interlock does.
func TestDependenciesDocExample(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "dependencies.md"))
	if err != nil {
		t.Fatal(err)
	}
	var example string
	for _, block := range strings.Split(string(doc), "```yaml\n")[1:] {
		body, _, _ := strings.Cut(block, "```")
		if strings.Contains(body, "timeline:") {
			example = body
		}
	}
	if example == "" {
		t.Fatal("docs/dependencies.md has no scenario (a yaml block with a timeline)")
	}
	sc, err := scenario.Parse("deps.yaml", []byte(example))
	if err != nil {
		t.Fatal(err)
	}
	res, err := simulate.Run(t.Context(), sc, simulate.Options{OpenStore: openSQLite, Dir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Checks) == 0 {
		t.Fatal("the example checks nothing")
	}
	for _, c := range res.Checks {
		if !c.OK {
			t.Errorf("docs/dependencies.md example line %d: %s %s: %s", c.Matcher.Line, c.Kind(), c.What(), c.Why)
		}
	}
}
