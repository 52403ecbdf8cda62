//go:build unix

package testproc

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// Alive reports whether pid is a process that has not ended: kill(pid, 0)
// finds it, and it is not a zombie waiting to be reaped (an orphan's
// reaper, the container's init, may take its time).
func Alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		st, serr := os.Stat("/proc/self")
		return !os.IsNotExist(err) || serr != nil || !st.IsDir()
	}
	// "pid (comm) S …": the state follows the last ')'.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z' && s[i+2] != 'X'
	}
	return true
}

// ReadPIDs waits up to d for file to hold n process ids, one a line (a
// program under test writes them), and returns them.
func ReadPIDs(t testing.TB, file string, n int, d time.Duration) []int {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		b, _ := os.ReadFile(file)
		if fields := strings.Fields(string(b)); len(fields) >= n {
			pids := make([]int, n)
			for i := range pids {
				pid, err := strconv.Atoi(fields[i])
				if err != nil {
					t.Fatalf("%s: %q", file, b)
				}
				pids[i] = pid
			}
			return pids
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s holds %q, want %d pids", file, b, n)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// WaitGone waits up to d for every pid to end, and fails the test naming
// the first that does not (killing it, to leave nothing behind). A
// process signalled a moment ago may still be dying: its end is waited
// for, not assumed.
func WaitGone(t testing.TB, d time.Duration, pids ...int) {
	t.Helper()
	deadline := time.Now().Add(d)
	for _, pid := range pids {
		for Alive(pid) {
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("process %d still runs %s later", pid, d)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}
