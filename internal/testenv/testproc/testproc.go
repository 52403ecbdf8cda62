// Package testproc holds what the test harnesses that start a server
// process (ddblocal, pglocal, sfnlocal) share: a free loopback port, a
// bounded, concurrency-safe buffer for the process's output, quoted in
// failure messages, the wait until it answers (Poll), the server a test
// process shares (Backend: the one the environment names, or one started
// on first use; Missing, the skip or failure when there is none), and on
// Linux the process itself, bound to the test process's life (Server).
package testproc

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"strings"
	"sync"
	"time"
)

// FreePort returns a TCP port free on 127.0.0.1 at the time of the call
// and reserved for this test process among the machine's test processes
// (reserve): another test process never gets it, though another program
// may take it before the caller binds it (retry then).
func FreePort() (int, error) {
	for range maxPortTries {
		port, err := kernelPort()
		if err != nil {
			return 0, err
		}
		if reserve(port) {
			return port, nil
		}
	}
	return 0, fmt.Errorf("no free port reserved after %d tries (another test process holds each)", maxPortTries)
}

// maxPortTries bounds FreePort's picks of a port another process holds.
const maxPortTries = 100

// kernelPort is a port the kernel gives as free on 127.0.0.1.
func kernelPort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// maxOutput bounds what an Output keeps: enough to diagnose a start.
const maxOutput = 64 << 10

// Output collects a process's output (stdout, stderr) for failure
// messages: safe for concurrent writes, and it keeps the first 64 KiB.
type Output struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write keeps p while the output is under its bound; it never fails.
func (o *Output) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.b.Len() > maxOutput {
		return len(p), nil
	}
	return o.b.Write(p)
}

// String is the output kept, trimmed of surrounding space.
func (o *Output) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.TrimSpace(o.b.String())
}

// Poll tries try (each attempt bounded by 2 s, 50 ms apart) until it
// succeeds or ctx ends: nil, or the last attempt's error.
func Poll(ctx context.Context, try func(context.Context) error) error {
	for {
		actx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := try(actx)
		cancel()
		if err == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}
