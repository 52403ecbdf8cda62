package project

import (
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/pipeline"
)

// The warning judges the URL's port too: an entry with a port covers its
// address on that port only, and the warning then names both ports.
func TestGuardWarningJudgesThePort(t *testing.T) {
	for _, tc := range []struct {
		url, allow, want string // want "": no warning
	}{
		{"http://127.0.0.1:8080/run", "127.0.0.1:8080", ""},
		{"http://127.0.0.1:9090/run", "127.0.0.1:8080",
			"host 127.0.0.1 port 9090 is a loopback address, which triggers.allowAddresses allows only on port 8080: the SSRF guard will refuse every call unless interlock.yaml triggers.allowAddresses covers it"},
		{"http://127.0.0.1/run", "127.0.0.1:80", ""},   // http's port
		{"https://10.1.2.3/run", "10.0.0.0/8:443", ""}, // https's port
		{"http://10.1.2.3/run", "10.0.0.0/8:443", "host 10.1.2.3 port 80 is a private address, which triggers.allowAddresses allows only on port 443"},
		{"http://127.0.0.1:9090/run", "127.0.0.1/32", ""}, // no port: every port
		{"http://[::1]:8080/", "[::1]:8080", ""},
		{"http://localhost:8080/", "[::1]:8080", ""}, // one reachable address is enough
		{"http://localhost:8081/", "[::1]:8080", "host localhost (127.0.0.1, ::1) port 8081 is a loopback address, which triggers.allowAddresses allows only on port 8080"},
		{"http://10.1.2.3:8080/run", "", "host 10.1.2.3 is a private address: the SSRF"}, // unchanged without a port-based reason
	} {
		t.Run(tc.url+" "+tc.allow, func(t *testing.T) {
			doc := "pipeline: {id: p}\nschedule: {trigger: {key: k, check: exists}}\njob:\n  type: http\n  config:\n    url: \"" + tc.url + "\"\n"
			p, err := pipeline.ParsePipeline("p.yaml", []byte(doc), pipeline.Options{})
			if err != nil {
				t.Fatal(err)
			}
			root, _ := confdec.ParseDocument("p.yaml", []byte(doc))
			var allow []pipeline.AllowAddress
			if tc.allow != "" {
				e, err := pipeline.ParseAllowAddress(tc.allow)
				if err != nil {
					t.Fatal(err)
				}
				allow = append(allow, e)
			}
			ws := ssrfWarnings("p.yaml", root, p, allow)
			switch {
			case tc.want == "" && len(ws) != 0:
				t.Errorf("unexpected warning: %v", ws)
			case tc.want != "" && (len(ws) != 1 || !strings.HasPrefix(ws[0].Msg, tc.want)):
				t.Errorf("warnings %v\nwant %q", ws, tc.want)
			}
		})
	}
}
