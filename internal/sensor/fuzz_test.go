package sensor

import (
	"bytes"
	"errors"
	"testing"
	"unicode/utf8"
)

// FuzzParseBody checks that no body makes ParseBody panic, that every
// refusal wraps ErrInvalid, and that what it accepts survives storage: the
// object re-marshals to canonical JSON that reads back Equal and marshals to
// the same bytes, and (unless it has the wrapped shape itself) is accepted
// again as a flat body.
func FuzzParseBody(f *testing.F) {
	for _, seed := range []string{
		`{"count": 5}`,
		`{"data": {"count": 5, "status": "ready"}}`,
		`{"data": {"data": {"a": 1}}}`,
		`{"n": 1e6, "m": 12345678901234567890, "k": 9007199254740993, "f": -0.0}`,
		`{"s": "caf\u00e9 \ud83d\ude00", "z": null, "a": [true, {"b": []}]}`,
		`{"a": 1} x`,
		`[1]`,
		``,
		`{"count": 1, "count": 2}`,
		`{"data": {"count": 1, "count": 2}}`,
		`{"data": 5, "data": {"count": 5}}`,
		`{"a": 1, "\u0061": 2}`,
		`{"s": "\ud800"}`,
		`{"s": "\\ud800", "t": "\"\udc00"}`,
		"{\"s\": \"\xff\"}",
		"{\"s\": \"\xed\xa0\x80\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		obj, err := ParseBody(body)
		if err != nil {
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if !utf8.Valid(body) {
			t.Fatalf("accepted a body that is not UTF-8: %q", body)
		}
		out, err := obj.MarshalJSON()
		if err != nil {
			t.Fatalf("MarshalJSON: %v", err)
		}
		var back Object
		if err := back.UnmarshalJSON(out); err != nil {
			t.Fatalf("re-reading %s: %v", out, err)
		}
		if !back.Equal(obj) {
			t.Fatalf("round trip changed the object: %s", out)
		}
		again, _ := back.MarshalJSON()
		if !bytes.Equal(again, out) {
			t.Fatalf("marshalling is not canonical: %s then %s", out, again)
		}
		inner, hasData := obj.Get("data")
		if _, isObject := inner.Object(); hasData && isObject && obj.Len() == 1 {
			return // sent flat it would be read as wrapped; see TestParseBodyShapes
		}
		flat, err := ParseBody(out)
		if err != nil || !flat.Equal(obj) {
			t.Fatalf("re-sending %s flat: %v", out, err)
		}
	})
}
