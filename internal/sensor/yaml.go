package sensor

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// FromYAML converts a YAML node (a rule value, scenario sensor data) into a
// Value, keeping YAML's own typing: `1000` is a number, `"1000"` a string,
// `true` a bool, an unquoted date stays the string it was written as.
func FromYAML(n *yaml.Node) (Value, error) { return fromYAML(n, 0) }

func fromYAML(n *yaml.Node, depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, fmt.Errorf("nested deeper than %d levels", MaxDepth)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return NullValue(), nil
		}
		return fromYAML(n.Content[0], depth)
	case yaml.AliasNode:
		if n.Alias == nil {
			return Value{}, fmt.Errorf("unresolved alias")
		}
		return fromYAML(n.Alias, depth+1)
	case yaml.ScalarNode:
		switch n.ShortTag() {
		case "!!null":
			return NullValue(), nil
		case "!!bool":
			var b bool
			if err := n.Decode(&b); err != nil {
				return Value{}, err
			}
			return BoolValue(b), nil
		case "!!int", "!!float":
			var f float64
			if n.ShortTag() == "!!int" {
				var i int64
				if err := n.Decode(&i); err == nil {
					return IntValue(i), nil
				}
			}
			if err := n.Decode(&f); err != nil {
				return Value{}, err
			}
			v := NumberValue(f)
			if v.IsNull() {
				return Value{}, fmt.Errorf("%q is not a finite number", n.Value)
			}
			return v, nil
		default: // !!str, !!timestamp, !!binary and custom tags keep their text
			return StringValue(n.Value), nil
		}
	case yaml.SequenceNode:
		items := make([]Value, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := fromYAML(c, depth+1)
			if err != nil {
				return Value{}, err
			}
			items = append(items, v)
		}
		return ArrayValue(items), nil
	case yaml.MappingNode:
		fields := make(map[string]Value, len(n.Content)/2)
		// A key given twice is refused, as in a JSON sensor body: YAML
		// nodes keep both and the last would silently win.
		lines := make(map[string]int, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if k.Kind == yaml.AliasNode && k.Alias != nil {
				k = k.Alias // *name as a key: the key it names
			}
			// A key that is not a scalar would be read as its Value, "",
			// and a merge key (<<) as a literal field named "<<": refused,
			// as in config files, rather than stored as something else.
			if k.Kind != yaml.ScalarNode {
				return Value{}, fmt.Errorf("mapping key at line %d is a %s: keys must be plain names", n.Content[i].Line, yamlKind(k))
			}
			if k.ShortTag() == "!!merge" {
				return Value{}, fmt.Errorf("merge key (<<) at line %d is not supported: write the fields out", k.Line)
			}
			if HasControl(k.Value) {
				return Value{}, fmt.Errorf("key %q at line %d holds a control character", k.Value, k.Line)
			}
			if first, dup := lines[k.Value]; dup {
				return Value{}, fmt.Errorf("duplicate key %q at line %d (first at line %d)", k.Value, k.Line, first)
			}
			lines[k.Value] = k.Line
			v, err := fromYAML(n.Content[i+1], depth+1)
			if err != nil {
				return Value{}, err
			}
			fields[k.Value] = v
		}
		return ObjectValue(Object{fields: fields}), nil
	}
	return Value{}, fmt.Errorf("unsupported YAML node")
}

func yamlKind(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "mapping"
	case yaml.SequenceNode:
		return "sequence"
	case yaml.AliasNode:
		return "alias"
	}
	return "node"
}
