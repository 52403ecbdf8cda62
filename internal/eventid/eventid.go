// Package eventid numbers the events a process makes (event.Event.ID):
// the time in milliseconds, so ids sort roughly by time, and 16 hex
// digits of the process's sequence. It owns the sequence and the blocks
// reserved from it; it decides nothing and reads nothing, so a decision
// (package decide) numbers its events by calling down into it, never
// back up into the engine that holds the batch.
package eventid

import (
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"strconv"
	"sync/atomic"
	"time"
)

// seq numbers the event ids this process makes, from a random start
// (below 2^62, so it never wraps): ids made later in the process sort
// after earlier ones of the same millisecond.
var seq atomic.Uint64

func init() {
	var b [8]byte
	_, _ = rand.Read(b[:])
	seq.Store(binary.BigEndian.Uint64(b[:]) >> 2)
}

// fresh returns a unique event id. Two events of one instant sort by their
// ids in the order they were made: an event made by a decision that read
// another one's commit (a downstream triggered by its upstream's success,
// on a virtual clock where both carry the same instant) sorts after it,
// which is how readers of the log keep causal order at one instant
// (store.MergeEventShards). Across processes the instants differ; the
// random start keeps ids unique.
func fresh(now time.Time) string { return format(now, seq.Add(1)) }

func format(now time.Time, n uint64) string {
	return strconv.FormatInt(now.UnixMilli(), 36) + "-" + fmt.Sprintf("%016x", n)
}

// Block numbers one decision's events: from a run of the sequence
// reserved ahead (Reserve) while it lasts, then fresh ids (fresh). The zero
// Block reserves nothing: every id is fresh.
//
// A block serves a decision made beside others at the same time (a
// watchdog pass's findings, committed concurrently across event shards):
// reserved in the findings' order, their events of one instant sort in
// that order whatever the goroutines' timing.
type Block struct{ from, to uint64 }

// BlockSize is how many ids a reserved block holds: a finding's few
// events.
const BlockSize = 16

// Reserve reserves the next block of the sequence.
func Reserve() Block {
	to := seq.Add(BlockSize) + 1
	return Block{from: to - BlockSize, to: to}
}

// Next is the block's next id at now, or a fresh one when the block is
// used up (or none was reserved).
func (b *Block) Next(now time.Time) string {
	if b.from >= b.to {
		return fresh(now)
	}
	b.from++
	return format(now, b.from-1)
}
