package local

import (
	"cmp"
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// Retention sweep defaults. A batch of sweepBatch deletes holds SQLite's
// write lock for a few milliseconds; between batches the sweep waits
// sweepPause, so sensor writes and timers queue behind one batch at most
// and the sweep takes a small share of the writer. A sweep every
// sweepInterval keeps up with a day's history in a few batches.
const (
	sweepInterval = time.Hour
	sweepBatch    = 500
	sweepPause    = 100 * time.Millisecond
)

// Sweeper deletes history older than the retention (interlock.yaml
// `retention`) in small batches through store.Store.Expire. It decides
// nothing: what expires is run.RetentionCutoff's, what must stay is the
// store's rule (store.ExpireParams).
type Sweeper struct {
	Store     store.Store
	Clock     clock.Clock
	Retention time.Duration
	Log       *slog.Logger
	// Deleted, when set, is told what each batch deleted (serve's
	// metrics).
	Deleted func(store.ExpireResult)
	// Zero values take the defaults above.
	Interval time.Duration
	Batch    int
	Pause    time.Duration
}

// Run sweeps at once and then every Interval until ctx ends.
func (s *Sweeper) Run(ctx context.Context) {
	interval := cmp.Or(s.Interval, sweepInterval)
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		s.Sweep(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Sweep deletes everything expired at the clock's now, batch after batch,
// and returns how many records of each kind it deleted. It stops early
// when ctx ends or a batch fails (logged; the next sweep starts over).
func (s *Sweeper) Sweep(ctx context.Context) map[string]int {
	periodBefore, before := run.RetentionCutoff(s.Clock.Now(), s.Retention)
	p := store.ExpireParams{PeriodBefore: periodBefore, Before: before, Limit: cmp.Or(s.Batch, sweepBatch)}
	total := map[string]int{}
	batches := 0
	for ctx.Err() == nil {
		res, err := s.Store.Expire(ctx, p)
		if err != nil {
			s.Log.Error("retention sweep failed", "err", err, "periodsBefore", periodBefore)
			break
		}
		batches++
		for k, n := range res.Deleted {
			total[k] += n
		}
		if s.Deleted != nil {
			s.Deleted(res)
		}
		if !res.More {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(cmp.Or(s.Pause, sweepPause)):
		}
	}
	if len(total) > 0 {
		attrs := []any{"periodsBefore", periodBefore, "eventsBefore", before, "batches", batches}
		for _, k := range slices.Sorted(maps.Keys(total)) {
			attrs = append(attrs, k, total[k])
		}
		s.Log.Info("retention sweep deleted expired history", attrs...)
	}
	return total
}
