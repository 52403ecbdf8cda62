package cli

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// recorder is an API that answers every request with an empty event page
// and remembers what it was asked.
type recorder struct {
	mu   sync.Mutex
	reqs []string // method and URL of each request
	got  chan struct{}
}

func newRecorder(t *testing.T) (*recorder, string) {
	rec := &recorder{got: make(chan struct{}, 100)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec.mu.Lock()
		rec.reqs = append(rec.reqs, r.Method+" "+r.URL.String())
		rec.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"events": [], "next": "0"}`)
		rec.got <- struct{}{}
	}))
	t.Cleanup(srv.Close)
	return rec, srv.URL
}

func (r *recorder) requests() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.reqs...)
}

// TestPauseUntilOutOfBoundsIsRefusedBeforeSending: the CLI applies the
// server's bound on --until (in the future, at most a year ahead) itself,
// and an --until given empty, and sends nothing.
func TestPauseUntilOutOfBoundsIsRefusedBeforeSending(t *testing.T) {
	rec, url := newRecorder(t)
	for _, c := range []struct{ until, want string }{
		{"9999-12-31T23:59:59Z", "--until 9999-12-31T23:59:59Z is more than a year ahead"},
		{"367d", "is more than a year ahead"},
		{"2000-01-01T00:00:00Z", "--until 2000-01-01T00:00:00Z is not in the future"},
		{"0001-01-01T00:00:00Z", "is not in the future"},
		{"", "--until is empty"},
	} {
		code, _, errOut := run(t, "pause", "p", "--until", c.until, "--server", url)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("--until %q: exit %d, stderr %q; want exit %d mentioning %q", c.until, code, errOut, ExitUsage, c.want)
		}
	}
	if reqs := rec.requests(); len(reqs) != 0 {
		t.Fatalf("refused flags still sent %v", reqs)
	}
	// Within the bound, the request goes out (the recorder's answer is
	// not a pipeline view, which does not matter here).
	run(t, "pause", "p", "--until", "300d", "--server", url)
	if reqs := rec.requests(); len(reqs) != 1 || reqs[0] != "POST /v1/pipelines/p/pause" {
		t.Fatalf("requests %v", reqs)
	}
}
