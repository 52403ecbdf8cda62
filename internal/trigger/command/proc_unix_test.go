//go:build unix

package command

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/testenv/testproc"
	"github.com/interlockhq/interlock/internal/trigger"
)

// waitGone waits up to d for every pid to end.
func waitGone(t *testing.T, d time.Duration, pids ...int) {
	t.Helper()
	testproc.WaitGone(t, d, pids...)
}

// TestCancelKillsWhatTheCommandStarted: a program that starts a program of
// its own (here a shell backgrounding a sleep) is killed whole when the
// runner's context is cancelled, or at its timeout: killing only the
// direct child left the grandchild running, still at work when the run
// was tried again.
func TestCancelKillsWhatTheCommandStarted(t *testing.T) {
	for _, how := range []string{"cancel", "timeout"} {
		t.Run(how, func(t *testing.T) {
			pidfile := filepath.Join(t.TempDir(), "pids")
			config := `{command: [/bin/sh, -c, "echo $$ > ` + pidfile + `; /bin/sleep 97 & echo $! >> ` + pidfile + `; wait"]}`
			if how == "timeout" {
				config = `{command: [/bin/sh, -c, "echo $$ > ` + pidfile + `; /bin/sleep 97 & echo $! >> ` + pidfile + `; wait"], timeout: 1s}`
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			type answer struct {
				st  trigger.Started
				err error
			}
			done := make(chan answer, 1)
			go func() {
				st, err := Runner{}.Start(ctx, request(t, config))
				done <- answer{st, err}
			}()
			pids := testproc.ReadPIDs(t, pidfile, 2, 10*time.Second)
			shell, grandchild := pids[0], pids[1]
			if !testproc.Alive(shell) || !testproc.Alive(grandchild) {
				t.Fatalf("shell %d alive %v, grandchild %d alive %v", shell, testproc.Alive(shell), grandchild, testproc.Alive(grandchild))
			}
			if how == "cancel" {
				cancel()
			}
			select {
			case a := <-done:
				// A timeout is the job's failure; a cancellation (serve
				// stopping past its drain) says nothing of the job: no
				// result, the call stays in flight for the crash rules.
				switch {
				case how == "timeout" && (a.err != nil || a.st.Result == nil || a.st.Result.Status != trigger.StatusFailed):
					t.Errorf("result %+v, error %v, want a failure", a.st.Result, a.err)
				case how == "cancel" && (a.err == nil || a.st.Result != nil):
					t.Errorf("result %+v, error %v, want an error and no result", a.st.Result, a.err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("Start did not return")
			}
			waitGone(t, 5*time.Second, shell, grandchild)
		})
	}
}
