package sensor

import (
	"bytes"
	"encoding/json"
	"testing"
)

// num reads a number as the JSON decoder would.
func num(t *testing.T, text string) Value {
	t.Helper()
	v, err := ParseNumber(text)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// tenth is a variable so 0.1+0.2 is computed in float64 at run time, not
// folded exactly to 0.3 by the compiler.
var tenth = 0.1

func TestValueEqual(t *testing.T) {
	obj := func(body string) Value { return ObjectValue(mustParse(t, body)) }
	cases := []struct {
		name string
		a, b Value
		want bool
	}{
		{"1000000 == 1e6", IntValue(1000000), num(t, "1e6"), true},
		{"42 == 42.0", num(t, "42"), num(t, "42.0"), true},
		{"0.5 == 0.50", num(t, "0.5"), num(t, "0.50"), true},
		{"-0 == 0", num(t, "-0.0"), IntValue(0), true},
		{"0.1+0.2 != 0.3", NumberValue(tenth + 2*tenth), num(t, "0.3"), false}, // floats compare exactly
		{"integers beyond 2^53 compare exactly", num(t, "9007199254740993"), num(t, "9007199254740992"), false},
		{"same string", StringValue("ready"), StringValue("ready"), true},
		{"strings compare exactly", StringValue("ready"), StringValue("READY"), false},
		{"strings are not trimmed", StringValue("ready"), StringValue("ready "), false},
		{"bool is not string", BoolValue(true), StringValue("true"), false},
		{"number is not string", IntValue(1000), StringValue("1000"), false},
		{"same bool", BoolValue(false), BoolValue(false), true},
		{"different bool", BoolValue(false), BoolValue(true), false},
		{"false is not 0", BoolValue(false), IntValue(0), false},
		{"null is null", NullValue(), NullValue(), true},
		{"null is not 0", NullValue(), IntValue(0), false},
		{"null is not empty string", NullValue(), StringValue(""), false},
		{"objects ignore field order", obj(`{"a": 1, "b": [true]}`), obj(`{"b": [true], "a": 1.0}`), true},
		{"objects with different values", obj(`{"a": 1}`), obj(`{"a": 2}`), false},
		{"objects with an extra field", obj(`{"a": 1}`), obj(`{"a": 1, "b": null}`), false},
		{"arrays keep order", ArrayValue([]Value{IntValue(1), IntValue(2)}), ArrayValue([]Value{IntValue(2), IntValue(1)}), false},
		{"arrays of different length", ArrayValue([]Value{IntValue(1)}), ArrayValue(nil), false},
		{"empty array is not empty object", ArrayValue(nil), ObjectValue(Object{}), false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.a.Equal(c.b); got != c.want {
				t.Fatalf("%v.Equal(%v) = %v, want %v", c.a, c.b, got, c.want)
			}
			if got := c.b.Equal(c.a); got != c.want {
				t.Fatalf("%v.Equal(%v) = %v, want %v (not symmetric)", c.b, c.a, got, c.want)
			}
		})
	}
}

func TestParseNumber(t *testing.T) {
	cases := []struct {
		in   string
		want string // canonical text
	}{
		{"5", "5"},
		{"-1.5", "-1.5"},
		{"+5", "5"},
		{" 12 ", "12"},
		{"1e6", "1000000"},
		{".5", "0.5"},
		{"017", "17"}, // decimal, not octal
		{"1.0", "1"},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			v, err := ParseNumber(c.in)
			if err != nil || v.Kind() != Number || v.String() != c.want {
				t.Fatalf("ParseNumber(%q) = %v, %v; want %s", c.in, v, err, c.want)
			}
		})
	}
	// strconv reads these Go literals; a sensor writer never means them.
	for _, in := range []string{"", "abc", "0x10", "0X10", "0o17", "0b11", "1_000", "0x1p-2", "Inf", "-Infinity", "NaN", "1e400", "5 5", "1,000"} {
		t.Run("refuses "+in, func(t *testing.T) {
			if v, err := ParseNumber(in); err == nil {
				t.Fatalf("ParseNumber(%q) = %v, want an error", in, v)
			}
		})
	}
}

func TestNumeric(t *testing.T) {
	cases := []struct {
		name string
		v    Value
		want float64
		ok   bool
	}{
		{"number", IntValue(1500), 1500, true},
		{"numeric string", StringValue("1500"), 1500, true},
		{"leading zero string is decimal", StringValue("017"), 17, true},
		{"exponent string", StringValue("1.5e3"), 1500, true},
		{"hex string", StringValue("0x10"), 0, false},
		{"word", StringValue("abc"), 0, false},
		{"empty string", StringValue(""), 0, false},
		{"bool", BoolValue(true), 0, false},
		{"null", NullValue(), 0, false},
		{"object", ObjectValue(Object{}), 0, false},
		{"array", ArrayValue([]Value{IntValue(1)}), 0, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := c.v.Numeric()
			if got != c.want || ok != c.ok {
				t.Fatalf("Numeric(%v) = %v, %v; want %v, %v", c.v, got, ok, c.want, c.ok)
			}
		})
	}
}

// TestObjectStr: a string field reads back; a missing field or one of
// another kind is not a string.
func TestObjectStr(t *testing.T) {
	o := NewObject(map[string]Value{"s": StringValue("x"), "n": IntValue(1)})
	if s, ok := o.Str("s"); !ok || s != "x" {
		t.Errorf(`Str("s") = %q, %v`, s, ok)
	}
	for _, k := range []string{"n", "missing"} {
		if _, ok := o.Str(k); ok {
			t.Errorf("Str(%q) reads a string", k)
		}
	}
}

// writeJSONString writes every string as json.Marshal does: each rune up
// to U+3000 alone and between two letters, each byte that is not UTF-8,
// and the keys and values details hold.
func TestWriteJSONStringAsMarshal(t *testing.T) {
	in := []string{"", "files", "audit#2026-03-01", "late — again", "a\"b", `a\b`, "<&>", "\u2028", "tab\there", "\x7f"}
	for r := rune(0); r <= 0x3000; r++ {
		in = append(in, string(r), "a"+string(r)+"b")
	}
	for b := 0x80; b <= 0xff; b++ {
		in = append(in, string([]byte{'a', byte(b)}))
	}
	for _, s := range in {
		var buf bytes.Buffer
		writeJSONString(&buf, s)
		want, _ := json.Marshal(s)
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("%q: wrote %s, json.Marshal %s", s, buf.Bytes(), want)
		}
	}
}
