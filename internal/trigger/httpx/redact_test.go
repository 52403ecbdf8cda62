package httpx

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/trigger"
)

func TestSnippetCleansRedactsAndTruncates(t *testing.T) {
	s := &Secrets{}
	s.Add("hunter22")
	cases := map[string]struct{ in, want string }{
		"control characters":      {"a\x1b[31mb\x00c\r\nd\te\u202ef", "a[31mbc d ef"},
		"secret":                  {`{"echo":"hunter22"}`, `{"echo":"[redacted]"}`},
		"secret split by control": {"hun\x00ter22", "[redacted]"},
		"split, JSON-escaped":     {`{"echo":"hun\u200bter22"}`, `{"echo":"[redacted]"}`},
		"base64":                  {"echo aHVudGVyMjI=", "echo [redacted]"},
		"invalid UTF-8":           {"ok\xff\xfe!", "ok!"},
	}
	for name, c := range cases {
		if got := Snippet([]byte(c.in), s); got != c.want {
			t.Errorf("%s: Snippet(%q) = %q, want %q", name, c.in, got, c.want)
		}
	}
	long := Snippet([]byte(strings.Repeat("€", 1000)), s)
	if len(long) > MaxSnippet || !utf8.ValidString(long) || !strings.HasSuffix(long, "…") {
		t.Fatalf("long snippet: %d bytes, valid %v, %q", len(long), utf8.ValidString(long), long[len(long)-6:])
	}
}

func TestExpanderRecordsSecrets(t *testing.T) {
	env := func(name string) (string, bool) {
		if name == "INTERLOCK_TOKEN" {
			return "tok-from-env", true
		}
		return "", false
	}
	x := NewExpander(pipeline.TemplateVars{Pipeline: "orders", Date: "2026-03-10"}, env)
	h, err := x.Header("headers", map[string]string{"Authorization": "Bearer ${env:INTERLOCK_TOKEN}", "X-Team": "data-platform"})
	if err != nil {
		t.Fatal(err)
	}
	if h.Get("Authorization") != "Bearer tok-from-env" {
		t.Fatalf("headers = %v", h)
	}
	u, err := x.Str("url", "https://etl.example.com/${PIPELINE}/${DATE}")
	if err != nil || u != "https://etl.example.com/orders/2026-03-10" {
		t.Fatalf("url = %q, %v", u, err)
	}
	got := x.Secrets.Redact("Bearer tok-from-env | tok-from-env | data-platform | orders")
	if got != "[redacted] | [redacted] | [redacted] | orders" {
		t.Fatalf("Redact = %q", got)
	}
	_, err = x.Map("arguments", map[string]string{"b": "${env:INTERLOCK_B}", "a": "${env:INTERLOCK_A}"})
	if err == nil || !strings.Contains(err.Error(), "job.config.arguments.a: ") || !strings.Contains(err.Error(), "INTERLOCK_A is not set") {
		t.Fatalf("unset variable: %v", err)
	}
}

// A job's expander takes its secrets from the whole config, classified
// by use: the host read from the environment is shown, the token and the
// user info's password (and its Basic form) are not, even in a poll that
// expands only the URL.
func TestJobExpanderClassifiesByUse(t *testing.T) {
	env := map[string]string{"INTERLOCK_HOST": "127.0.0.1", "INTERLOCK_TOKEN": "tok-from-env", "INTERLOCK_PASS": "pass-from-env"}
	doc := "pipeline: {id: p}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: airflow, config: " +
		`{url: "http://etl:${env:INTERLOCK_PASS}@${env:INTERLOCK_HOST}:8080/", dagId: d, headers: {X-Api-Key: "${env:INTERLOCK_TOKEN}"}}` + "}\n"
	p, err := pipeline.ParsePipeline("p.yaml", []byte(doc), pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	x := NewJobExpander(trigger.Request{Type: string(pipeline.JobAirflow), Config: p.Job.Config}, func(n string) (string, bool) { v, ok := env[n]; return v, ok })
	if u, err := x.Str("url", p.Job.Config.Str("url")); err != nil || u != "http://etl:pass-from-env@127.0.0.1:8080/" {
		t.Fatalf("url = %q, %v", u, err)
	}
	got := x.Secrets.Redact("GET http://127.0.0.1:8080/: tok-from-env pass-from-env ZXRsOnBhc3MtZnJvbS1lbnY=")
	if got != "GET http://127.0.0.1:8080/: [redacted] [redacted] [redacted]" {
		t.Fatalf("Redact = %q", got)
	}
}
