//go:build linux

package command

import "syscall"

// sysProcAttr starts the program in a process group of its own (so that
// killGroup reaches everything it started, and a terminal's Ctrl-C goes
// to serve, which ends its jobs itself), and asks the kernel to SIGKILL it
// when serve dies (Pdeathsig): after a kill -9 of serve, a program still
// running would otherwise go on, and the recovery's rerun at the end of
// the call's lease could start a second copy beside it. Pdeathsig reaches
// the program only, not what it started; the kernel sends it when the
// thread that started the program ends, which in a Go process happens
// only with the process (the runtime keeps its threads unless a goroutine
// exits while locked to one, which the trigger path never does).
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
