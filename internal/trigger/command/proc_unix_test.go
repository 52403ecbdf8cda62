//go:build unix

package command

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/trigger"
)

// alive reports whether pid is a process that has not ended: kill(pid, 0)
// finds it, and it is not a zombie waiting to be reaped (an orphan's
// reaper, the container's init, may take its time).
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err) || !dirExists("/proc/self")
	}
	// "pid (comm) S …": the state follows the last ')'.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

func dirExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.IsDir()
}

// waitGone waits up to d for every pid to end.
func waitGone(t *testing.T, d time.Duration, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(d)
	for _, pid := range pids {
		for alive(pid) {
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL) // leave nothing behind
				t.Fatalf("process %d still runs", pid)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// readPIDs waits up to 10s for file to hold n pids, one a line.
func readPIDs(t *testing.T, file string, n int) []int {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		b, _ := os.ReadFile(file)
		if lines := strings.Fields(string(b)); len(lines) >= n {
			pids := make([]int, n)
			for i := range pids {
				pid, err := strconv.Atoi(lines[i])
				if err != nil {
					t.Fatalf("%s: %q", file, b)
				}
				pids[i] = pid
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %q, want %d pids", file, b, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
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
			pids := readPIDs(t, pidfile, 2)
			shell, grandchild := pids[0], pids[1]
			if !alive(shell) || !alive(grandchild) {
				t.Fatalf("shell %d alive %v, grandchild %d alive %v", shell, alive(shell), grandchild, alive(grandchild))
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
