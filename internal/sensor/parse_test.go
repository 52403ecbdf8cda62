package sensor

import (
	"errors"
	"strings"
	"testing"
)

func mustParse(t *testing.T, body string) Object {
	t.Helper()
	obj, err := ParseBody([]byte(body))
	if err != nil {
		t.Fatalf("ParseBody(%s): %v", body, err)
	}
	return obj
}

func TestParseBodyShapes(t *testing.T) {
	cases := []struct {
		name string
		body string
		want string // the object expected, written flat as canonical JSON
	}{
		{"flat", `{"count": 5, "status": "ready"}`, `{"count":5,"status":"ready"}`},
		{"wrapped", `{"data": {"count": 5, "status": "ready"}}`, `{"count":5,"status":"ready"}`},
		{"wrapped empty", `{"data": {}}`, `{}`},
		{"data beside other fields stays a field", `{"data": {"a": 1}, "b": 2}`, `{"b":2,"data":{"a":1}}`},
		{"data holding a number stays a field", `{"data": 5}`, `{"data":5}`},
		{"data holding null stays a field", `{"data": null}`, `{"data":null}`},
		{"data holding an array stays a field", `{"data": [1]}`, `{"data":[1]}`},
		// Only one level is unwrapped: a sensor whose own content is a single
		// "data" object must be sent wrapped, or it loses a level.
		{"wrapped once only", `{"data": {"data": {"a": 1}}}`, `{"data":{"a":1}}`},
		{"trailing whitespace", "{\"a\": 1}\n\t ", `{"a":1}`},
		{"numbers keep their type", `{"n": 5, "s": "5", "b": true, "z": null}`, `{"b":true,"n":5,"s":"5","z":null}`},
		{"numbers are canonical", `{"a": 1.0, "b": 1e6, "c": 0.50, "d": -0}`, `{"a":1,"b":1000000,"c":0.5,"d":0}`},
		{"integers beyond 2^53 stay exact", `{"n": 9007199254740993}`, `{"n":9007199254740993}`},
		{"integers beyond int64 become floats", `{"n": 12345678901234567890}`, `{"n":1.2345678901234567e+19}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := mustParse(t, c.body).MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("ParseBody(%s) = %s, want %s", c.body, got, c.want)
			}
		})
	}
}

func TestParseBodyFlatEqualsWrapped(t *testing.T) {
	fields := `"count": 1000000, "status": "ready", "ok": true, "gone": null, "tags": ["a", "b"], "meta": {"n": 1.5}`
	flat := mustParse(t, "{"+fields+"}")
	wrapped := mustParse(t, `{"data": {`+fields+`}}`)
	if !flat.Equal(wrapped) {
		t.Fatalf("flat %v != wrapped %v", flat, wrapped)
	}
	if flat.Len() != 6 {
		t.Fatalf("flat has %d fields, want 6: %v", flat.Len(), flat.Keys())
	}
}

func TestParseBodyErrors(t *testing.T) {
	cases := []struct {
		name string
		body string
		want string // a part of the message that tells the writer what is wrong
	}{
		{"empty", ``, "EOF"},
		{"not JSON", `count=5`, "invalid character"},
		{"truncated", `{"a": 1`, "unexpected EOF"},
		{"trailing garbage", `{"a": 1} x`, "trailing content"},
		{"two objects", `{"a": 1}{"b": 2}`, "trailing content"},
		{"stray bracket", `{"a": 1}]`, "trailing content"},
		{"array", `[{"a": 1}]`, "must be a JSON object, got array"},
		{"number", `5`, "must be a JSON object, got number"},
		{"string", `"ready"`, "must be a JSON object, got string"},
		{"null", `null`, "must be a JSON object, got null"},
		{"bool", `true`, "must be a JSON object, got bool"},
		{"number out of range", `{"n": 1e400}`, "not a finite number"},
		{"too deep", `{"a": ` + strings.Repeat("[", MaxDepth) + "1" + strings.Repeat("]", MaxDepth) + `}`, "nested deeper than 32 levels"},
		{"far too deep", strings.Repeat(`{"a":`, 100000) + "1" + strings.Repeat("}", 100000), "nested deeper than 32 levels"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseBody([]byte(c.body))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseBody error = %v, want ErrInvalid", err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParseBody error = %q, want it to mention %q", err, c.want)
			}
		})
	}
}

func TestParseBodyDepthLimit(t *testing.T) {
	// The body object is level 0; a value nested MaxDepth levels down is the
	// deepest allowed.
	deepest := `{"a": ` + strings.Repeat("[", MaxDepth-1) + "1" + strings.Repeat("]", MaxDepth-1) + `}`
	if _, err := ParseBody([]byte(deepest)); err != nil {
		t.Fatalf("a value at depth %d was refused: %v", MaxDepth, err)
	}
}

// TestParseBodyRefusesWhatJSONWouldRewrite: encoding/json would store
// something other than what was sent (U+FFFD for invalid UTF-8 and lone
// surrogates, the last of two equal keys); ParseBody refuses instead and
// says where.
func TestParseBodyRefusesWhatJSONWouldRewrite(t *testing.T) {
	cases := []struct {
		name string
		body string
		want string
	}{
		{"invalid UTF-8 in a string", "{\"s\": \"ab\xffc\"}", "not valid UTF-8 at byte 9"},
		{"invalid UTF-8 in a key", "{\"k\xc3\": 1}", "not valid UTF-8 at byte 3"},
		{"invalid UTF-8 outside strings", "\xfe{}", "not valid UTF-8 at byte 0"},
		{"truncated UTF-8 sequence", "{\"s\": \"\xe2\x82\"}", "not valid UTF-8 at byte 7"},
		{"UTF-8 encoded surrogate", "{\"s\": \"\xed\xa0\x80\"}", "not valid UTF-8 at byte 7"},
		{"lone high surrogate escape", `{"s": "\ud800"}`, `\ud800 at byte 7 is half of a UTF-16 surrogate pair`},
		{"lone low surrogate escape", `{"s": "x\udc00y"}`, `\udc00 at byte 8`},
		{"high surrogate then a letter", `{"s": "\ud83dA"}`, `\ud83d at byte 7`},
		{"two high surrogates", `{"s": "\ud83d\ud83d"}`, `\ud83d at byte 7`},
		{"surrogate escape in a key", `{"\udfff": 1}`, `\udfff at byte 2`},
		{"surrogate escape after an escaped quote", `{"s": "\"\ud800"}`, `\ud800 at byte 9`},
		{"surrogate escape after an escaped backslash", `{"a": "\\", "b": "\ud800"}`, `\ud800 at byte 18`},
		{"duplicate key", `{"count": 1, "count": 2}`, `duplicate key "count" at count`},
		{"duplicate key, wrapped", `{"data": {"count": 1, "count": 2}}`, `duplicate key "count" at data.count`},
		{"duplicate wrapper", `{"data": {"a": 1}, "data": {"b": 2}}`, `duplicate key "data" at data`},
		{"duplicate wrapper, first not an object", `{"data": 5, "data": {"count": 5}}`, `duplicate key "data" at data`},
		{"duplicate key, nested", `{"meta": {"run": {"id": 1, "id": 1}}}`, `duplicate key "id" at meta.run.id`},
		{"duplicate key in an array", `{"runs": [{"id": 1}, {"id": 2, "id": 3}]}`, `duplicate key "id" at runs[1].id`},
		{"duplicate key spelt with an escape", `{"a": 1, "\u0061": 2}`, `duplicate key "a" at a`},
		{"duplicate odd key", `{"a.b": 1, "a.b": 2}`, `duplicate key "a.b" at ["a.b"]`},
		{"duplicate empty key", `{"x": {"": 1, "": 2}}`, `duplicate key "" at x[""]`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseBody([]byte(c.body))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("ParseBody(%q) error = %v, want ErrInvalid", c.body, err)
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParseBody(%q) error = %q, want it to mention %q", c.body, err, c.want)
			}
			var v Value // stored data is read back as strictly
			if err := v.UnmarshalJSON([]byte(c.body)); !errors.Is(err, ErrInvalid) {
				t.Fatalf("Value.UnmarshalJSON(%q) error = %v, want ErrInvalid", c.body, err)
			}
		})
	}
}

// TestParseBodyKeepsWhatIsNotRewritten: the strict reading refuses only
// what would be rewritten; valid text and repeated keys in different
// objects pass unchanged.
func TestParseBodyKeepsWhatIsNotRewritten(t *testing.T) {
	cases := []struct {
		name string
		body string
		want string
	}{
		{"surrogate pair escape", `{"s": "\ud83d\ude00"}`, "{\"s\":\"\U0001F600\"}"},
		{"raw multi-byte text", "{\"s\": \"caf\u00e9 \xf0\x9f\x98\x80\"}", "{\"s\":\"caf\u00e9 \U0001F600\"}"},
		{"escaped backslash before u", `{"s": "\\ud800"}`, `{"s":"\\ud800"}`},
		{"escaped quote then escape", `{"s": "\"\u00e9"}`, "{\"s\":\"\\\"\u00e9\"}"},
		{"same key in different objects", `{"a": {"id": 1}, "b": {"id": 1}, "c": [{"id": 1}, {"id": 1}]}`, `{"a":{"id":1},"b":{"id":1},"c":[{"id":1},{"id":1}]}`},
		{"data beside a data field inside", `{"data": {"data": 1, "count": 2}}`, `{"count":2,"data":1}`},
		{"NUL escape", `{"s": "\u0000"}`, `{"s":"\u0000"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := mustParse(t, c.body).MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != c.want {
				t.Fatalf("ParseBody(%s) = %s, want %s", c.body, got, c.want)
			}
		})
	}
}
