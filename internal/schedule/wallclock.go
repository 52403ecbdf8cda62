package schedule

import "time"

// A wall time is a reading of a clock on the wall of some zone: a date, an
// hour and a minute, with no offset. Inside this package it travels as a
// time.Time in UTC whose fields are the reading ("naive" below); it is
// never compared with real instants.

func naiveWall(d Date, hour, minute int) time.Time {
	return time.Date(d.Year, d.Month, d.Day, hour, minute, 0, 0, time.UTC)
}

// wallOf is the reading of t on loc's wall clock, seconds dropped.
func wallOf(t time.Time, loc *time.Location) time.Time {
	l := t.In(loc)
	y, m, d := l.Date()
	h, mi, _ := l.Clock()
	return time.Date(y, m, d, h, mi, 0, 0, time.UTC)
}

// probeSpan is how far either side of a wall time we look for the zone
// offsets that could apply to it. Transitions are months apart in every
// real zone; 30h comfortably exceeds the ±14h range of UTC offsets.
const probeSpan = 30 * time.Hour

// resolveWall finds the instants at which loc's clock reads w. Normally
// there is one. In a fall-back overlap there are two: first is the earlier
// and repeated is true. In a spring-forward gap there is none, and first is
// the first instant after the gap (the transition itself), which is what a
// schedule meant for a skipped time should do: happen as soon as the clock
// allows, on the same date, rather than not at all.
//
// time.Date does not promise which instant it picks in either case, so the
// candidates are checked explicitly.
func resolveWall(w time.Time, loc *time.Location) (first, second time.Time, repeated bool) {
	var z zoneSpan
	return z.resolve(w, orUTC(loc))
}

// zoneSpan is one of a zone's spans of constant offset (from
// time.Time.ZoneBounds), kept by a caller that resolves many readings in
// one zone: a cron scan's readings are nearly all in the span of the one
// before.
type zoneSpan struct {
	loc        *time.Location
	off        int
	start, end time.Time // zero: unbounded
}

func (z *zoneSpan) holds(t time.Time) bool {
	return (z.start.IsZero() || !t.Before(z.start)) && (z.end.IsZero() || t.Before(z.end))
}

// resolve is resolveWall(w, loc). When one offset holds from probeSpan
// before w to probeSpan after it, the three probes of the general case
// would all find that offset, and w minus it (within ±14h of w, so in
// the same span) reads w: that one instant is the answer, found without
// a lookup when the span is the one kept.
func (z *zoneSpan) resolve(w time.Time, loc *time.Location) (first, second time.Time, repeated bool) {
	if z.loc != loc || !z.holds(w) {
		l := w.In(loc)
		_, z.off = l.Zone()
		z.start, z.end = l.ZoneBounds()
		z.loc = loc
	}
	if z.holds(w.Add(-probeSpan)) && z.holds(w.Add(probeSpan)) {
		return w.Add(-time.Duration(z.off) * time.Second), time.Time{}, false
	}
	return resolveNearChange(w, loc)
}

// resolveNearChange is resolveWall next to a change of offset: it probes
// the offsets either side of w and keeps those under which loc's clock
// reads w.
func resolveNearChange(w time.Time, loc *time.Location) (first, second time.Time, repeated bool) {
	var offs [3]int
	for i, probe := range [...]time.Time{w.Add(-probeSpan), w, w.Add(probeSpan)} {
		_, offs[i] = probe.In(loc).Zone()
	}
	var found [3]time.Time
	n := 0
	for _, off := range offs {
		u := w.Add(-time.Duration(off) * time.Second)
		if !wallOf(u, loc).Equal(w) {
			continue
		}
		dup := false
		for _, f := range found[:n] {
			dup = dup || f.Equal(u)
		}
		if !dup {
			found[n] = u
			n++
		}
	}
	switch {
	case n >= 2:
		a, b := found[0], found[1]
		if b.Before(a) {
			a, b = b, a
		}
		return a, b, true
	case n == 1:
		return found[0], time.Time{}, false
	}
	return gapEnd(w, offs[:], loc), time.Time{}, false
}

// gapEnd is the transition that skipped w. With the offset after the
// change (the larger one), w maps to an instant just before the change;
// the end of the zone period holding that instant is the change itself.
func gapEnd(w time.Time, offs []int, loc *time.Location) time.Time {
	hi, lo := offs[0], offs[0]
	for _, o := range offs {
		hi, lo = max(hi, o), min(lo, o)
	}
	before := w.Add(-time.Duration(hi) * time.Second)
	if _, end := before.In(loc).ZoneBounds(); end.After(before) {
		return end
	}
	// Not reachable with real tz data; any instant near w is better than
	// the zero time.
	return w.Add(-time.Duration(lo) * time.Second)
}
