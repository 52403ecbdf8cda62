package pipeline

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

func TestExpandTemplate(t *testing.T) {
	vars := TemplateVars{Pipeline: "gold", Schedule: "cron", Date: "2026-03-10", Hour: "07", RunID: "r-1"}
	env := func(name string) (string, bool) {
		if name == "INTERLOCK_TOKEN" {
			return "s3cret", true
		}
		return "", false
	}
	for _, tc := range []struct{ in, want, err string }{
		{in: "plain", want: "plain"},
		{in: "", want: ""},
		{in: "${PIPELINE}/${SCHEDULE}/${DATE}T${HOUR}/${RUN_ID}", want: "gold/cron/2026-03-10T07/r-1"},
		{in: "Bearer ${env:INTERLOCK_TOKEN}", want: "Bearer s3cret"},
		{in: "cost $5, $$ and $PATH stay", want: "cost $5, $$ and $PATH stay"},
		{in: "$${DATE} is literal", want: "${DATE} is literal"},
		{in: "${date}", err: "unknown variable ${date}, did you mean ${DATE}?"},
		{in: "${NOPE}", err: "unknown variable ${NOPE}"},
		{in: "${}", err: "empty variable ${}"},
		{in: "x ${DATE", err: `"${DATE" has no closing }`},
		{in: "${env:}", err: `"" is not an environment variable name`},
		{in: "${env:A-B}", err: `"A-B" is not an environment variable name`},
		{in: "${env:INTERLOCK_MISSING}", err: "environment variable INTERLOCK_MISSING is not set"},
		{in: "${${DATE}}", err: "unknown variable ${${DATE}"},
	} {
		got, err := ExpandTemplate(tc.in, vars, env)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%q: %v", tc.in, err)
		case tc.err == "" && got != tc.want:
			t.Errorf("%q = %q, want %q", tc.in, got, tc.want)
		case tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)):
			t.Errorf("%q: error %v, want %q", tc.in, err, tc.err)
		case tc.err != "" && !errors.Is(err, ErrTemplate):
			t.Errorf("%q: error does not wrap ErrTemplate", tc.in)
		}
	}
	if _, err := ExpandTemplate("${env:INTERLOCK_TOKEN}", vars, nil); err == nil {
		t.Error("nil env must leave every variable unset")
	}
}

func TestCheckTemplate(t *testing.T) {
	allow := []string{"INTERLOCK_*", "ETL_TOKEN"}
	for in, ok := range map[string]bool{
		"${DATE}":                   true,
		"${env:INTERLOCK_X}":        true,
		"${env:ETL_TOKEN}":          true,
		"${env:ETL_TOKEN2}":         false,
		"${env:HOME}":               false,
		"${env:interlock_x}":        false,
		"a ${HOUR} b ${RUN_ID} c":   true,
		"${DATE} ${bogus}":          false,
		"$${env:HOME} is literal":   true,
		"unterminated ${env:HOME":   false,
		"JSON {\"a\": \"${DATE}\"}": true,
	} {
		if err := CheckTemplate(in, allow); (err == nil) != ok {
			t.Errorf("CheckTemplate(%q) = %v, want ok=%v", in, err, ok)
		}
	}
}

func TestEnvAllowed(t *testing.T) {
	for _, tc := range []struct {
		name     string
		patterns []string
		want     bool
	}{
		{"INTERLOCK_TOKEN", DefaultEnvAllow, true},
		{"INTERLOCK_", DefaultEnvAllow, true},
		{"AWS_SECRET_ACCESS_KEY", DefaultEnvAllow, false},
		{"X", []string{"[", "X"}, true}, // a malformed pattern matches nothing, the next still counts
		{"X", nil, false},
	} {
		if got := EnvAllowed(tc.name, tc.patterns); got != tc.want {
			t.Errorf("EnvAllowed(%q, %v) = %v", tc.name, tc.patterns, got)
		}
	}
}

func TestFileSecrets(t *testing.T) {
	lookup := func(name string) (string, bool) {
		if name == FilePrefix+"/run/secrets/token" {
			return "s3cr3t", true
		}
		return "", false
	}
	got, err := ExpandTemplate("Bearer ${file:/run/secrets/token}", TemplateVars{}, lookup)
	if err != nil || got != "Bearer s3cr3t" {
		t.Fatalf("expand = %q, %v", got, err)
	}
	if _, err := ExpandTemplate("${file:/run/secrets/missing}", TemplateVars{}, lookup); err == nil || !strings.Contains(err.Error(), "cannot be read") {
		t.Fatalf("missing file: %v", err)
	}
	for _, bad := range []string{"${file:token}", "${file:/run/../etc/passwd}", "${file:}"} {
		if err := CheckTemplate(bad, nil); err == nil {
			t.Errorf("CheckTemplate(%q) accepted", bad)
		}
	}
	if err := CheckTemplate("${file:/run/secrets/token}", nil); err != nil {
		t.Fatalf("valid file secret refused: %v", err)
	}
}

func TestEnvRefs(t *testing.T) {
	got := EnvRefs("u=${env:A_1} ${DATE} $${env:LITERAL} ${env:B} ${env:A_1} ${env:bad-name")
	if want := []string{"A_1", "B"}; !slices.Equal(got, want) {
		t.Fatalf("EnvRefs = %q, want %q", got, want)
	}
}
