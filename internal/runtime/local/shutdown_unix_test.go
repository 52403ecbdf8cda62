//go:build unix

package local

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store/sqlite"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/command"
)

// TestShutdownEndsACommandJobsWholeGroup: serve stopping while a command
// job runs waits the drain period, then ends the job's whole process group
// — the shell's background grandchild included, which the kernel's
// parent-death signal does not reach (a `sh -c 'sleep 1500 & …'` survived
// serve before) — and leaves the call in flight for the crash rules: no
// result is recorded for a job that was stopped, not finished.
func TestShutdownEndsACommandJobsWholeGroup(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	dir := t.TempDir()
	st, err := sqlite.Open(t.Context(), filepath.Join(dir, "t.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	clk := clock.NewVirtual(time.Date(2026, 3, 10, 8, 0, 0, 0, time.UTC))
	eng := engine.New(engine.Options{Store: st, Clock: clk, Jobs: trigger.Registry{"command": command.Runner{}}})
	if err := eng.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	pidfile := filepath.Join(dir, "pids")
	doc := `pipeline: {id: long}
schedule: {trigger: {key: k, check: exists}}
job: {type: command, config: {command: [/bin/sh, -c, "echo $$ > ` + pidfile + `; /bin/sleep 1500 & echo $! >> ` + pidfile + `; wait"], timeout: 1h}}
`
	if _, err := eng.ApplyConfig(t.Context(), "long.yaml", []byte(doc)); err != nil {
		t.Fatal(err)
	}
	wake := make(chan struct{}, 1)
	eng.OnTimersChanged(func() {
		select {
		case wake <- struct{}{}:
		default:
		}
	})
	stopped := make(chan struct{})
	go func() {
		runTimers(ctx, eng, wake, slog.New(slog.DiscardHandler), 2, 2, 200*time.Millisecond)
		close(stopped)
	}()
	if _, err := eng.PutSensor(t.Context(), "long", "k", run.Detail("n", 1)); err != nil {
		t.Fatal(err)
	}
	pids := waitPIDs(t, pidfile, 2)
	shell, grandchild := pids[0], pids[1]
	defer func() { _ = syscall.Kill(grandchild, syscall.SIGKILL); _ = syscall.Kill(shell, syscall.SIGKILL) }()

	cancel() // serve's shutdown
	select {
	case <-stopped:
	case <-time.After(2 * time.Minute):
		t.Fatal("the timer loop did not return after its drain period")
	}
	// When the loop has returned, the stopped work has returned too: the
	// group was killed and reaped by the runner.
	for _, pid := range []int{shell, grandchild} {
		if processAlive(pid) {
			t.Errorf("process %d still runs after the shutdown", pid)
		}
	}
	r, err := st.RunGet(t.Context(), run.Key{PipelineID: "long", ScheduleID: "stream", Period: "2026-03-10"})
	if err != nil {
		t.Fatal(err)
	}
	if r.State != run.Triggering || !r.TriggerInFlight {
		t.Errorf("the stopped job's run is %s (in flight %v), want its call left in flight for the next start", r.State, r.TriggerInFlight)
	}
}

// waitPIDs reads n process ids, one a line, once the program wrote them.
func waitPIDs(t *testing.T, file string, n int) []int {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile(file)
		if f := strings.Fields(string(b)); len(f) >= n {
			pids := make([]int, n)
			for i := range pids {
				pid, err := strconv.Atoi(f[i])
				if err != nil {
					t.Fatalf("%s: %q", file, b)
				}
				pids[i] = pid
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("the job never wrote %d pids to %s", n, file)
		}
	}
}

// processAlive: the process exists and is neither a zombie nor dead (a
// killed grandchild may wait, a zombie, for a parent that reaps it).
func processAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err)
	}
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}
