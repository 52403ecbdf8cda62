// Package seen keeps what a test fake saw (the requests, messages, spans
// or dialogs it received) for the test to read while the fake's handlers,
// on other goroutines, keep adding. It is the one place such a list is
// locked and copied; it decides nothing and knows no fake.
package seen

import "sync"

// A List is what a fake saw, in the order it saw it. Its zero value is an
// empty list, ready to use; it must not be copied once used.
type List[T any] struct {
	mu    sync.Mutex
	items []T
}

// Add appends vs.
func (l *List[T]) Add(vs ...T) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, vs...)
}

// All returns a copy of the list: nil while it is empty, and never changed
// by a later Add.
func (l *List[T]) All() []T {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]T(nil), l.items...)
}
