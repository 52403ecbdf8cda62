package testproc

import (
	"context"
	"os/exec"
	"runtime"
	"syscall"
	"time"
)

// Server is a server process a harness started (ddblocal, pglocal): its
// output kept for failure messages, and Done closed when it exited.
type Server struct {
	Cmd *exec.Cmd
	Out *Output
	// Done is closed when the process exited.
	Done chan struct{}
}

// Start starts cmd in a process group of its own, its output into the
// Server's Output, killed when the test process dies: cmd is started from
// a goroutine locked to an OS thread that never exits, so Pdeathsig (sent
// when the starting thread dies) fires exactly when the test process
// dies, even on a panic or a test timeout that skips Main. cmd's
// SysProcAttr, if set, keeps its other fields (a Credential).
func Start(cmd *exec.Cmd) (*Server, error) {
	s := &Server{Cmd: cmd, Out: &Output{}, Done: make(chan struct{})}
	cmd.Stdout, cmd.Stderr = s.Out, s.Out
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.Pdeathsig, cmd.SysProcAttr.Setpgid = syscall.SIGKILL, true
	started := make(chan error, 1)
	go func() {
		// LockOSThread is never undone: the thread lives as long as the process.
		runtime.LockOSThread()
		err := cmd.Start()
		started <- err
		if err != nil {
			return
		}
		_ = cmd.Wait()
		close(s.Done)
		select {} // keep the thread
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	return s, nil
}

// Ready is Poll for at most timeout, stopped at once when the process
// exits: nil, or the last attempt's error.
func (s *Server) Ready(timeout time.Duration, try func(context.Context) error) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	go func() {
		select {
		case <-s.Done:
			cancel() // it died: stop waiting
		case <-ctx.Done():
		}
	}()
	return Poll(ctx, try)
}

// End sends sig to the process (to its whole group when group is set)
// and waits until it exited; after timeout its group is killed.
func (s *Server) End(sig syscall.Signal, group bool, timeout time.Duration) {
	if s.Cmd.Process == nil {
		return
	}
	if group {
		_ = syscall.Kill(-s.Cmd.Process.Pid, sig)
	} else {
		_ = s.Cmd.Process.Signal(sig)
	}
	select {
	case <-s.Done:
	case <-time.After(timeout):
		_ = syscall.Kill(-s.Cmd.Process.Pid, syscall.SIGKILL)
		<-s.Done
	}
}
