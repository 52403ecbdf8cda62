package sensor

import (
	"errors"
	"strings"
	"testing"
)

// TestKeysRefuseControlCharacters: a key holding a control character is
// refused at any level of a written body, with where it is; a string
// value may hold them. Stored data is read back whatever its keys, so a
// record accepted before the rule stays readable.
func TestKeysRefuseControlCharacters(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"NUL", `{"a\u0000b": 1}`, `key "a\x00b" at ["a\x00b"] holds a control character`},
		{"newline", `{"count\n": 1}`, `key "count\n"`},
		{"escape", `{"\u001b[31m": 1}`, `holds a control character`},
		{"DEL", `{"a\u007f": 1}`, `holds a control character`},
		{"C1 control", `{"a\u0085": 1}`, `holds a control character`},
		{"wrapped", `{"data": {"ok": true, "n\u0000": 1}}`, `at data["n\x00"]`},
		{"in an array", `{"runs": [{"id\t": 1}]}`, `at runs[0]["id\t"]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ParseBody([]byte(c.body))
			if !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ParseBody(%s) = %v, want ErrInvalid mentioning %q", c.body, err, c.want)
			}
			var v Value
			if err := v.UnmarshalJSON([]byte(c.body)); err != nil {
				t.Fatalf("stored data with such a key no longer reads: %v", err)
			}
		})
	}
	for _, body := range []string{
		`{"note": "line 1\nline 2\u0000\u001b"}`,
		`{"k": "tab\there", "zero-width": "a\u200bb", "émoji 😀": "ok"}`,
	} {
		if _, err := ParseBody([]byte(body)); err != nil {
			t.Errorf("ParseBody(%s): %v", body, err)
		}
	}
}

// TestReadJSON: the strict reader other JSON input shares with sensor
// bodies refuses the same things, with its own sentinel and wording.
func TestReadJSON(t *testing.T) {
	for _, c := range []struct{ name, body, want string }{
		{"a key twice", `{"period": "2026-03-09", "period": "2026-03-10"}`, `invalid JSON: duplicate key "period" at period`},
		{"invalid UTF-8", "{\"reason\": \"a\xffb\"}", "invalid JSON: not valid UTF-8 at byte 13"},
		{"lone surrogate", `{"reason": "\ud800"}`, `half of a UTF-16 surrogate pair`},
		{"control key", `{"period\u0000": 1}`, `holds a control character`},
		{"trailing", `{} {}`, `trailing content`},
		{"empty", ``, `invalid JSON: EOF`},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := ReadJSON([]byte(c.body))
			if !errors.Is(err, ErrJSON) || errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("ReadJSON(%q) = %v, want ErrJSON (not ErrInvalid) mentioning %q", c.body, err, c.want)
			}
		})
	}
	v, err := ReadJSON([]byte(`{"period": "2026-03-10", "reason": "a\nb"}`))
	if err != nil {
		t.Fatal(err)
	}
	obj, _ := v.Object()
	if got := strings.Join(obj.Keys(), ","); got != "period,reason" {
		t.Fatalf("keys %s", got)
	}
}
