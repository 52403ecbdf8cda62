// Package sensor holds the typed form of sensor data: what external systems
// push to Interlock, and what rules read.
//
// Sensor bodies are JSON objects. Values keep their JSON type (a number stays
// a number, "5" stays a string) so rules can compare typed values and tell a
// missing field from a zero. Nothing outside this package sees map[string]any.
package sensor

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Kind is the JSON type of a Value.
type Kind uint8

// The JSON types.
const (
	Null Kind = iota
	Bool
	Number
	String
	ObjectKind
	Array
)

func (k Kind) String() string {
	switch k {
	case Null:
		return "null"
	case Bool:
		return "bool"
	case Number:
		return "number"
	case String:
		return "string"
	case ObjectKind:
		return "object"
	case Array:
		return "array"
	}
	return "unknown"
}

// Value is one JSON value. The zero Value is null.
type Value struct {
	kind Kind
	b    bool
	s    string // string content, or the canonical text of a number
	f    float64
	obj  Object
	arr  []Value
}

// NullValue returns the JSON null.
func NullValue() Value { return Value{} }

// BoolValue returns a JSON boolean.
func BoolValue(b bool) Value { return Value{kind: Bool, b: b} }

// StringValue returns a JSON string.
func StringValue(s string) Value { return Value{kind: String, s: s} }

// NumberValue returns a JSON number. NaN and infinities are not JSON
// numbers; they become null.
func NumberValue(f float64) Value {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Value{}
	}
	return Value{kind: Number, f: f, s: strconv.FormatFloat(f, 'g', -1, 64)}
}

// IntValue returns a JSON number holding an integer exactly.
func IntValue(i int64) Value {
	return Value{kind: Number, f: float64(i), s: strconv.FormatInt(i, 10)}
}

// ParseNumber returns the number written as decimal text ("5", "-1.5",
// "1e6"). It fails on anything that is not a finite decimal number.
//
// strconv alone would also read Go literals ("0x10", "0o17", "1_000",
// "0x1p-2") and base-0 ParseInt reads "017" as octal 15; a writer's string
// "017" means 17, so only decimal syntax is let through.
func ParseNumber(text string) (Value, error) {
	t := strings.TrimSpace(text)
	if strings.ContainsFunc(t, notDecimal) {
		return Value{}, fmt.Errorf("%q is not a finite number", text)
	}
	if i, err := strconv.ParseInt(t, 10, 64); err == nil {
		return IntValue(i), nil
	}
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return Value{}, fmt.Errorf("%q is not a finite number", text)
	}
	return Value{kind: Number, f: f, s: canonicalFloat(t, f)}, nil
}

func notDecimal(r rune) bool { return !strings.ContainsRune("0123456789+-.eE", r) }

func canonicalFloat(text string, f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1<<53 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// ArrayValue returns a JSON array.
func ArrayValue(items []Value) Value { return Value{kind: Array, arr: items} }

// ObjectValue returns a JSON object.
func ObjectValue(o Object) Value { return Value{kind: ObjectKind, obj: o} }

// Kind reports the JSON type.
func (v Value) Kind() Kind { return v.kind }

// IsNull reports whether v is JSON null.
func (v Value) IsNull() bool { return v.kind == Null }

// Bool returns the boolean and whether v is one.
func (v Value) Bool() (bool, bool) { return v.b, v.kind == Bool }

// Str returns the string and whether v is one.
func (v Value) Str() (string, bool) { return v.s, v.kind == String }

// Float returns the number and whether v is one.
func (v Value) Float() (float64, bool) { return v.f, v.kind == Number }

// Int returns v as an int64 when it is a number with no fractional part
// that fits.
func (v Value) Int() (int64, bool) {
	if v.kind != Number {
		return 0, false
	}
	if i, err := strconv.ParseInt(v.s, 10, 64); err == nil {
		return i, true
	}
	if v.f == math.Trunc(v.f) && math.Abs(v.f) < 1<<63 {
		return int64(v.f), true
	}
	return 0, false
}

// Object returns the object and whether v is one.
func (v Value) Object() (Object, bool) { return v.obj, v.kind == ObjectKind }

// Array returns the items and whether v is an array.
func (v Value) Array() ([]Value, bool) { return v.arr, v.kind == Array }

// Numeric returns v as a number, accepting numbers and strings that hold a
// number ("1500"). Booleans, null, objects and arrays are not numeric.
func (v Value) Numeric() (float64, bool) {
	switch v.kind {
	case Number:
		return v.f, true
	case String:
		n, err := ParseNumber(v.s)
		if err != nil {
			return 0, false
		}
		return n.f, true
	}
	return 0, false
}

// Equal reports whether a and b are the same typed value. Numbers compare
// numerically (1000000 equals 1e6); strings compare exactly; values of
// different kinds are never equal.
func (v Value) Equal(o Value) bool {
	if v.kind != o.kind {
		return false
	}
	switch v.kind {
	case Null:
		return true
	case Bool:
		return v.b == o.b
	case Number:
		if a, ok := v.Int(); ok {
			if b, ok := o.Int(); ok {
				return a == b
			}
		}
		return v.f == o.f
	case String:
		return v.s == o.s
	case ObjectKind:
		return v.obj.Equal(o.obj)
	case Array:
		if len(v.arr) != len(o.arr) {
			return false
		}
		for i := range v.arr {
			if !v.arr[i].Equal(o.arr[i]) {
				return false
			}
		}
		return true
	}
	return false
}

// String renders v for people: strings quoted, numbers as written.
func (v Value) String() string {
	switch v.kind {
	case String:
		return strconv.Quote(v.s)
	case Number:
		return v.s
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// MarshalJSON renders v as JSON.
func (v Value) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	v.writeJSON(&buf)
	return buf.Bytes(), nil
}

func (v Value) writeJSON(buf *bytes.Buffer) {
	switch v.kind {
	case Null:
		buf.WriteString("null")
	case Bool:
		buf.WriteString(strconv.FormatBool(v.b))
	case Number:
		buf.WriteString(v.s)
	case String:
		writeJSONString(buf, v.s)
	case ObjectKind:
		v.obj.writeJSON(buf)
	case Array:
		buf.WriteByte('[')
		for i, it := range v.arr {
			if i > 0 {
				buf.WriteByte(',')
			}
			it.writeJSON(buf)
		}
		buf.WriteByte(']')
	}
}

// writeJSONString writes s quoted as encoding/json does. A string of
// printable ASCII that JSON and encoding/json's HTML escaping leave alone
// (no '"', '\\', '<', '>' or '&') is written as it is; any other goes
// through json.Marshal. Every key and string value of the details,
// sensor data and events a store writes is encoded here, and
// json.Marshal's reflection was half of that encoding's CPU.
func writeJSONString(buf *bytes.Buffer, s string) {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			b, _ := json.Marshal(s)
			buf.Write(b)
			return
		}
	}
	buf.WriteByte('"')
	buf.WriteString(s)
	buf.WriteByte('"')
}

// UnmarshalJSON reads any JSON value, as strictly as ParseBody (no invalid
// UTF-8, no key twice), except that keys holding control characters are
// read back: it reads stored sensors, and what was stored stays readable.
func (v *Value) UnmarshalJSON(b []byte) error {
	val, err := readJSON(b, ErrInvalid, false)
	if err != nil {
		return err
	}
	*v = val
	return nil
}

// Object is a JSON object with typed values. The zero Object is empty.
type Object struct {
	fields map[string]Value
}

// NewObject builds an object from fields. The map is copied.
func NewObject(fields map[string]Value) Object {
	m := make(map[string]Value, len(fields))
	for k, v := range fields {
		m[k] = v
	}
	return Object{fields: m}
}

// Get returns the field and whether it is present. A present field may be
// null; that is different from a missing one.
func (o Object) Get(field string) (Value, bool) {
	v, ok := o.fields[field]
	return v, ok
}

// Str returns the field as a string, and false when it is missing or not
// a string.
func (o Object) Str(field string) (string, bool) {
	v, ok := o.fields[field]
	if !ok {
		return "", false
	}
	return v.Str()
}

// Len is the number of fields.
func (o Object) Len() int { return len(o.fields) }

// Keys returns the field names, sorted.
func (o Object) Keys() []string {
	keys := make([]string, 0, len(o.fields))
	for k := range o.fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Equal reports whether both objects hold the same fields with equal values.
func (o Object) Equal(p Object) bool {
	if len(o.fields) != len(p.fields) {
		return false
	}
	for k, v := range o.fields {
		w, ok := p.fields[k]
		if !ok || !v.Equal(w) {
			return false
		}
	}
	return true
}

// MarshalJSON renders the object with sorted keys, so equal objects give
// equal bytes.
func (o Object) MarshalJSON() ([]byte, error) {
	var buf bytes.Buffer
	o.writeJSON(&buf)
	return buf.Bytes(), nil
}

func (o Object) writeJSON(buf *bytes.Buffer) {
	buf.WriteByte('{')
	for i, k := range o.Keys() {
		if i > 0 {
			buf.WriteByte(',')
		}
		writeJSONString(buf, k)
		buf.WriteByte(':')
		o.fields[k].writeJSON(buf)
	}
	buf.WriteByte('}')
}

// UnmarshalJSON reads a JSON object (not the wrapped sensor form; use
// ParseBody for request bodies).
func (o *Object) UnmarshalJSON(b []byte) error {
	var v Value
	if err := v.UnmarshalJSON(b); err != nil {
		return err
	}
	obj, ok := v.Object()
	if !ok {
		return fmt.Errorf("sensor data must be a JSON object, got %s", v.Kind())
	}
	*o = obj
	return nil
}
