package confdec

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/duration"
	"github.com/interlockhq/interlock/internal/sensor"
)

// Unmarshaler is implemented by types that decode themselves from a node
// and report their own errors through d (at path). Decode calls it for a
// non-null node with aliases already resolved.
type Unmarshaler interface {
	DecodeNode(d *Decoder, n *yaml.Node, path string)
}

var unmarshalerType = reflect.TypeFor[Unmarshaler]()

// Decode decodes n into out, which must be a non-nil pointer, recording
// every problem under path. Supported: structs (yaml tags, see fieldsOf),
// string, bool, integers (range-checked), floats, pointers (left nil when
// the value is absent or null, so "omitted" stays distinguishable from an
// explicit zero, and when a non-struct value is invalid), slices, map[string]T, *yaml.Node (kept raw),
// sensor.Value, time.Duration (Go syntax plus days, via
// internal/duration), time.Time (RFC 3339) and Unmarshaler.
//
// Null is treated as absent everywhere: the target keeps its zero value.
// Scalars are not converted between kinds, except that a string field
// accepts a number or timestamp as written (`jobId: 123` is "123").
func (d *Decoder) Decode(n *yaml.Node, path string, out any) {
	rv := reflect.ValueOf(out)
	if !rv.IsValid() || rv.Kind() != reflect.Pointer || rv.IsNil() {
		d.Errorf(n, path, "internal error: Decode needs a non-nil pointer, got %T", out)
		return
	}
	d.decode(n, path, rv.Elem())
}

// Resolve follows aliases and unwraps a DocumentNode, returning nil for a
// missing or null node. Chains of aliases are bounded by MaxDepth hops.
func (d *Decoder) Resolve(n *yaml.Node) *yaml.Node {
	for hops := 0; n != nil; hops++ {
		if hops > MaxDepth {
			return nil
		}
		switch n.Kind {
		case yaml.AliasNode:
			n = n.Alias
			continue
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
			continue
		}
		if isNull(n) {
			return nil
		}
		return n
	}
	return nil
}

func (d *Decoder) decode(n *yaml.Node, path string, v reflect.Value) {
	if d.stopped {
		return
	}
	orig := n
	n = d.Resolve(n)
	if n == nil {
		if orig != nil {
			d.SetLine(path, orig.Line)
		}
		return
	}
	d.SetLine(path, n.Line)
	d.nodes++
	d.depth++
	defer func() { d.depth-- }()
	if d.nodes > d.limit || d.depth > MaxDepth {
		d.stopped = true
		d.Errorf(n, path, "configuration nests deeper than %d levels or expands (through aliases) to more than %d nodes", MaxDepth, d.limit)
		return
	}

	if v.CanAddr() && v.Addr().Type().Implements(unmarshalerType) {
		v.Addr().Interface().(Unmarshaler).DecodeNode(d, n, path)
		return
	}
	switch v.Type() {
	case nodePtrType:
		if _, ok := expandedSize(n, d.limit-d.nodes); !ok {
			d.stopped = true
			d.Errorf(n, path, "value nests deeper than %d levels or expands (through aliases) to too many nodes", MaxDepth)
			return
		}
		v.Set(reflect.ValueOf(n))
		return
	case valueType:
		d.decodeValue(n, path, v)
		return
	case durationType:
		d.decodeDuration(n, path, v)
		return
	case timeType:
		d.decodeTime(n, path, v)
		return
	}

	switch v.Kind() {
	case reflect.Pointer:
		// A pointer to a scalar stays nil when its value is wrong, so
		// later checks see "absent" rather than a bogus zero. A struct
		// is kept even when partly wrong: its other fields still count.
		elem := reflect.New(v.Type().Elem())
		if !v.IsNil() {
			elem = v
		}
		before := len(d.errs)
		d.decode(n, path, elem.Elem())
		if len(d.errs) == before || elem.Elem().Kind() == reflect.Struct {
			v.Set(elem)
		}
	case reflect.Struct:
		d.decodeStruct(n, path, v)
	case reflect.Slice:
		d.decodeSlice(n, path, v)
	case reflect.Map:
		d.decodeMap(n, path, v)
	case reflect.String:
		if s, ok := d.stringOf(n, path, v.Type()); ok {
			v.SetString(s)
		}
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			d.mismatch(n, path, v.Type())
			return
		}
		var b bool
		if err := n.Decode(&b); err != nil {
			d.mismatch(n, path, v.Type())
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		decodeNumber(d, n, path, v, intTags, v.OverflowInt, v.SetInt, "integer %s is out of range")
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		decodeNumber(d, n, path, v, intTags, v.OverflowUint, v.SetUint, "integer %s is out of range (want 0 or more)")
	case reflect.Float32, reflect.Float64:
		decodeNumber(d, n, path, v, numberTags, finite(v), v.SetFloat, "want a finite number, got %s")
	default:
		d.Errorf(n, path, "internal error: cannot decode into Go type %s", v.Type())
	}
}

func (d *Decoder) mismatch(n *yaml.Node, path string, t reflect.Type) {
	d.Errorf(n, path, "want %s, got %s", want(t), Describe(n))
}

// stringOf accepts a string scalar, or a number or timestamp as written.
func (d *Decoder) stringOf(n *yaml.Node, path string, t reflect.Type) (string, bool) {
	if n.Kind == yaml.ScalarNode {
		switch n.ShortTag() {
		case "!!str", "!!int", "!!float", "!!timestamp":
			return n.Value, true
		}
	}
	d.mismatch(n, path, t)
	return "", false
}

// decodeNumber decodes a scalar tagged with one of tags into a T and
// stores it with set; one that does not decode, or that bad refuses (out
// of the field's range), is reported with msg, a format of the scalar.
func decodeNumber[T any](d *Decoder, n *yaml.Node, path string, v reflect.Value, tags []string, bad func(T) bool, set func(T), msg string) {
	if n.Kind != yaml.ScalarNode || !slices.Contains(tags, n.ShortTag()) {
		d.mismatch(n, path, v.Type())
		return
	}
	var x T
	if err := n.Decode(&x); err != nil || bad(x) {
		d.Errorf(n, path, msg, n.Value)
		return
	}
	set(x)
}

var (
	intTags    = []string{"!!int"}
	numberTags = []string{"!!int", "!!float"}
)

func finite(v reflect.Value) func(float64) bool {
	return func(f float64) bool { return math.IsNaN(f) || math.IsInf(f, 0) || v.OverflowFloat(f) }
}

func (d *Decoder) decodeDuration(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!str" {
		d.mismatch(n, path, v.Type())
		return
	}
	dur, err := duration.Parse(n.Value)
	if err != nil {
		d.Errorf(n, path, "invalid duration %q: want e.g. 90s, 5m, 1h30m, 2d", n.Value)
		return
	}
	v.SetInt(int64(dur))
}

func (d *Decoder) decodeTime(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.ScalarNode || (n.ShortTag() != "!!str" && n.ShortTag() != "!!timestamp") {
		d.mismatch(n, path, v.Type())
		return
	}
	t, err := time.Parse(time.RFC3339Nano, n.Value)
	if err != nil {
		d.Errorf(n, path, "invalid timestamp %q: want RFC 3339, e.g. 2026-03-10T06:00:00Z", n.Value)
		return
	}
	v.Set(reflect.ValueOf(t))
}

func (d *Decoder) decodeValue(n *yaml.Node, path string, v reflect.Value) {
	// sensor.FromYAML follows aliases without a node budget.
	if _, ok := expandedSize(n, d.limit-d.nodes); !ok {
		d.stopped = true
		d.Errorf(n, path, "value nests deeper than %d levels or expands (through aliases) to too many nodes", MaxDepth)
		return
	}
	val, err := sensor.FromYAML(n)
	if err != nil {
		d.Errorf(n, path, "invalid value: %v", err)
		return
	}
	v.Set(reflect.ValueOf(val))
}

func (d *Decoder) decodeSlice(n *yaml.Node, path string, v reflect.Value) {
	if n.Kind != yaml.SequenceNode {
		d.mismatch(n, path, v.Type())
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.decode(item, Index(path, i), s.Index(i))
	}
	v.Set(s)
}

// pairs walks a mapping's key/value pairs, reporting non-scalar keys,
// merge keys and duplicate keys; fn sees each accepted pair once.
func (d *Decoder) pairs(n *yaml.Node, path string, fn func(key string, k, val *yaml.Node)) {
	first := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := d.Resolve(n.Content[i]), n.Content[i+1]
		if k == nil || k.Kind != yaml.ScalarNode {
			at := n.Content[i]
			d.Errorf(at, path, "mapping keys must be plain names, got %s", Describe(at))
			continue
		}
		if k.ShortTag() == "!!merge" {
			d.Errorf(k, path, "merge keys (<<) are not supported: write the fields out")
			continue
		}
		if line, dup := first[k.Value]; dup {
			d.Errorf(k, Key(path, k.Value), "duplicate key (first at line %d)", line)
			continue
		}
		first[k.Value] = k.Line
		fn(k.Value, k, val)
	}
}

func (d *Decoder) decodeMap(n *yaml.Node, path string, v reflect.Value) {
	t := v.Type()
	if t.Key().Kind() != reflect.String {
		d.Errorf(n, path, "internal error: map keys must be strings, not %s", t.Key())
		return
	}
	if n.Kind != yaml.MappingNode {
		d.mismatch(n, path, t)
		return
	}
	m := reflect.MakeMapWithSize(t, len(n.Content)/2)
	d.pairs(n, path, func(key string, k, val *yaml.Node) {
		p := Key(path, key)
		d.SetLine(p, k.Line)
		elem := reflect.New(t.Elem()).Elem()
		d.decode(val, p, elem)
		m.SetMapIndex(reflect.ValueOf(key).Convert(t.Key()), elem)
	})
	v.Set(m)
}

func (d *Decoder) decodeStruct(n *yaml.Node, path string, v reflect.Value) {
	si := fieldsOf(v.Type())
	if n.Kind != yaml.MappingNode {
		d.mismatch(n, path, v.Type())
		return
	}
	present := make([]bool, len(si.fields))
	d.pairs(n, path, func(key string, k, val *yaml.Node) {
		p := Join(path, key)
		i, ok := si.byName[key]
		if !ok {
			d.Errorf(k, p, "%s", unknownField(key, si.names))
			return
		}
		d.SetLine(p, k.Line)
		present[i] = d.Resolve(val) != nil
		d.decode(val, p, v.FieldByIndex(si.fields[i].index))
	})
	for i, f := range si.fields {
		if f.required && !present[i] {
			d.Errorf(n, Join(path, f.name), "missing required field")
		}
	}
}

func unknownField(name string, known []string) string {
	if s := Suggest(name, known); s != "" {
		return fmt.Sprintf("unknown field, did you mean %q?", s)
	}
	return fmt.Sprintf("unknown field (want one of %s)", OneOf(known))
}
