package seen

import (
	"slices"
	"sync"
	"testing"
)

func TestListKeepsOrderAndCopies(t *testing.T) {
	var l List[string]
	if got := l.All(); got != nil {
		t.Fatalf("empty list: %v, want nil", got)
	}
	l.Add("a")
	l.Add("b", "c")
	got := l.All()
	if !slices.Equal(got, []string{"a", "b", "c"}) {
		t.Fatalf("All: %v, want [a b c]", got)
	}
	got[0] = "changed"
	l.Add("d")
	if again := l.All(); !slices.Equal(again, []string{"a", "b", "c", "d"}) {
		t.Fatalf("All after changing a copy and adding: %v, want [a b c d]", again)
	}
}

// Writers and a reader at once: run under -race, the list must be the
// only thing they share.
func TestListIsSafeAcrossGoroutines(t *testing.T) {
	var l List[int]
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			for j := range 100 {
				l.Add(i*100 + j)
				_ = l.All()
			}
		})
	}
	wg.Wait()
	got := l.All()
	slices.Sort(got)
	for i, v := range got {
		if v != i {
			t.Fatalf("after 8×100 adds: item %d is %d (%d items)", i, v, len(got))
		}
	}
	if len(got) != 800 {
		t.Fatalf("%d items, want 800", len(got))
	}
}
