//go:build !unix

package command

import (
	"os"
	"syscall"
)

// sysProcAttr sets nothing: process groups and Pdeathsig are Unix's.
func sysProcAttr() *syscall.SysProcAttr { return nil }

// killGroup kills the program only: without process groups, what it
// started is not reached.
func killGroup(p *os.Process) error { return p.Kill() }
