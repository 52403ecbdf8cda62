package web

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/duration"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// eventsPageSize is how many events a page of the event log shows.
const eventsPageSize = 100

// defaultSince is how far back the event log starts without ?since=.
const defaultSince = 24 * time.Hour

type eventsPageData struct {
	Filter   eventFilter
	Events   []eventView
	NextHref string
	Cursor   string // where the live tail starts
	Types    []event.Type
	Levels   []event.Level
	Since    time.Time
	Until    *time.Time
	Stopped  bool // events after ?until= were left out
}

// eventFilter is the event log's query: each field as the form sent it.
type eventFilter struct {
	Pipeline string
	Type     string
	Level    string
	Since    string
	Until    string
	After    string
}

func (f eventFilter) values() url.Values {
	v := url.Values{}
	for _, kv := range [][2]string{{"pipeline", f.Pipeline}, {"type", f.Type}, {"level", f.Level}, {"since", f.Since}, {"until", f.Until}, {"after", f.After}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	return v
}

// eventsPage is /ui/events: the event log in log order from ?since=
// (default the last 24 hours), filtered by ?pipeline=, ?type= (one type or
// several, comma-separated), ?level= and ?until=, paged by ?after= (the
// cursor of the page before).
func (h *handler) eventsPage(r *http.Request) (*view, error) {
	q := r.URL.Query()
	f := eventFilter{
		Pipeline: strings.TrimSpace(q.Get("pipeline")), Type: strings.TrimSpace(q.Get("type")), Level: strings.TrimSpace(q.Get("level")),
		Since: strings.TrimSpace(q.Get("since")), Until: strings.TrimSpace(q.Get("until")), After: strings.TrimSpace(q.Get("after")),
	}
	now := h.eng.Now()
	p := store.EventListParams{PipelineID: f.Pipeline, Limit: eventsPageSize}
	var err error
	if p.Types, err = typesOf(f.Type, f.Level); err != nil {
		return nil, err
	}
	p.Since = now.Add(-defaultSince)
	if f.Since != "" {
		if p.Since, err = instant(f.Since, now); err != nil {
			return nil, badRequest("since: %v", err)
		}
	}
	var until time.Time
	if f.Until != "" {
		if until, err = instant(f.Until, now); err != nil {
			return nil, badRequest("until: %v", err)
		}
	}
	if f.After != "" {
		if p.After, err = store.ParseCursor(f.After); err != nil {
			return nil, badRequest("after: want the cursor of a previous page (%v)", err)
		}
	}
	page, err := h.eng.Store().EventList(r.Context(), p)
	if err != nil {
		return nil, err
	}
	evs, err := h.eventViews(r.Context(), page.Events)
	if err != nil {
		return nil, err
	}
	d := eventsPageData{Filter: f, Events: evs, Cursor: page.Next.String(), Types: event.Types(), Levels: event.Levels(), Since: p.Since.UTC()}
	if !until.IsZero() {
		u := until.UTC()
		d.Until = &u
		if i := slices.IndexFunc(d.Events, func(e eventView) bool { return e.Time.After(until) }); i >= 0 {
			d.Events, d.Stopped = d.Events[:i], true
		}
	}
	if len(page.Events) == eventsPageSize && !d.Stopped {
		next := f
		next.After = page.Next.String()
		d.NextHref = "/ui/events?" + next.values().Encode()
	}
	// The tail starts where this last page ends, so no event falls
	// between; since keeps it from reading, in a shard the page had no
	// event of, what came before the page's range.
	live := eventFilter{Pipeline: f.Pipeline, Type: f.Type, Level: f.Level}.values()
	live.Set("after", page.Next.String())
	live.Set("since", p.Since.UTC().Format(time.RFC3339Nano))
	stream := "/v1/events/stream?" + live.Encode()
	if d.Stopped || d.NextHref != "" {
		stream = "" // the tail follows the end of the log, not this page
	}
	return &view{name: "events", title: "Events", nav: "events", data: d, live: stream}, nil
}

// typesOf turns ?type= and ?level= into the types to read: those named
// (each must be in the catalogue), kept to the level when one is given.
func typesOf(types, level string) ([]event.Type, error) {
	var out []event.Type
	if types != "" {
		for _, name := range strings.Split(types, ",") {
			t := event.Type(strings.ToUpper(strings.TrimSpace(name)))
			if _, ok := event.Lookup(t); !ok {
				return nil, badRequest("type %q is not an event type (for example SLA_BREACH, JOB_FAILED)", name)
			}
			out = append(out, t)
		}
	}
	if level == "" {
		return out, nil
	}
	l := event.Level(strings.ToLower(level))
	if !slices.Contains(event.Levels(), l) {
		return nil, badRequest("level %q: want info, warning or error", level)
	}
	if out == nil {
		out = event.Types()
	}
	kept := out[:0:0]
	for _, t := range out {
		if s, _ := event.Lookup(t); s.Level == l {
			kept = append(kept, t)
		}
	}
	if len(kept) == 0 {
		return nil, badRequest("no type named is of level %s", l)
	}
	return kept, nil
}

// instant reads a time of the event filter: RFC 3339, the form's
// datetime-local (read as UTC), or a duration back from now (2h, 1d).
func instant(s string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	for _, layout := range []string{"2006-01-02T15:04", "2006-01-02T15:04:05", time.DateOnly} {
		if t, err := time.ParseInLocation(layout, s, time.UTC); err == nil {
			return t, nil
		}
	}
	d, err := duration.Parse(s)
	if err != nil {
		return time.Time{}, badRequest("%q: want a time (2026-03-10T06:00:00Z, 2026-03-10T06:00 in UTC) or a duration back from now (2h, 1d)", s)
	}
	return now.Add(-d), nil
}
