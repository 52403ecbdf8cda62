package schedule

import (
	"math/bits"
	"time"
)

// Tick arithmetic works on wall-clock readings: the cron matches a date,
// hour and minute, and each matching reading becomes an instant through
// resolveWall. So, in every zone and across every daylight saving change:
//
//   - A reading inside a spring-forward gap fires at the first instant after
//     the gap (a daily 02:30 fires at 03:00 EDT on 2026-03-08 in New York).
//     Several readings in one gap collapse into that one instant.
//   - A reading inside a fall-back overlap fires at its first occurrence
//     only (a daily 01:30 fires once, at 01:30 EDT, on 2026-11-01), so a
//     daily cron fires exactly once per local date.
//   - A cron that fires in every hour (@hourly, "*/15 * * * *") also fires
//     in the second pass of the repeated hour, because it measures elapsed
//     time and an hour without ticks would look like a stopped scheduler.
//     Both passes map to the same hourly Period.

// maxScanDays bounds the search for the next matching date. The sparsest
// schedule ParseCron accepts fires on 29 February only, which can be eight
// years apart (2096 to 2104).
const maxScanDays = 8*366 + 1

// overlapLookback is how far before `after` a second-pass tick's reading
// can lie: the longest fall-back overlap in the tz database is 2 hours.
const overlapLookback = 3 * time.Hour

// Next is the first tick strictly after `after`, on loc's wall clock. It
// returns the zero time for the zero Cron, or if nothing fires within the
// scan bound (which ParseCron's checks make unreachable in practice).
func (c Cron) Next(after time.Time, loc *time.Location) time.Time {
	if c.IsZero() {
		return time.Time{}
	}
	loc = orUTC(loc)
	start := wallOf(after, loc)
	secondPass := c.everyHour()
	if secondPass && changesNear(after, loc) {
		start = start.Add(-overlapLookback)
	}
	var best time.Time
	var zone zoneSpan
	better := func(t time.Time) {
		if t.After(after) && (best.IsZero() || t.Before(best)) {
			best = t
		}
	}
	day := time.Date(start.Year(), start.Month(), start.Day(), 12, 0, 0, 0, time.UTC)
	// On start's own date the scan begins at start's reading (which has
	// no seconds): every reading scanned is at or after it.
	startHour, startMinute := start.Hour(), start.Minute()
	for i := range maxScanDays {
		d := Date{Year: day.Year(), Month: day.Month(), Day: day.Day()}
		day = day.AddDate(0, 0, 1)
		if !c.dayMatches(d) {
			continue
		}
		hours := c.hour
		if i == 0 {
			hours &^= uint64(1)<<uint(startHour) - 1
		}
		for h := range setBits(hours) {
			minutes := c.minute
			if i == 0 && h == startHour {
				minutes &^= uint64(1)<<uint(startMinute) - 1
			}
			for m := range setBits(minutes) {
				w := naiveWall(d, h, m)
				first, second, repeated := zone.resolve(w, loc)
				if repeated && secondPass {
					better(second)
				}
				// First occurrences grow with the reading, so the first
				// one after `after` ends the search; a second occurrence
				// seen earlier may still beat it.
				if first.After(after) {
					better(first)
					return best
				}
			}
		}
	}
	return best
}

// changesNear reports whether loc's UTC offset changes within
// overlapLookback of t, the only case where a tick with an earlier reading
// than t's can still lie after t.
func changesNear(t time.Time, loc *time.Location) bool {
	_, before := t.Add(-overlapLookback).In(loc).Zone()
	_, now := t.In(loc).Zone()
	_, after := t.Add(overlapLookback).In(loc).Zone()
	return before != now || now != after
}

// PrevLimit bounds how far back Prev looks.
const PrevLimit = 366 * 24 * time.Hour

// Prev is the latest tick at or before atOrBefore, looking back at most
// PrevLimit; ok is false if there is none in that span. It is the mirror
// of Next over the same set of ticks, scanning readings backwards.
func (c Cron) Prev(atOrBefore time.Time, loc *time.Location) (time.Time, bool) {
	if c.IsZero() {
		return time.Time{}, false
	}
	loc = orUTC(loc)
	t, limit := atOrBefore, atOrBefore.Add(-PrevLimit)
	end := wallOf(t, loc)
	near := changesNear(t, loc)
	if near {
		// In the second pass of a repeated hour, readings later than
		// t's own still had their first occurrence before t.
		end = end.Add(overlapLookback)
	}
	var best, stopBelow time.Time
	var zone zoneSpan
	consider := func(x time.Time) {
		if !x.After(t) && !x.Before(limit) && x.After(best) {
			best = x
		}
	}
	day := time.Date(end.Year(), end.Month(), end.Day(), 12, 0, 0, 0, time.UTC)
	for range int(PrevLimit/(24*time.Hour)) + 2 {
		d := Date{Year: day.Year(), Month: day.Month(), Day: day.Day()}
		day = day.AddDate(0, 0, -1)
		if !c.dayMatches(d) {
			continue
		}
		for h := range setBitsDesc(c.hour) {
			for m := range setBitsDesc(c.minute) {
				w := naiveWall(d, h, m)
				if w.After(end) {
					continue
				}
				if !stopBelow.IsZero() && w.Before(stopBelow) {
					return best, !best.IsZero()
				}
				first, second, repeated := zone.resolve(w, loc)
				if repeated && c.everyHour() {
					consider(second)
				}
				if first.After(t) {
					continue
				}
				// The latest first occurrence at or before t is found; a
				// second occurrence of a slightly earlier reading can only
				// beat it next to a change, so look a little further there.
				consider(first)
				if !near || !c.everyHour() {
					return best, !best.IsZero()
				}
				if stopBelow.IsZero() {
					stopBelow = w.Add(-overlapLookback)
				}
			}
		}
	}
	return best, !best.IsZero()
}

// Ticks lists the ticks in (from, to], at most limit of them (none when
// limit ≤ 0), earliest first. The watchdog uses it to find ticks that
// produced no run.
func (c Cron) Ticks(from, to time.Time, loc *time.Location, limit int) []time.Time {
	var out []time.Time
	for t := c.Next(from, loc); len(out) < limit && !t.IsZero() && !t.After(to); t = c.Next(t, loc) {
		out = append(out, t)
	}
	return out
}

// setBits yields the positions of the set bits of b, lowest first.
func setBits(b uint64) func(yield func(int) bool) {
	return func(yield func(int) bool) {
		for b != 0 {
			i := bits.TrailingZeros64(b)
			if !yield(i) {
				return
			}
			b &^= 1 << uint(i)
		}
	}
}

// setBitsDesc yields the positions of the set bits of b, highest first.
func setBitsDesc(b uint64) func(yield func(int) bool) {
	return func(yield func(int) bool) {
		for b != 0 {
			i := 63 - bits.LeadingZeros64(b)
			if !yield(i) {
				return
			}
			b &^= 1 << uint(i)
		}
	}
}
