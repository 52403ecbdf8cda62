package simulate

import (
	"os"
	"runtime/debug"
	"sync"
)

// gcPercent is the garbage collector's target (GOGC) while a simulation
// runs, unless the GOGC environment variable names one. A simulation
// allocates quickly and keeps little: at the default of 100 the collector
// took a seventh of the CPU of `BenchmarkSimulate1000Pipelines30Days`,
// and 400 cut the run's CPU by about as much, for a heap that may grow to
// five times what is live instead of twice.
const gcPercent = 400

// gcTarget sets gcPercent while at least one simulation runs in the
// process, and restores the previous setting when the last one ends.
var gcTarget struct {
	mu      sync.Mutex
	running int
	prev    int
}

// raiseGC applies gcPercent for a simulation; the caller calls the
// function it returns when the simulation ends.
func raiseGC() (restore func()) {
	if _, set := os.LookupEnv("GOGC"); set {
		return func() {}
	}
	g := &gcTarget
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.running == 0 {
		g.prev = debug.SetGCPercent(gcPercent)
	}
	g.running++
	return func() {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.running--
		if g.running == 0 {
			debug.SetGCPercent(g.prev)
		}
	}
}
