package eventid

import (
	"slices"
	"testing"
	"time"
)

// TestBlockOrder: ids of one instant sort in the order blocks were
// reserved, whatever order they are used in; a block used up, and the
// zero block, take fresh ids after every reserved one.
func TestBlockOrder(t *testing.T) {
	now := time.Date(2026, 3, 10, 12, 0, 0, 0, time.UTC)
	a, b := Reserve(), Reserve()
	second := b.Next(now)
	first := a.Next(now)
	if first >= second {
		t.Fatalf("first block's id %s sorts after the second's %s", first, second)
	}
	var ids []string
	for range BlockSize + 1 {
		ids = append(ids, a.Next(now))
	}
	if !slices.IsSorted(ids) || ids[BlockSize] <= second {
		t.Fatalf("ids of a used-up block %v: want sorted, the last fresh (after %s)", ids, second)
	}
	var zero Block
	if id := zero.Next(now); id <= ids[BlockSize] {
		t.Fatalf("the zero block's id %s is not fresh (after %s)", id, ids[BlockSize])
	}
}
