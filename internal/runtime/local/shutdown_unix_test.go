//go:build unix

package local

import (
	"context"
	"log/slog"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store/sqlite"
	"github.com/interlockhq/interlock/internal/testenv/testproc"
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
	pids := testproc.ReadPIDs(t, pidfile, 2, time.Minute)
	shell, grandchild := pids[0], pids[1]
	defer func() { _ = syscall.Kill(grandchild, syscall.SIGKILL); _ = syscall.Kill(shell, syscall.SIGKILL) }()

	cancel() // serve's shutdown
	select {
	case <-stopped:
	case <-time.After(2 * time.Minute):
		t.Fatal("the timer loop did not return after its drain period")
	}
	// When the loop has returned, the stopped work has returned too: the
	// group was killed (the shell reaped by the runner; the grandchild,
	// signalled with it, may take a moment more to die under load).
	testproc.WaitGone(t, 30*time.Second, shell, grandchild)
	r, err := st.RunGet(t.Context(), run.Key{PipelineID: "long", ScheduleID: "stream", Period: "2026-03-10"})
	if err != nil {
		t.Fatal(err)
	}
	if r.State != run.Triggering || !r.TriggerInFlight {
		t.Errorf("the stopped job's run is %s (in flight %v), want its call left in flight for the next start", r.State, r.TriggerInFlight)
	}
}
