package silence

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/event"
)

// The decisions about a silence's and a window's life: whether a new
// silence is valid and when it ends (New), whether expiring one changes
// anything (Expire), whether its end is reached (Over), when a window's
// end timer is due (ArmWindowEnd), which occurrence a firing ended
// (EndedOccurrence), and which stored events its end judges
// (EndQuery). A runtime loads the facts, asks, and obeys.

// Request is an operator's new silence. Either Until or Duration says
// when it ends; it starts at the instant it is decided.
type Request struct {
	ID       string // optional (scenarios name theirs); a new random id otherwise
	Matchers Matchers
	Until    time.Time
	Duration time.Duration
	Comment  string
	By       string
}

// MaxID bounds an id given with a request.
const MaxID = 64

// MaxSpan bounds how far ahead a silence may end: a year, as a timed
// pause (a forgotten silence must end by itself).
const MaxSpan = 366 * 24 * time.Hour

// New decides req at now: the silence it creates, starting now, named
// req.ID or newID when the request names none. It is refused (an error
// naming the field, wrapping ErrInvalid) when it gives both an end and a
// duration, a negative duration, an id with characters other than
// letters, digits, '-', '_' and '.' or over MaxID, no matcher, no end,
// an end not in the future, or one more than MaxSpan ahead.
func New(req Request, now time.Time, newID string) (Silence, error) {
	bad := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	if !req.Until.IsZero() && req.Duration != 0 {
		return Silence{}, bad("until and duration", "give one of them")
	}
	if req.Duration < 0 {
		return Silence{}, bad("duration", "%s is negative", req.Duration)
	}
	ends := req.Until
	if req.Duration > 0 {
		ends = now.Add(req.Duration)
	}
	id := req.ID
	if id == "" {
		id = newID
	} else if len(id) > MaxID || strings.ContainsFunc(id, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z')
	}) {
		return Silence{}, bad("id", "%q: want at most %d letters, digits, '-', '_' or '.'", id, MaxID)
	}
	s := Silence{ID: id, Matchers: req.Matchers, StartsAt: now, EndsAt: ends, Comment: req.Comment, CreatedBy: req.By, CreatedAt: now}
	if err := s.Check(now); err != nil {
		return Silence{}, err
	}
	if ends.Sub(now) > MaxSpan {
		return Silence{}, bad("until", "%s is more than %s ahead", ends.UTC().Format(time.RFC3339), MaxSpan)
	}
	return s, nil
}

// Over reports whether s no longer covers anything at now: its end (an
// expiry's, or EndsAt) is at or before now.
func (s Silence) Over(now time.Time) bool { return !s.End().After(now) }

// Expire is s ended early at now; changed is false when s is over
// already (expiring it then changes nothing, and s is returned as is).
func (s Silence) Expire(now time.Time) (_ Silence, changed bool) {
	if s.Over(now) {
		return s, false
	}
	s.ExpiredAt = now
	return s, true
}

// ArmWindowEnd decides a window's end timer at now: due is its next
// occurrence's end (NextEnd) and put says whether to write the timer
// there. cur is the due time of the timer stored (armed false: none). A
// window that never ends again puts nothing; a timer already due is left
// to fire (an end passed while no process ran), one at due is left as
// it is, and one armed for another future instant (the window's cron or
// duration changed) is moved.
func ArmWindowEnd(w Window, now time.Time, cur time.Time, armed bool) (due time.Time, put bool) {
	due = w.NextEnd(now)
	switch {
	case due.IsZero():
		return time.Time{}, false
	case !armed:
		return due, true
	case !cur.After(now) || cur.Equal(due):
		return due, false
	}
	return due, true
}

// Occurrence is one occurrence of a maintenance window, ended, as the
// silence whose end is judged.
type Occurrence struct {
	// Silence is the occurrence as a silence: the window's ID, matchers
	// and comment, from its start to its end.
	Silence Silence
	// MarkerID names this occurrence (the window's ID and its start),
	// so each occurrence alerts its own conditions once.
	MarkerID string
	// Next is when the window's end timer is due next (its next
	// occurrence's end after now); zero when the cron never fires again.
	Next time.Time
}

// EndedOccurrence decides a window's end timer that fired at now, due at
// dueAt, for the window named name: the occurrence that ended at dueAt
// and when the timer is due next. ok is false when no window of that
// name is among windows (it is no longer configured: the timer is
// dropped).
func EndedOccurrence(windows []Window, name string, dueAt, now time.Time) (_ Occurrence, ok bool) {
	i := slices.IndexFunc(windows, func(w Window) bool { return w.Name == name })
	if i < 0 {
		return Occurrence{}, false
	}
	w := windows[i]
	start := dueAt.Add(-w.Duration)
	return Occurrence{
		Silence:  Silence{ID: w.ID(), Matchers: w.Matchers, StartsAt: start, EndsAt: dueAt, Comment: w.Comment},
		MarkerID: w.ID() + "@" + strconv.FormatInt(start.Unix(), 10),
		Next:     w.NextEnd(now),
	}, true
}

// EndQuery is which stored events the end of a silence judges: the
// events of Types (those among the condition-opening types the silence
// covers) since its start, of PipelineID when the silence names exactly
// one pipeline without a glob ("" reads every pipeline's).
type EndQuery struct {
	Types      []event.Type
	PipelineID string
	Since      time.Time
}

// None reports whether the end judges nothing: no type it covers opens
// a condition.
func (q EndQuery) None() bool { return len(q.Types) == 0 }

// EndQueryOf is the query for the end of s: types are the catalogue's
// types, opens tells those that open a condition (deps.OpensCondition).
func EndQueryOf(s Silence, types []event.Type, opens func(event.Type) bool) EndQuery {
	q := EndQuery{Since: s.StartsAt}
	for _, t := range types {
		if opens(t) && (len(s.Types) == 0 || slices.Contains(s.Types, t)) {
			q.Types = append(q.Types, t)
		}
	}
	if len(s.Pipelines) == 1 && !strings.ContainsAny(s.Pipelines[0], `*?[\`) {
		q.PipelineID = s.Pipelines[0]
	}
	return q
}

// NeedsOwners reports whether matching events against ss and ws needs
// each event's pipeline owner: only when one of them names owners (the
// owner is read from the pipeline's config, so it is read only then).
func NeedsOwners(ss []Silence, ws []Window) bool {
	return slices.ContainsFunc(ss, func(s Silence) bool { return len(s.Owners) > 0 }) ||
		slices.ContainsFunc(ws, func(w Window) bool { return len(w.Owners) > 0 })
}
