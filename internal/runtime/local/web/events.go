package web

import (
	"context"
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

// firstWindow is the stretch of the log, back from the page's end, read
// first for its newest events; it grows fourfold until it holds a page
// or reaches the range's start (lastEvents).
const firstWindow = 15 * time.Minute

// eventsReadBatch is how many events one read of the store returns while
// a window is read through.
const eventsReadBatch = 1000

type eventsPageData struct {
	Filter eventFilter
	// Problems are the filter's fields that could not be read, each with
	// what is wrong; the form keeps what was typed and no event is read.
	Problems map[string]string
	Events   []eventView // newest first
	// OlderHref is the page of the events before the oldest shown; ""
	// when the range holds no older event.
	OlderHref string
	// NowHref is "jump to now": the same filter at the live end of the
	// log, on a page that is not there (an older page, or ?until=).
	NowHref string
	Cursor  string // where the live tail starts
	Types   []event.Type
	Levels  []event.Level
	Since   time.Time
	End     *time.Time // the page's end: ?until= or ?before=; nil: now, live
}

// eventFilter is the event log's query: each field as the form sent it.
type eventFilter struct {
	Pipeline string
	Type     string
	Level    string
	Since    string
	Until    string
	Before   string // the older page's end, exclusive (set by its link)
}

func (f eventFilter) values() url.Values {
	v := url.Values{}
	for _, kv := range [][2]string{{"pipeline", f.Pipeline}, {"type", f.Type}, {"level", f.Level}, {"since", f.Since}, {"until", f.Until}, {"before", f.Before}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	return v
}

func (f eventFilter) href() string {
	if v := f.values(); len(v) > 0 {
		return "/ui/events?" + v.Encode()
	}
	return "/ui/events"
}

// eventsQuery is an event log filter as read: what to ask the store, and
// the page's end.
type eventsQuery struct {
	params store.EventListParams
	until  time.Time // inclusive; zero: none
	before time.Time // exclusive; zero: none
}

// readEventFilter reads the filter's fields; problems names each field
// that could not be read and why.
func readEventFilter(f eventFilter, now time.Time) (q eventsQuery, problems map[string]string) {
	problems = map[string]string{}
	q.params = store.EventListParams{PipelineID: f.Pipeline, Since: now.Add(-defaultSince)}
	var err error
	if q.params.Types, err = typesOf(f.Type, ""); err != nil {
		problems["type"] = err.Error()
	} else if q.params.Types, err = typesOf(f.Type, f.Level); err != nil {
		problems["level"] = err.Error()
	}
	if f.Since != "" {
		if q.params.Since, err = instant(f.Since, now); err != nil {
			problems["since"] = err.Error()
		}
	}
	if f.Until != "" {
		if q.until, err = instant(f.Until, now); err != nil {
			problems["until"] = err.Error()
		}
	}
	if f.Before != "" {
		if q.before, err = time.Parse(time.RFC3339Nano, f.Before); err != nil {
			problems["before"] = "want the instant the newer page ended at (follow the older events link)"
		}
	}
	if len(problems) == 0 && !q.until.IsZero() && q.until.Before(q.params.Since) {
		problems["until"] = "the range ends before it starts (from " + utcText(q.params.Since) + ")"
	}
	return q, problems
}

// keep says whether e is in the page's range: at or before ?until=, and
// before ?before=.
func (q eventsQuery) keep(e event.Event) bool {
	return (q.until.IsZero() || !e.Time.After(q.until)) && (q.before.IsZero() || e.Time.Before(q.before))
}

// eventsPage is /ui/events: the newest events of the log first, from
// ?since= (default the last 24 hours), filtered by ?pipeline=, ?type= (one
// type or several, comma-separated), ?level= and ?until=; ?before= is the
// older page's end. Without an end the page is the live tail: new events
// are added at the top. A filter field that cannot be read answers 400
// with the form as typed and what is wrong beside the field.
func (h *handler) eventsPage(r *http.Request) (*view, error) {
	q := r.URL.Query()
	f := eventFilter{
		Pipeline: strings.TrimSpace(q.Get("pipeline")), Type: strings.TrimSpace(q.Get("type")), Level: strings.TrimSpace(q.Get("level")),
		Since: strings.TrimSpace(q.Get("since")), Until: strings.TrimSpace(q.Get("until")), Before: strings.TrimSpace(q.Get("before")),
	}
	now := h.eng.Now()
	d := eventsPageData{Filter: f, Types: event.Types(), Levels: event.Levels()}
	eq, problems := readEventFilter(f, now)
	if len(problems) > 0 {
		d.Problems = problems
		return &view{name: "events", title: "Events", nav: "events", data: d, status: http.StatusBadRequest}, nil
	}
	d.Since = eq.params.Since.UTC()
	read, err := h.lastEvents(r.Context(), eq, eventsPageSize, now)
	if err != nil {
		return nil, err
	}
	evs := read.events
	slices.Reverse(evs)
	if d.Events, err = h.eventViews(r.Context(), evs); err != nil {
		return nil, err
	}
	if read.older {
		older := f
		older.Before = evs[len(evs)-1].Time.UTC().Format(time.RFC3339Nano)
		d.OlderHref = older.href()
	}
	for _, end := range []time.Time{eq.until, eq.before} {
		if !end.IsZero() && (d.End == nil || end.Before(*d.End)) {
			u := end.UTC()
			d.End = &u
		}
	}
	if d.End != nil {
		d.NowHref = eventFilter{Pipeline: f.Pipeline, Type: f.Type, Level: f.Level, Since: f.Since}.href()
		return &view{name: "events", title: "Events", nav: "events", data: d}, nil
	}
	// The tail starts where the read ended, so no event falls between;
	// since keeps it from reading, in a shard the read had no event of,
	// what came before the window read.
	d.Cursor = read.next.String()
	live := eventFilter{Pipeline: f.Pipeline, Type: f.Type, Level: f.Level}.values()
	live.Set("after", read.next.String())
	live.Set("since", read.from.UTC().Format(time.RFC3339Nano))
	return &view{name: "events", title: "Events", nav: "events", data: d, live: "/v1/events/stream?" + live.Encode()}, nil
}

// lastRead is the newest events of a range, oldest first.
type lastRead struct {
	events []event.Event
	older  bool         // the range may hold events before the first
	from   time.Time    // the start of the window read
	next   store.Cursor // the log's cursor past the read
}

// lastEvents reads the newest n events the query keeps (and every other
// event at the first one's instant, so a page never splits an instant
// and the older page can end, exclusively, at it). The store reads the
// log forward only, so it reads a window back from the end — 15 minutes,
// then four times as much until the window holds n or reaches the
// range's start — through, in batches: what a read costs follows how
// busy the log is near the end, not how long the range is.
func (h *handler) lastEvents(ctx context.Context, q eventsQuery, n int, now time.Time) (lastRead, error) {
	end := now
	for _, t := range []time.Time{q.until, q.before} {
		if !t.IsZero() && t.Before(end) {
			end = t
		}
	}
	for w := firstWindow; ; w *= 4 {
		from := end.Add(-w)
		if !from.After(q.params.Since) {
			from = q.params.Since
		}
		kept, next, err := h.readWindow(ctx, q, from)
		if err != nil {
			return lastRead{}, err
		}
		reachedStart := from.Equal(q.params.Since)
		if len(kept) < n && !reachedStart {
			continue
		}
		out := lastRead{from: from, next: next, older: !reachedStart}
		if len(kept) > n {
			i := len(kept) - n
			for i > 0 && kept[i-1].Time.Equal(kept[i].Time) {
				i--
			}
			kept, out.older = kept[i:], out.older || i > 0
		}
		if len(kept) == 0 {
			out.older = false
		}
		out.events = kept
		return out, nil
	}
}

// readWindow reads every event the query keeps from from on, in log
// order, and the cursor past them.
func (h *handler) readWindow(ctx context.Context, q eventsQuery, from time.Time) ([]event.Event, store.Cursor, error) {
	p := q.params
	p.Since, p.Limit = from, eventsReadBatch
	var kept []event.Event
	for {
		page, err := h.eng.Store().EventList(ctx, p)
		if err != nil {
			return nil, p.After, err
		}
		for _, e := range page.Events {
			if q.keep(e) {
				kept = append(kept, e)
			}
		}
		p.After = page.Next
		if len(page.Events) < eventsReadBatch {
			return kept, p.After, nil
		}
	}
}

// typesOf turns ?type= and ?level= into the types to read: those named
// (each must be in the catalogue), kept to the level when one is given.
func typesOf(types, level string) ([]event.Type, error) {
	var out []event.Type
	if types != "" {
		for _, name := range strings.Split(types, ",") {
			t := event.Type(strings.ToUpper(strings.TrimSpace(name)))
			if _, ok := event.Lookup(t); !ok {
				return nil, badRequest("%q is not an event type (for example SLA_BREACH, JOB_FAILED)", strings.TrimSpace(name))
			}
			out = append(out, t)
		}
	}
	if level == "" {
		return out, nil
	}
	l := event.Level(strings.ToLower(level))
	if !slices.Contains(event.Levels(), l) {
		return nil, badRequest("%q: want info, warning or error", level)
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
