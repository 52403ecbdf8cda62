package local

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

// Through the real serve: a sensor write's events reach an open event
// stream, /v1/health reports the refused file with its line, and a
// graceful shutdown ends open streams instead of waiting for them (its
// own limit is 10 s; this test allows 5).
func TestServeStreamsHealthAndShutsDownWithOpenStreams(t *testing.T) {
	dir := t.TempDir()
	write := writer(t, dir)
	write("interlock.yaml", "store: sqlite:./state.db\npipelines: ./pipelines\nalerts: [{type: console}]\n")
	write("pipelines/p.yaml", "pipeline: {id: p}\nschedule: {trigger: {key: k, check: exists}}\njob: {type: glue, config: {jobName: one}}\n")
	write("pipelines/broken.yaml", "pipeline: {id: b}\nschedule: {trigger: {key: k, check: exists}}\nvalidation: {rules: [{key: k, check: nosuch}]}\njob: {type: glue, config: {jobName: b}}\n")
	a, err := app.Open(t.Context(), filepath.Join(dir, "interlock.yaml"), app.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	addr := make(chan string, 1)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, a, Options{Addr: "127.0.0.1:0", Console: io.Discard, Listening: func(s string) { addr <- s }})
	}()
	var base string
	select {
	case s := <-addr:
		base = "http://" + s
	case err := <-done:
		t.Fatalf("serve stopped: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("serve did not start")
	}

	resp, err := http.Get(base + "/v1/events/stream")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	lines := make(chan string, 100)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	next := func(prefix string) string {
		t.Helper()
		deadline := time.After(10 * time.Second)
		for {
			select {
			case l, ok := <-lines:
				if !ok {
					t.Fatalf("stream ended waiting for %q", prefix)
				}
				if strings.HasPrefix(l, prefix) {
					return l
				}
			case <-deadline:
				t.Fatalf("no %q line in time", prefix)
			}
		}
	}
	next(": stream from")
	req, _ := http.NewRequest("PUT", base+"/v1/pipelines/p/sensors/k", strings.NewReader(`{"rows": 5}`))
	req.Header.Set("Content-Type", "application/json")
	put, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	put.Body.Close()
	if put.StatusCode != 200 {
		t.Fatalf("sensor write: %d", put.StatusCode)
	}
	if data := next("data: "); !strings.Contains(data, `"pipelineId":"p"`) {
		t.Fatalf("streamed %s", data)
	}

	hr, err := http.Get(base + "/v1/health")
	if err != nil {
		t.Fatal(err)
	}
	var rep api.HealthReport
	err = json.NewDecoder(hr.Body).Decode(&rep)
	hr.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.RefusedConfigs) != 1 || !strings.HasSuffix(rep.RefusedConfigs[0].File, "broken.yaml") || rep.RefusedConfigs[0].Errors[0].Line != 3 {
		t.Errorf("refused configs %+v, want broken.yaml with an error on line 3", rep.RefusedConfigs)
	}
	if len(rep.Sinks) != 1 || !rep.Sinks[0].Configured || rep.Sinks[0].CursorAt == nil {
		t.Errorf("sinks %+v, want the console, configured, with a cursor", rep.Sinks)
	}

	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not stop within 5 s with an event stream open")
	}
	for range lines { // the stream ended
	}
}
