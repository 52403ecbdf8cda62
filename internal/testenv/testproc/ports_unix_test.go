//go:build unix

package testproc

import "testing"

// TestAReservedPortIsNotGivenAgain: a port FreePort gave is held
// (another open of its lock, as another test process's, is refused), so
// two packages' servers started at once never share one. Unix only: where
// there is no flock, reserve claims nothing.
func TestAReservedPortIsNotGivenAgain(t *testing.T) {
	port, err := FreePort()
	if err != nil {
		t.Fatal(err)
	}
	if reserve(port) {
		t.Fatalf("port %d reserved twice", port)
	}
}
