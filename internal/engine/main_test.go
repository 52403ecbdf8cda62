package engine_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/interlockhq/interlock/internal/engine"
)

// TestMain fails the package when any input of any test read a fact its
// needs did not name (a late read, engine/facts.go): each such read is a
// decision made between two reads.
func TestMain(m *testing.M) {
	code := m.Run()
	if s := engine.ProcessFactsStats(); s.LateReads > 0 {
		fmt.Fprintf(os.Stderr, "FAIL: %d late reads (facts an input's needs did not name); the last: %s\n", s.LateReads, s.LastLate)
		code = 1
	}
	os.Exit(code)
}
