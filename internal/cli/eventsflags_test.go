package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"
)

// TestEventsRefusesEmptyFilters: --pipeline "$UNSET" would have listed
// every pipeline's events; an empty or unreadable filter is a usage
// error, and nothing is sent.
func TestEventsRefusesEmptyFilters(t *testing.T) {
	rec, url := newRecorder(t)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--pipeline", ""}, "--pipeline is empty"},
		{[]string{"--since", ""}, "--since is empty"},
		{[]string{"--pipeline=", "--since", "1h"}, "--pipeline is empty"},
		{[]string{"--since", "yesterday"}, `--since "yesterday": want an RFC 3339 time`},
		{[]string{"--since", "-2h"}, `--since "-2h"`},
	} {
		code, _, errOut := run(t, append([]string{"events", "--server", url}, c.args...)...)
		if code != ExitUsage || !strings.Contains(errOut, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d mentioning %q", c.args, code, errOut, ExitUsage, c.want)
		}
	}
	if reqs := rec.requests(); len(reqs) != 0 {
		t.Fatalf("refused flags still sent %v", reqs)
	}
}

// TestEventsFollowKeepsSinceUntilACursor: an empty first page returns the
// cursor it was given, 0; --follow used to drop --since then and poll
// with after=0 alone, which is "from the beginning": every old event.
func TestEventsFollowKeepsSinceUntilACursor(t *testing.T) {
	rec, url := newRecorder(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan int)
	var out, errb bytes.Buffer
	go func() {
		done <- Main(ctx, Env{Args: []string{"events", "--server", url, "--since", "1h", "--follow"}, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errb, Version: "test"})
	}()
	for range 2 {
		select {
		case <-rec.got:
		case <-time.After(10 * time.Second):
			t.Fatal("events --follow did not poll twice")
		}
	}
	cancel()
	<-done
	reqs := rec.requests()
	if len(reqs) < 2 || !strings.Contains(reqs[1], "since=1h") {
		t.Fatalf("the second poll of an empty log lost --since: %v", reqs)
	}
}
