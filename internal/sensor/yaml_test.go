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

// TestFromYAMLRefusesKeysThatAreNotNames: a key that is a mapping or a
// sequence would become the key "", a merge key (<<) a literal field
// named "<<"; both are refused with the line, as config files refuse
// them. A quoted "<<" is an ordinary string key, and an alias to a
// scalar key is that key.
func TestFromYAMLRefusesKeysThatAreNotNames(t *testing.T) {
	for _, c := range []struct{ name, doc, want string }{
		{"mapping key", "ok: 1\n? {a: 1}\n: 2\n", "mapping key at line 2 is a mapping: keys must be plain names"},
		{"sequence key", "ok: 1\n[a, b]: 2\n", "mapping key at line 2 is a sequence"},
		{"nested", "data:\n  inner:\n    ? [x]\n    : 1\n", "mapping key at line 3 is a sequence"},
		{"alias to a mapping", "base: &b {a: 1}\nother:\n  *b : 2\n", "mapping key at line 3 is a mapping"},
		{"merge key", "base: &b {count: 1}\nsensor:\n  <<: *b\n  ok: true\n", "merge key (<<) at line 3 is not supported"},
		{"merge key in a list", "runs:\n  - <<: {id: 1}\n", "merge key (<<) at line 2"},
		{"control character in a key", "\"a\\0b\": 1\n", `key "a\x00b" at line 1 holds a control character`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := FromYAML(yamlNode(t, c.doc))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("FromYAML(%q) error = %v, want it to mention %q", c.doc, err, c.want)
			}
		})
	}
	v, err := FromYAML(yamlNode(t, "\"<<\": 1\nname: &n count\nvalues: {*n : 2}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := v.MarshalJSON(); string(got) != `{"\u003c\u003c":1,"name":"count","values":{"count":2}}` {
		t.Fatalf("got %s", got)
	}
}
