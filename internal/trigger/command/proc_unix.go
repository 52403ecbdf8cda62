//go:build unix

package command

import (
	"errors"
	"os"
	"syscall"
)

// killGroup kills the command's whole process group with SIGKILL: the
// program and whatever it started (a wrapper's children, a shell-less
// program's own workers), which would otherwise outlive a timeout or a
// cancellation and could still be working when the run is tried again.
// The program leads its group (Setpgid), so the group's id is its pid.
func killGroup(p *os.Process) error {
	err := syscall.Kill(-p.Pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return os.ErrProcessDone
	}
	return err
}
