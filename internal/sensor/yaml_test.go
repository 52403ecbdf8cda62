package sensor

import (
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

func yamlNode(t *testing.T, doc string) *yaml.Node {
	t.Helper()
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(doc), &n); err != nil {
		t.Fatalf("yaml %q: %v", doc, err)
	}
	return &n
}

// TestFromYAMLRefusesDuplicateKeys: a YAML node keeps both of two equal
// keys and the last would win; scenario sensor data and rule values
// refuse them, as a JSON sensor body does.
func TestFromYAMLRefusesDuplicateKeys(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"top level", "count: 1\ncount: 2\n", `duplicate key "count" at line 2 (first at line 1)`},
		{"wrapped", "data:\n  count: 1\n  count: 2\n", `duplicate key "count" at line 3 (first at line 2)`},
		{"the wrapper", "data: {a: 1}\ndata: {b: 2}\n", `duplicate key "data" at line 2 (first at line 1)`},
		{"in a list", "runs:\n  - {id: 1, id: 2}\n", `duplicate key "id" at line 2 (first at line 2)`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := FromYAML(yamlNode(t, c.doc))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("FromYAML(%q) error = %v, want it to mention %q", c.doc, err, c.want)
			}
		})
	}
	v, err := FromYAML(yamlNode(t, "a: {id: 1}\nb: {id: 1}\n"))
	if err != nil {
		t.Fatalf("equal keys in different mappings: %v", err)
	}
	if got, _ := v.MarshalJSON(); string(got) != `{"a":{"id":1},"b":{"id":1}}` {
		t.Fatalf("got %s", got)
	}
}
