package pipeline

import (
	"testing"

	"gopkg.in/yaml.v3"
)

func TestIDOf(t *testing.T) {
	cases := []struct{ doc, want string }{
		{"pipeline: {id: a}\njob: {type: nope}\n", "a"}, // the rest invalid: still named
		{"schedule: {}\npipeline: {owner: o, id: b}\n", "b"},
		{"pipeline: {owner: o}\n", ""},
		{"- pipeline\n- {id: c}\n", ""}, // not a mapping
	}
	for _, c := range cases {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(c.doc), &doc); err != nil {
			t.Fatal(err)
		}
		if got := IDOf(doc.Content[0]); got != c.want {
			t.Errorf("IDOf(%q) = %q, want %q", c.doc, got, c.want)
		}
	}
	if got := IDOf(nil); got != "" {
		t.Errorf("IDOf(nil) = %q", got)
	}
}
