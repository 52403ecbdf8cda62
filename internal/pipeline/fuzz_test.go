package pipeline

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/interlockhq/interlock/internal/confdec"
)

// The loaders must never panic, and must either return a value or an
// error that is confdec.Errors (product spec §8: no panic on any config).

func addFiles(f *testing.F, pattern string) {
	files, _ := filepath.Glob(pattern)
	for _, file := range files {
		if data, err := os.ReadFile(file); err == nil {
			f.Add(data)
		}
	}
}

func FuzzParsePipeline(f *testing.F) {
	addFiles(f, "testdata/valid/*.yaml")
	addFiles(f, "testdata/invalid/*.yaml")
	f.Add([]byte("a: &a [*a, *a]\nb: *a\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := ParsePipeline("f.yaml", data, testOptions())
		checkResult(t, p != nil, err)
	})
}

func FuzzParseSettings(f *testing.F) {
	f.Add([]byte(productSettings))
	f.Add([]byte("{}"))
	f.Add([]byte("server: {addr: \"0.0.0.0:1\", tokens: [{name: a, role: admin, tokenEnv: A}]}\nalerts: [{type: file, path: /x, match: {types: [JOB_FAILED], levels: [error]}}]\n"))
	f.Add([]byte("store: postgres://u:p@h/d\ntriggers: {allowAddresses: [::1, 10.0.0.0/8]}\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ParseSettings("f.yaml", data)
		checkResult(t, s != nil, err)
	})
}

func FuzzParseCalendar(f *testing.F) {
	f.Add([]byte("name: holidays\ndays: [sat, Sunday]\ndates: [2026-12-25, \"20260101\"]\n"))
	f.Add([]byte("name: x\ndates: [2026-02-30]\n"))
	f.Add([]byte("days: sat\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		c, err := ParseCalendar("f.yaml", data)
		checkResult(t, c != nil, err)
	})
}

func checkResult(t *testing.T, ok bool, err error) {
	t.Helper()
	if ok == (err != nil) {
		t.Fatalf("value returned: %v, error: %v; want exactly one", ok, err)
	}
	if err != nil {
		if _, isErrs := err.(confdec.Errors); !isErrs {
			t.Fatalf("error is %T, want confdec.Errors: %v", err, err)
		}
	}
}
