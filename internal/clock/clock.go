// Package clock is the only place Interlock reads the time.
//
// Every decision in the core packages takes `now` as an argument; runtimes
// obtain it from a Clock. The real clock is used by `interlock serve`; the
// virtual clock drives `interlock simulate` and tests. No other package may
// call time.Now.
package clock

import (
	"sync"
	"time"
)

// Clock tells the current instant.
type Clock interface {
	Now() time.Time
}

// Real is the wall clock.
type Real struct{}

// Now returns the current wall-clock time in UTC.
func (Real) Now() time.Time { return time.Now().UTC() }

// Virtual is a clock that only moves when told to. It is safe for
// concurrent use.
type Virtual struct {
	mu  sync.Mutex
	now time.Time
}

// NewVirtual returns a virtual clock set to start.
func NewVirtual(start time.Time) *Virtual { return &Virtual{now: start.UTC()} }

// Now returns the virtual time.
func (v *Virtual) Now() time.Time {
	v.mu.Lock()
	defer v.mu.Unlock()
	return v.now
}

// Set moves the clock to t. Moving backwards is allowed; callers that need
// monotonic time must not do it.
func (v *Virtual) Set(t time.Time) {
	v.mu.Lock()
	v.now = t.UTC()
	v.mu.Unlock()
}

// Advance moves the clock forward by d.
func (v *Virtual) Advance(d time.Duration) {
	v.mu.Lock()
	v.now = v.now.Add(d)
	v.mu.Unlock()
}
