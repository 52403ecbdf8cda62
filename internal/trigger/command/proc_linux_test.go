//go:build linux

package command

import (
	"context"
	"github.com/interlockhq/interlock/internal/testenv/testproc"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestMain lets the test binary play serve: re-executed with
// INTERLOCK_TEST_FAKE_SERVE set, it runs one command job (which never
// returns) and is then killed by the test.
func TestMain(m *testing.M) {
	if pidfile := os.Getenv("INTERLOCK_TEST_FAKE_SERVE"); pidfile != "" {
		fakeServe(pidfile)
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// fakeServe runs a command job as serve does: the program writes its pid
// and becomes a long sleep (exec, so the pid is the program's).
func fakeServe(pidfile string) {
	req := requestFor("{command: [/bin/sh, -c, \"echo $$ > " + pidfile + "; exec /bin/sleep 97\"]}")
	_, _ = Runner{}.Start(context.Background(), req)
}

// TestCommandDiesWithServe: after a kill -9 of serve, its command job's
// program went on running (a `sleep 97` outlived it), so the recovery's
// rerun at the end of the call's lease could start a second copy beside
// the first. On Linux the program now gets SIGKILL when serve dies.
func TestCommandDiesWithServe(t *testing.T) {
	pidfile := filepath.Join(t.TempDir(), "pid")
	serve := exec.Command(os.Args[0], "-test.run=^$")
	serve.Env = append(os.Environ(), "INTERLOCK_TEST_FAKE_SERVE="+pidfile)
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = serve.Process.Kill(); _ = serve.Wait() }()
	pid := testproc.ReadPIDs(t, pidfile, 1, 10*time.Second)[0]
	if !testproc.Alive(pid) {
		t.Fatalf("the command %d is not running", pid)
	}
	if err := serve.Process.Kill(); err != nil { // SIGKILL, as kill -9
		t.Fatal(err)
	}
	_ = serve.Wait()
	waitGone(t, 5*time.Second, pid)
}
