package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// dependencyProject writes a project whose pipelines depend on each
// other (orders -> revenue -> margin, clicks -> margin with hours: all);
// extra files are added as given.
func dependencyProject(t *testing.T, extra map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"interlock.yaml":         "pipelines: ./pipelines\n",
		"pipelines/orders.yaml":  "pipeline: {id: orders}\nschedule: {trigger: {key: landed, check: exists}}\njob: {type: glue, config: {jobName: o}}\n",
		"pipelines/clicks.yaml":  "pipeline: {id: clicks}\nschedule: {cron: '5 * * * *'}\njob: {type: glue, config: {jobName: c}}\n",
		"pipelines/revenue.yaml": "pipeline: {id: revenue}\nvalidation:\n  rules: [{check: upstream, pipeline: orders, offset: -1d}]\njob: {type: glue, config: {jobName: r}}\n",
		"pipelines/margin.yaml":  "pipeline: {id: margin}\nvalidation:\n  rules:\n    - {check: upstream, pipeline: revenue}\n    - {check: upstream, pipeline: clicks, hours: all}\njob: {type: glue, config: {jobName: m}}\n",
	}
	for name, body := range extra {
		files[name] = body
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// dotStatement is one line of what `interlock graph --output dot` prints:
// Graphviz's grammar for the statements it uses (quoted ids, attribute
// lists of quoted or plain values).
var dotStatement = regexp.MustCompile(`^  ("(?:[^"\\]|\\.)*"( -> "(?:[^"\\]|\\.)*")?( \[[a-z]+=("(?:[^"\\]|\\.)*"|[a-z]+)(, [a-z]+=("(?:[^"\\]|\\.)*"|[a-z]+))*\])?|rankdir=LR|node \[shape=box\]);$`)

func TestGraphCommand(t *testing.T) {
	t.Parallel()
	dir := dependencyProject(t, nil)

	text := mustCLI(t, dir, 0, "graph")
	for _, want := range []string{"layer 0: clicks orders", "layer 1: revenue", "layer 2: margin",
		"  orders -> revenue (offset -1d)", "  revenue -> margin (same period)", "  clicks -> margin (hours: all)"} {
		if !strings.Contains(text, want+"\n") {
			t.Errorf("graph text lacks %q:\n%s", want, text)
		}
	}

	dot := mustCLI(t, dir, 0, "graph", "--output", "dot")
	lines := strings.Split(strings.TrimSuffix(dot, "\n"), "\n")
	if lines[0] != "digraph interlock {" || lines[len(lines)-1] != "}" {
		t.Fatalf("not a digraph:\n%s", dot)
	}
	edges := 0
	for _, l := range lines[1 : len(lines)-1] {
		if !dotStatement.MatchString(l) {
			t.Errorf("not a DOT statement: %q", l)
		}
		if strings.Contains(l, " -> ") {
			edges++
		}
	}
	if edges != 3 || !strings.Contains(dot, `  "orders" -> "revenue" [label="offset -1d"];`) {
		t.Fatalf("dot edges:\n%s", dot)
	}

	var doc struct {
		Nodes []struct {
			ID    string `json:"id"`
			Layer int    `json:"layer"`
		} `json:"nodes"`
		Edges []struct{ From, To, Mapping string } `json:"edges"`
	}
	if err := json.Unmarshal([]byte(mustCLI(t, dir, 0, "graph", "--output", "json")), &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Nodes) != 4 || doc.Nodes[3].ID != "margin" || doc.Nodes[3].Layer != 2 || len(doc.Edges) != 3 {
		t.Fatalf("json graph: %+v", doc)
	}

	if code, _, errOut := cli(t, dir, "graph", "--output", "svg"); code != 2 || !strings.Contains(errOut, "--output must be text, dot or json") {
		t.Fatalf("a bad --output: exit %d, %s", code, errOut)
	}
}

func TestValidateNamesACycle(t *testing.T) {
	t.Parallel()
	// orders waits for margin: orders -> revenue -> margin -> orders.
	dir := dependencyProject(t, map[string]string{
		"pipelines/orders.yaml": "pipeline: {id: orders}\nschedule: {trigger: {key: landed, check: exists}}\nvalidation:\n  rules: [{check: upstream, pipeline: margin}]\njob: {type: glue, config: {jobName: o}}\n",
	})
	code, out, _ := cli(t, dir, "validate")
	if code != 1 {
		t.Fatalf("validate a cycle: exit %d\n%s", code, out)
	}
	const cycle = "validation.rules: upstream cycle: margin -> orders -> revenue -> margin"
	for _, f := range []string{"orders", "revenue", "margin"} {
		if !regexp.MustCompile(`pipelines/` + f + `\.yaml:\d+: ` + regexp.QuoteMeta(cycle)).MatchString(out) {
			t.Errorf("validate does not name the cycle at %s:\n%s", f, out)
		}
	}
	if strings.Contains(out, "clicks.yaml:") {
		t.Errorf("clicks is in no cycle:\n%s", out)
	}
	// graph still draws it, and says what is wrong.
	code, _, errOut := cli(t, dir, "graph")
	if code != 1 || !strings.Contains(errOut, cycle) {
		t.Fatalf("graph of a cycle: exit %d, stderr %s", code, errOut)
	}
}
