// Package serveproc runs the real `interlock` binary for end-to-end tests:
// Build compiles it once for a test process, Start runs `interlock serve`
// on 127.0.0.1 and a free port in a project directory and waits (bounded)
// for the address it prints, and the server is stopped with SIGTERM when
// the test ends.
package serveproc

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/testenv/testproc"
)

const (
	// StartTimeout bounds the wait for serve's address.
	StartTimeout = 30 * time.Second
	// StopTimeout bounds the wait for serve to exit on SIGTERM.
	StopTimeout = 20 * time.Second
)

// Build compiles cmd/interlock into a new temporary directory and returns
// the binary's path and a func that removes it. A test package calls it
// from TestMain.
func Build() (binary string, remove func(), err error) {
	dir, err := os.MkdirTemp("", "interlock-bin-*")
	if err != nil {
		return "", nil, err
	}
	binary = filepath.Join(dir, "interlock")
	build := exec.Command("go", "build", "-o", binary, "github.com/interlockhq/interlock/cmd/interlock")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		os.RemoveAll(dir)
		return "", nil, err
	}
	return binary, func() { os.RemoveAll(dir) }, nil
}

// A Server is a running `interlock serve`.
type Server struct {
	URL  string // http://127.0.0.1:PORT
	Logs *testproc.Output
	cmd  *exec.Cmd
	done chan error
	stop sync.Once
}

// Start runs `binary serve --addr 127.0.0.1:0 args…` in dir with env added
// to the test's environment, and returns once it listens. The server is
// stopped (SIGTERM, then killed) when t ends.
func Start(t testing.TB, binary, dir string, env []string, args ...string) *Server {
	t.Helper()
	cmd := exec.Command(binary, append([]string{"serve", "--addr", "127.0.0.1:0"}, args...)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Logs: &testproc.Output{}, cmd: cmd, done: make(chan error, 1)}
	cmd.Stderr = s.Logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { s.done <- cmd.Wait() }()
	t.Cleanup(func() { s.Stop(t) })
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "interlock listening on "); ok {
				addr <- u
			}
		}
	}()
	select {
	case s.URL = <-addr:
	case err := <-s.done:
		s.done <- err
		t.Fatalf("serve exited before listening (%v):\n%s", err, s.Logs.String())
	case <-time.After(StartTimeout):
		t.Fatalf("serve did not print its address within %s:\n%s", StartTimeout, s.Logs.String())
	}
	return s
}

// Stop ends the server with SIGTERM (bounded, then SIGKILL); a second call
// does nothing. A graceful stop waits up to 30 s for timer work in flight
// (a command job's trigger call): Kill a server that has some.
func (s *Server) Stop(t testing.TB) {
	t.Helper()
	s.end(t, syscall.SIGTERM)
}

// Kill ends the server with SIGKILL, as a crash would; a second call, or
// Stop after it, does nothing.
func (s *Server) Kill(t testing.TB) {
	t.Helper()
	s.end(t, syscall.SIGKILL)
}

func (s *Server) end(t testing.TB, sig syscall.Signal) {
	t.Helper()
	s.stop.Do(func() {
		_ = s.cmd.Process.Signal(sig)
		select {
		case <-s.done:
		case <-time.After(StopTimeout):
			t.Errorf("serve did not stop within %s of SIGTERM", StopTimeout)
			_ = s.cmd.Process.Kill()
			<-s.done
		}
	})
}
