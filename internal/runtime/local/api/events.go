package api

import (
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/duration"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// EventPage is a page of the event log. Next is the cursor to pass as
// ?after= for the following page: opaque text (store.Cursor) that has
// passed every event here, or the cursor given when the page is empty, so
// a follower can keep polling with it.
type EventPage struct {
	Events []EventView `json:"events"` // each its envelope, with silencedBy
	Next   string      `json:"next"`
}

// listEvents pages through the event log in log order:
// ?pipeline=ID, ?type=T (repeatable, or comma-separated), ?since=RFC3339
// or a duration back from now (2h, 1d), ?after=CURSOR, ?limit=N.
func (s *server) listEvents(w http.ResponseWriter, r *http.Request) error {
	q, p, err := s.eventQuery(r, "pipeline", "type", "since", "after", "limit")
	if err != nil {
		return err
	}
	if p.Limit, err = limitParam(q); err != nil {
		return err
	}
	if p.After, err = cursorParam(q); err != nil {
		return err
	}
	got, err := s.eng.Store().EventList(r.Context(), p)
	if err != nil {
		return err
	}
	views, err := s.eventViews(r.Context(), got.Events)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, EventPage{Events: views, Next: got.Next.String()})
	return nil
}

// eventQuery reads the query of GET /v1/events or its stream (readQuery,
// with the route's known parameters) and the filters they share
// (?pipeline=, ?type=, ?since=) into p; the route reads its own from q.
func (s *server) eventQuery(r *http.Request, known ...string) (q url.Values, p store.EventListParams, err error) {
	if q, err = readQuery(r, known...); err != nil {
		return nil, p, err
	}
	if p.PipelineID, err = single(q, "pipeline"); err != nil {
		return nil, p, err
	}
	if p.Types, err = eventTypes(q); err != nil {
		return nil, p, err
	}
	if p.Since, err = s.sinceParam(q); err != nil {
		return nil, p, err
	}
	return q, p, nil
}

// eventTypes reads ?type=: each must be in the catalogue, so a typo is an
// error rather than an empty answer, and none may be empty (?type=, or
// ?type=%20), which would otherwise ask for no filter at all.
func eventTypes(q url.Values) ([]event.Type, error) {
	var out []event.Type
	for _, v := range q["type"] {
		for _, name := range strings.Split(v, ",") {
			name = strings.TrimSpace(name)
			if name == "" {
				return nil, errorf(http.StatusBadRequest, codeBadRequest, "type %q names an empty event type: give each type once, separated by commas (JOB_FAILED,SLA_BREACH)", v)
			}
			t := event.Type(strings.ToUpper(name))
			if _, ok := event.Lookup(t); !ok {
				return nil, errorf(http.StatusBadRequest, codeBadRequest, "type %q is not an event type (for example SLA_BREACH, JOB_FAILED)", name)
			}
			out = append(out, t)
		}
	}
	return out, nil
}

// sinceParam reads ?since=: an RFC 3339 time, or a duration back from the
// engine's now.
func (s *server) sinceParam(q url.Values) (time.Time, error) {
	v, err := single(q, "since")
	if err != nil || v == "" {
		return time.Time{}, err
	}
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	d, err := duration.Parse(v)
	if err != nil {
		return time.Time{}, errorf(http.StatusBadRequest, codeBadRequest, "since %q: want an RFC 3339 time (2026-03-10T06:00:00Z) or a duration back from now (2h, 1d)", v)
	}
	return s.eng.Now().Add(-d), nil
}

// cursorParam reads ?after=, a cursor from a previous page's next.
func cursorParam(q url.Values) (store.Cursor, error) {
	v, err := single(q, "after")
	if err != nil || v == "" {
		return store.Cursor{}, err
	}
	c, err := store.ParseCursor(v)
	if err != nil {
		return store.Cursor{}, errorf(http.StatusBadRequest, codeBadRequest, "after %q: want a cursor from a previous page's \"next\" (%v)", v, err)
	}
	return c, nil
}
