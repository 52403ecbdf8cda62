package secrettest

import "testing"

// The escapers write newline, return and tab the short way, as the
// encoders they stand for do (encoding/json, Python's repr).
func TestShortEscapes(t *testing.T) {
	const s = "a\nb\rc\td"
	for _, tc := range []struct{ name, got, want string }{
		{"jsonEscape", jsonEscape(s, jsonStyle{}), `a\nb\rc\td`},
		{"pythonRepr", pythonRepr(s, false), `a\nb\rc\td`},
	} {
		if tc.got != tc.want {
			t.Errorf("%s(%q) = %s, want %s", tc.name, s, tc.got, tc.want)
		}
	}
}
