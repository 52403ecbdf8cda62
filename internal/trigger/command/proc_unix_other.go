//go:build unix && !linux

package command

import "syscall"

// sysProcAttr starts the program in a process group of its own, so that
// killGroup reaches everything it started. Only Linux can tie the
// program's life to serve's (Pdeathsig): elsewhere a program outlives a
// kill -9 of serve.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}
