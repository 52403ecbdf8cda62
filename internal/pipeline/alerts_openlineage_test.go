package pipeline

import (
	"strings"
	"testing"
)

// TestOpenLineageAlertConfig: an openlineage entry needs a URL, takes an
// optional api key (tokenEnv or tokenFile, not both) and namespace; the
// namespace is refused on other sink types.
func TestOpenLineageAlertConfig(t *testing.T) {
	s, err := ParseSettings("interlock.yaml", []byte(`alerts:
  - {type: openlineage, url: "http://marquez:5000", tokenEnv: MARQUEZ_API_KEY, namespace: interlock-prod}
  - {type: openlineage, url: "https://lineage.example.com"}
`))
	if err != nil {
		t.Fatal(err)
	}
	if a := s.Alerts[0]; a.Type != AlertOpenLineage || a.URL != "http://marquez:5000" || a.TokenEnv != "MARQUEZ_API_KEY" || a.Namespace != "interlock-prod" {
		t.Fatalf("alerts[0] = %+v", a)
	}
	for _, tc := range []struct{ doc, want string }{
		{`alerts: [{type: openlineage}]`, "alerts[0].url: missing required field for alert type openlineage"},
		{`alerts: [{type: openlineage, url: "marquez:5000"}]`, "alerts[0].url: want an absolute http or https URL"},
		{`alerts: [{type: openlineage, url: "http://m", tokenEnv: K, tokenFile: k.txt}]`, "alerts[0].tokenFile: set either tokenEnv or tokenFile, not both"},
		{`alerts: [{type: openlineage, url: "http://m", tokenEnv: "not a name"}]`, "alerts[0].tokenEnv"},
		{`alerts: [{type: webhook, url: "http://m", namespace: x}]`, "alerts[0].namespace: not used by alert type webhook"},
		{`alerts: [{type: openlineage, url: "http://m", secretEnv: K}]`, "alerts[0].secretEnv: not used by alert type openlineage"},
	} {
		_, err := ParseSettings("interlock.yaml", []byte(tc.doc))
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "interlock.yaml") {
			t.Errorf("%s: error %v, want one naming the file and %q", tc.doc, err, tc.want)
		}
	}
}
