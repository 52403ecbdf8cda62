package testproc

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
)

func TestFreePortCanBeBound(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port))
	if err != nil {
		t.Fatalf("port %d: %v", port, err)
	}
	l.Close()
}

func TestOutputKeepsTheStartAndIsSafe(t *testing.T) {
	var o Output
	line := strings.Repeat("x", 1023) + "\n"
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 100 {
				if n, err := o.Write([]byte(line)); n != len(line) || err != nil {
					t.Errorf("Write = %d, %v", n, err)
				}
			}
		})
	}
	wg.Wait()
	if n := len(o.String()); n < maxOutput || n > maxOutput+len(line) {
		t.Errorf("kept %d bytes of 400 KiB, want the first %d (and at most one write more)", n, maxOutput)
	}
}
