// Package silence owns silences and maintenance windows: which events an
// operator asked not to be paged about, and until when. It is pure: it
// matches an event, by the event's own time, against the silences and
// windows it is given; it never reads the clock or a store. Matching
// happens where an event is delivered (the alert worker) and where it is
// shown (the API, the dashboard), so a stored event stays as it was
// committed, and a silence created or expired later changes what is
// shown, never what was stored. It also decides a silence's and a
// window's life (decide.go): whether a new silence is valid, whether an
// expiry changes anything, when a window's end timer is due and which
// occurrence it ended, and which stored events an end judges; the
// engine loads the facts, asks, and obeys.
package silence

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/event"
)

// ErrInvalid is wrapped by every error about a silence's or a window's
// content (each a *FieldError naming the field), so callers can tell bad
// input from a failed read.
var ErrInvalid = errors.New("invalid silence")

// Matchers say which events a silence or a window covers. Within one
// field any entry may match (OR); every field that has entries must
// match (AND); a field with no entries matches everything. A silence
// needs at least one entry in one field (Empty).
type Matchers struct {
	Pipelines []string      // path.Match globs on the pipeline id
	Types     []event.Type  // exact event types
	Levels    []event.Level // the event type's fixed level
	Owners    []string      // the pipeline's owner (pipeline.owner), exact
}

// TypeNames and LevelNames are m's types and levels as strings (nil when
// none): as events, the API and the dashboard write them.
func (m Matchers) TypeNames() []string  { return names(m.Types) }
func (m Matchers) LevelNames() []string { return names(m.Levels) }

func names[T ~string](vs []T) []string {
	if len(vs) == 0 {
		return nil
	}
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// Empty reports whether m has no matcher at all (it would silence
// everything, which is refused).
func (m Matchers) Empty() bool {
	return len(m.Pipelines)+len(m.Types)+len(m.Levels)+len(m.Owners) == 0
}

// EveryPipeline reports whether m reaches every pipeline: it names no
// owner, and no pipeline or a glob that matches any id ("*"). Such a
// silence needs the admin role; an operator names what they silence.
func (m Matchers) EveryPipeline() bool {
	if len(m.Owners) > 0 {
		return false
	}
	if len(m.Pipelines) == 0 {
		return true
	}
	for _, g := range m.Pipelines {
		if strings.Trim(g, "*") == "" {
			return true
		}
	}
	return false
}

// Matches reports whether m covers e, whose pipeline's owner is owner
// (the caller resolves it from the pipeline's config; "" when unknown).
// Silence lifecycle events are never covered: an operator always sees
// who silenced what.
func (m Matchers) Matches(owner string, e event.Event) bool {
	if m.Empty() || e.Type == event.SilenceCreated || e.Type == event.SilenceExpired {
		return false
	}
	if len(m.Pipelines) > 0 && !slices.ContainsFunc(m.Pipelines, func(g string) bool {
		ok, err := path.Match(g, e.PipelineID)
		return ok && err == nil && e.PipelineID != ""
	}) {
		return false
	}
	if len(m.Types) > 0 && !slices.Contains(m.Types, e.Type) {
		return false
	}
	if len(m.Levels) > 0 && !slices.Contains(m.Levels, e.Level()) {
		return false
	}
	if len(m.Owners) > 0 && (owner == "" || !slices.Contains(m.Owners, owner)) {
		return false
	}
	return true
}

// String is m as the CLI and the log write it:
// "pipeline=gold-* type=SLA_BREACH level=error owner=analytics".
func (m Matchers) String() string {
	var parts []string
	add := func(name string, vs []string) {
		if len(vs) > 0 {
			parts = append(parts, name+"="+strings.Join(vs, ","))
		}
	}
	add("pipeline", m.Pipelines)
	add("type", typeStrings(m.Types))
	add("level", levelStrings(m.Levels))
	add("owner", m.Owners)
	return strings.Join(parts, " ")
}

func typeStrings(ts []event.Type) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

func levelStrings(ls []event.Level) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = string(l)
	}
	return out
}

// Written is a silence's or a window's matchers as an operator writes
// them: the API's JSON (a request, as the CLI and the dashboard's form
// send it, and an answer), interlock.yaml's maintenance windows and a
// scenario's silences embed it, so each names the four fields the same
// way. Parse checks and types it.
type Written struct {
	Pipelines []string `json:"pipelines,omitempty" yaml:"pipelines"`
	Types     []string `json:"types,omitempty" yaml:"types"`
	Levels    []string `json:"levels,omitempty" yaml:"levels"`
	Owners    []string `json:"owners,omitempty" yaml:"owners"`
}

// Parse is ParseMatchers of w's fields.
func (w Written) Parse() (Matchers, error) {
	return ParseMatchers(w.Pipelines, w.Types, w.Levels, w.Owners)
}

// Written is m as an operator would write it (Written.Parse gives m back).
func (m Matchers) Written() Written {
	return Written{Pipelines: m.Pipelines, Types: m.TypeNames(), Levels: m.LevelNames(), Owners: m.Owners}
}

// MaxMatchers bounds the entries of one matcher field (and so the work of
// one match and the size of a stored silence).
const MaxMatchers = 50

// maxEntry bounds one entry's length.
const maxEntry = 256

// ParseMatchers checks matcher entries as an operator wrote them (the
// API, the CLI, interlock.yaml) and returns them typed: each glob must
// be well formed, each type in the catalogue, each level a level, no
// entry empty or over long, no field over MaxMatchers entries. Levels
// and types are case-insensitive. Errors name the field and the entry
// and wrap ErrInvalid. An all-empty set is returned as is: whether that
// is allowed is the caller's (a silence refuses it, see Silence.Check).
func ParseMatchers(pipelines, types, levels, owners []string) (Matchers, error) {
	var errs []error
	m := Matchers{
		Pipelines: parseEntries(&errs, "pipelines", pipelines, func(g string) (string, string) {
			if _, err := path.Match(g, ""); err != nil {
				return "", fmt.Sprintf("malformed glob %q", g)
			}
			return g, ""
		}),
		Types: parseEntries(&errs, "types", types, func(s string) (event.Type, string) {
			t := event.Type(strings.ToUpper(strings.TrimSpace(s)))
			if _, ok := event.Lookup(t); !ok {
				return "", fmt.Sprintf("unknown event type %q", s)
			}
			return t, ""
		}),
		Levels: parseEntries(&errs, "levels", levels, func(s string) (event.Level, string) {
			l := event.Level(strings.ToLower(strings.TrimSpace(s)))
			if !slices.Contains(event.Levels(), l) {
				return "", fmt.Sprintf("unknown level %q (want info, warning or error)", s)
			}
			return l, ""
		}),
		Owners: parseEntries(&errs, "owners", owners, func(s string) (string, string) { return s, "" }),
	}
	if len(errs) > 0 {
		return Matchers{}, errors.Join(errs...)
	}
	return m, nil
}

// parseEntries is one matcher field of ParseMatchers: at most MaxMatchers
// entries, none empty or longer than maxEntry, then each entry parsed
// (parse says why it refuses one, "" when it takes it). Each refusal is
// added to errs, naming the field and, for an entry, its index; a field
// refused as a whole has none of its entries parsed.
func parseEntries[T any](errs *[]error, field string, vs []string, parse func(string) (T, string)) []T {
	if len(vs) > MaxMatchers {
		*errs = append(*errs, &FieldError{Field: field, Msg: fmt.Sprintf("%d entries, at most %d", len(vs), MaxMatchers)})
		return nil
	}
	bad := func(i int, msg string) {
		*errs = append(*errs, &FieldError{Field: fmt.Sprintf("%s[%d]", field, i), Msg: msg})
	}
	n := len(*errs)
	for i, v := range vs {
		switch {
		case strings.TrimSpace(v) == "":
			bad(i, "empty")
		case len(v) > maxEntry:
			bad(i, fmt.Sprintf("longer than %d bytes", maxEntry))
		}
	}
	if len(*errs) > n {
		return nil
	}
	var out []T
	for i, v := range vs {
		x, why := parse(v)
		if why != "" {
			bad(i, why)
			continue
		}
		out = append(out, x)
	}
	return out
}

// Silence is an operator's silence: events its matchers cover whose time
// is in [StartsAt, End()) are stored and shown, marked with its ID, but
// not sent.
type Silence struct {
	ID string
	Matchers
	StartsAt time.Time
	EndsAt   time.Time
	// ExpiredAt is when an operator ended it early; zero while it runs
	// to EndsAt.
	ExpiredAt time.Time
	Comment   string
	CreatedBy string
	CreatedAt time.Time
}

// End is when the silence stops covering events: EndsAt, or ExpiredAt
// when it was expired before.
func (s Silence) End() time.Time {
	if !s.ExpiredAt.IsZero() && s.ExpiredAt.Before(s.EndsAt) {
		return s.ExpiredAt
	}
	return s.EndsAt
}

// ActiveAt reports whether the silence covers instant t: StartsAt
// inclusive, End exclusive.
func (s Silence) ActiveAt(t time.Time) bool {
	return !t.Before(s.StartsAt) && t.Before(s.End())
}

// MaxComment bounds a silence's comment.
const MaxComment = 1024

// Check is what a new silence must satisfy at now: a matcher, an end
// after now and after its start, a bounded comment. Errors name the
// field and wrap ErrInvalid.
func (s Silence) Check(now time.Time) error {
	bad := func(field, format string, args ...any) error {
		return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	switch {
	case s.Matchers.Empty():
		return bad("matchers", "at least one of pipelines, types, levels, owners is needed (a silence of everything is refused)")
	case s.EndsAt.IsZero():
		return bad("until", "an end is needed (until or duration)")
	case !s.EndsAt.After(now):
		return bad("until", "%s is not in the future", s.EndsAt.UTC().Format(time.RFC3339))
	case !s.EndsAt.After(s.StartsAt):
		return bad("until", "%s is not after the start %s", s.EndsAt.UTC().Format(time.RFC3339), s.StartsAt.UTC().Format(time.RFC3339))
	case len(s.Comment) > MaxComment:
		return bad("comment", "longer than %d bytes", MaxComment)
	}
	return nil
}

// Match returns the ID of a silence or window that covers e at e.Time,
// whose pipeline's owner is owner: silences first (the earliest created,
// then by ID), then windows in their order; ok is false when none does.
// A window's ID is WindowID(name).
func Match(ss []Silence, ws []Window, owner string, e event.Event) (id string, ok bool) {
	best := -1
	for i, s := range ss {
		if !s.ActiveAt(e.Time) || !s.Matches(owner, e) {
			continue
		}
		if best < 0 || s.CreatedAt.Before(ss[best].CreatedAt) ||
			(s.CreatedAt.Equal(ss[best].CreatedAt) && s.ID < ss[best].ID) {
			best = i
		}
	}
	if best >= 0 {
		return ss[best].ID, true
	}
	for _, w := range ws {
		if _, _, active := w.ActiveAt(e.Time); active && w.Matches(owner, e) {
			return w.ID(), true
		}
	}
	return "", false
}
