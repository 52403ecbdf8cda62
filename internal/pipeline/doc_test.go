package pipeline

import (
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/rule"
)

// configDoc is the field-by-field configuration reference. The tests
// below keep it in step with the schema: a job type, job.config field or
// job budget added to the code without a line in the doc fails here.
const configDoc = "../../docs/configuration.md"

// docKindNames are the names the doc's "Kind" column uses. A new
// ConfigKind needs a name here and a row in the doc's kinds table.
var docKindNames = map[ConfigKind]string{
	KindString:    "string",
	KindURL:       "URL",
	KindJSON:      "JSON",
	KindArgs:      "args",
	KindStringMap: "map",
	KindHeaders:   "headers",
	KindEnv:       "env",
	KindDuration:  "duration",
	KindMethod:    "method",
}

// docSections splits a markdown document into its sections, keyed by
// heading text ("#### `http`"). Lines in fenced code blocks are never
// headings (YAML comments start with '#').
func docSections(doc string) map[string][]string {
	sections := map[string][]string{}
	heading, fenced := "", false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(line, "```") {
			fenced = !fenced
		}
		if !fenced && strings.HasPrefix(line, "#") {
			heading = strings.TrimSpace(line)
			sections[heading] = nil
			continue
		}
		sections[heading] = append(sections[heading], line)
	}
	return sections
}

// tableRows returns the table rows of lines whose first cell is a
// backquoted name, keyed by that name, each as its trimmed cells.
func tableRows(lines []string) map[string][]string {
	rows := map[string][]string{}
	for _, line := range lines {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		name := strings.Trim(cells[0], "`")
		rows[name] = cells
	}
	return rows
}

func readConfigDoc(t *testing.T) string {
	t.Helper()
	data, err := os.ReadFile(configDoc)
	if err != nil {
		t.Fatalf("read the configuration reference: %v", err)
	}
	return string(data)
}

// TestConfigDocJobConfig checks that every job type has a section in the
// doc whose table lists exactly its schema's fields, with the right kind
// and required flag.
func TestConfigDocJobConfig(t *testing.T) {
	sections := docSections(readConfigDoc(t))
	for _, jt := range JobTypes() {
		heading := "#### `" + string(jt) + "`"
		lines, ok := sections[heading]
		if !ok {
			t.Errorf("%s: job type %s has no section %q", configDoc, jt, heading)
			continue
		}
		rows := tableRows(lines)
		schema, _ := JobSchema(jt)
		for _, f := range schema {
			row, ok := rows[f.Name]
			if !ok {
				t.Errorf("%s: section %s has no row for job.config field %q", configDoc, heading, f.Name)
				continue
			}
			kind, named := docKindNames[f.Kind]
			if !named {
				t.Errorf("field %s.%s: kind %d has no doc name in docKindNames", jt, f.Name, f.Kind)
			}
			if len(row) < 3 {
				t.Errorf("%s: section %s: row %q has no kind and required columns", configDoc, heading, f.Name)
				continue
			}
			if named && row[1] != kind {
				t.Errorf("%s: section %s: field %q kind is %q, want %q", configDoc, heading, f.Name, row[1], kind)
			}
			if want := map[bool]string{true: "yes", false: "no"}[f.Required]; row[2] != want {
				t.Errorf("%s: section %s: field %q required is %q, want %q", configDoc, heading, f.Name, row[2], want)
			}
		}
		for name := range rows {
			if !slices.ContainsFunc(schema, func(f ConfigField) bool { return f.Name == name }) {
				t.Errorf("%s: section %s documents %q, which is not a job.config field of %s", configDoc, heading, name, jt)
			}
		}
	}
	// The kinds table of the job.config section explains every kind name
	// the type tables use.
	kinds := map[string]bool{}
	for _, line := range sections["### `job.config`"] {
		if strings.HasPrefix(line, "| ") {
			cells := strings.Split(strings.Trim(strings.TrimSpace(line), "|"), "|")
			kinds[strings.TrimSpace(cells[0])] = true
		}
	}
	for k, name := range docKindNames {
		if !kinds[name] {
			t.Errorf("%s: the job.config kinds table has no row for kind %q (ConfigKind %d)", configDoc, name, k)
		}
	}
}

// jobBudgetFields are the yaml names of job's fields other than type and
// config: the budgets, poll settings and stuckAfter.
func jobBudgetFields() []string {
	var names []string
	rt := reflect.TypeFor[rawJob]()
	for i := range rt.NumField() {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("yaml"), ",")
		if name != "" && name != "type" && name != "config" {
			names = append(names, name)
		}
	}
	return names
}

// TestConfigDocJobBudgets checks that the job section's table has a row
// for every job field, and the type row names every job type.
func TestConfigDocJobBudgets(t *testing.T) {
	sections := docSections(readConfigDoc(t))
	const heading = "### `job`"
	lines, ok := sections[heading]
	if !ok {
		t.Fatalf("%s: no section %q", configDoc, heading)
	}
	rows := tableRows(lines)
	budgets := jobBudgetFields()
	if len(budgets) < 9 {
		t.Fatalf("found only %d job budget fields in rawJob: %v", len(budgets), budgets)
	}
	for _, name := range budgets {
		if _, ok := rows[name]; !ok {
			t.Errorf("%s: section %s has no row for job.%s", configDoc, heading, name)
		}
	}
	typeRow := strings.Join(rows["type"], " | ")
	for _, jt := range JobTypes() {
		if !strings.Contains(typeRow, "`"+string(jt)+"`") {
			t.Errorf("%s: the job.type row does not list %s", configDoc, jt)
		}
	}
}

// TestConfigDocNames checks that the operators and template variables are
// documented.
func TestConfigDocNames(t *testing.T) {
	doc := readConfigDoc(t)
	for _, op := range rule.Ops() {
		if !strings.Contains(doc, "`"+string(op)+"`") {
			t.Errorf("%s: operator %s is not documented", configDoc, op)
		}
	}
	for _, v := range templateVarNames {
		if !strings.Contains(doc, "`${"+v+"}`") {
			t.Errorf("%s: template variable ${%s} is not documented", configDoc, v)
		}
	}
}
