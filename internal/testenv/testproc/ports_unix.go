//go:build unix

package testproc

import (
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
)

// held are the files whose locks reserve this process's ports: kept open
// for the process's life, so a lock ends only when the process does.
var held struct {
	mu    sync.Mutex
	files []*os.File
}

// reserve claims port for this test process among all test processes of
// the machine (an exclusive flock on a file named after the port), so that
// two packages' harnesses started at once never pick the same port: the
// second server's bind would fail, and its wait until it answers would be
// answered by the first one's server — whose end, when the first package
// ends, cuts the second package's tests off. False: another process holds
// it (or the lock cannot be had).
func reserve(port int) bool {
	dir := filepath.Join(os.TempDir(), "interlock-test-ports")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return true // no place for locks: the port as the kernel gave it
	}
	f, err := os.OpenFile(filepath.Join(dir, strconv.Itoa(port)), os.O_CREATE|os.O_RDWR, 0o666)
	if err != nil {
		return true
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return false
	}
	held.mu.Lock()
	held.files = append(held.files, f)
	held.mu.Unlock()
	return true
}
