package sqlstore

import (
	"testing"

	"github.com/interlockhq/interlock/internal/sensor"
)

// FuzzFlatObject: whatever flatObject accepts, sensor's decoder accepts
// too and reads as the same object, with the same canonical form.
func FuzzFlatObject(f *testing.F) {
	for _, s := range []string{
		`{}`, ` { } `, `{"files":3}`, `{"count":100,"date":"2026-03-01"}`, `{"a":true,"b":false,"c":null}`,
		`{"n":-0.5e+3}`, `{"n":1E2}`, `{"n":01}`, `{"n":1.}`, `{"n":.5}`, `{"n":-}`, `{"n":1e}`, `{"n":9007199254740993}`,
		`{"n":1.0}`, `{"n":123456789012345678901234567890}`, `{"a":1,"a":2}`, `{"a":"\u00e9"}`, `{"a":"é"}`, `{"a\n":1}`,
		`{"a":{"b":1}}`, `{"a":[1]}`, `{"a":1,}`, `{,}`, `{"a" 1}`, `{"a":1}x`, `{"a":tru}`, `{"a":truex}`, `[]`, `""`, `{"a":"b\"c"}`,
		"{\"a\":\"\x7f\"}", "{\"a\":\"\xe2\x80\"}", "{\"a\":\"\xed\xa0\x80\"}", `{"é":"—"}`, `{"":1}`, `{"a":1 , "b" : "x" }`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		fast, ok := flatObject(b)
		if !ok {
			return
		}
		var want sensor.Object
		if err := want.UnmarshalJSON(b); err != nil {
			t.Fatalf("flatObject accepted %q, the decoder refuses it: %v", b, err)
		}
		if !fast.Equal(want) {
			t.Fatalf("%q: flatObject %v, decoder %v", b, fast, want)
		}
		fj, _ := fast.MarshalJSON()
		wj, _ := want.MarshalJSON()
		if string(fj) != string(wj) {
			t.Fatalf("%q: flatObject writes %s, decoder's object %s", b, fj, wj)
		}
	})
}

// The forms the store writes take the fast path.
func TestFlatObjectTakesStoredForms(t *testing.T) {
	for _, s := range []string{`{"files":3}`, `{"count":100,"date":"2026-03-01"}`, `{"delta":-1.5,"ok":true,"why":null}`,
		`{"actionHint":"the job succeeded but its post-run checks never reported — check the process that writes audit","source":"watchdog"}`} {
		if _, ok := flatObject([]byte(s)); !ok {
			t.Errorf("%s: not decoded", s)
		}
	}
}
