package web

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
)

// Silences on the dashboard (docs/silences.md): events a silence or a
// maintenance window covers are marked where they are listed, and
// /ui/silences lists the silences, with an expire button for admins.

// eventView is an event as the pages list it: with the silence or window
// that covers it (matched when the page is read), and its comment.
type eventView struct {
	event.Event
	SilencedBy  string
	SilenceNote string
}

// eventViews marks the events a silence or window covers: one read of the
// silences for the lot.
func (h *handler) eventViews(ctx context.Context, evs []event.Event) ([]eventView, error) {
	return api.Silenced(ctx, h.eng, evs, func(e event.Event, by string, m *engine.SilenceMatcher) eventView {
		v := eventView{Event: e, SilencedBy: by}
		if by != "" {
			v.SilenceNote = m.Comment(by)
		}
		return v
	})
}

type silencesPageData struct {
	Silences []silenceRow
	Windows  []windowView
	Now      time.Time
	Form     silenceForm
	Preview  *silencePreview // nil: the form names no matcher yet
}

// silenceRow is a silence as the page lists it.
type silenceRow struct {
	ID        string
	Active    bool
	Matchers  silence.Matchers
	Ends      time.Time // UTC: its end, or its expiry when expired early
	Expired   bool
	Countdown *deadlineView // "ends in", while active
	Comment   string
	CreatedBy string
	CreatedAt time.Time
	// ExtendHref opens the form with its matchers and comment, to save
	// a longer silence in its place.
	ExtendHref string
}

type windowView struct {
	ID, Cron, Zone, Duration, Matchers, Comment string
	Active                                      bool
	// Next is the window's next opening (UTC); End its current
	// occurrence's end while it is open.
	Next, End time.Time
}

// silenceForm is the new-silence form as it was filled (the query of
// /ui/silences: a pipeline page's "Silence…" link and an "Extend" link
// fill it).
type silenceForm struct {
	Pipelines, Owners, Types, Levels string // comma-separated
	Duration, Comment                string
	Extend                           string // the silence this one replaces
	Problem                          string // why the matchers could not be read
}

func (f silenceForm) empty() bool { return f.Pipelines+f.Owners+f.Types+f.Levels == "" }

// silencePreview is what a form's matchers reach now: the pipelines, and
// the open conditions of their current periods the silence would cover.
type silencePreview struct {
	Matchers   string
	Pipelines  []string
	More       int // pipelines reached beyond those listed
	Conditions []coveredCondition
	// EveryPipeline: the matchers reach every pipeline (admins only).
	EveryPipeline bool
}

// coveredCondition is an open problem a silence would cover.
type coveredCondition struct {
	PipelineID, Period string
	Type               event.Type
	Message            string
}

// maxPreviewPipelines bounds the pipelines a preview lists and reads the
// conditions of.
const maxPreviewPipelines = 50

// silencesPage is /ui/silences: the active silences and those ended in
// the last day (api.RecentlyEnded), the maintenance windows, and the form
// of a new silence with a preview of what its matchers reach. With
// ?fragment=preview, the preview alone (what the form's script re-reads).
func (h *handler) silencesPage(r *http.Request) (*view, error) {
	ctx := r.Context()
	now := h.eng.Now()
	q := r.URL.Query()
	form := silenceForm{Pipelines: strings.TrimSpace(q.Get("pipelines")), Owners: strings.TrimSpace(q.Get("owners")),
		Types: strings.TrimSpace(q.Get("types")), Levels: strings.TrimSpace(q.Get("levels")),
		Duration: strings.TrimSpace(q.Get("duration")), Comment: q.Get("comment"), Extend: strings.TrimSpace(q.Get("extend"))}
	if form.Duration == "" {
		form.Duration = "2h"
	}
	d := silencesPageData{Now: now.UTC(), Form: form}
	if !form.empty() {
		pv, err := h.preview(ctx, form, now)
		var fe *silence.FieldError
		switch {
		case errors.As(err, &fe) || errors.Is(err, silence.ErrInvalid):
			d.Form.Problem = err.Error()
		case err != nil:
			return nil, err
		default:
			d.Preview = pv
		}
	}
	if q.Get("fragment") == "preview" {
		return &view{name: "fragment-preview", data: d}, nil
	}
	ss, err := h.eng.Silences(ctx, now.Add(-api.RecentlyEnded))
	if err != nil {
		return nil, err
	}
	for _, st := range ss {
		sl := st.Silence
		row := silenceRow{ID: sl.ID, Active: sl.ActiveAt(now), Matchers: sl.Matchers, Ends: sl.End().UTC(),
			Expired: !sl.ExpiredAt.IsZero() && sl.ExpiredAt.Before(sl.EndsAt), Comment: sl.Comment, CreatedBy: sl.CreatedBy, CreatedAt: sl.CreatedAt.UTC()}
		if row.Active {
			row.Countdown = &deadlineView{At: row.Ends, What: "", Zone: "UTC", Now: now}
			v := url.Values{"extend": {sl.ID}, "duration": {"2h"}}
			for k, vs := range map[string][]string{"pipelines": sl.Pipelines, "owners": sl.Owners, "types": sl.TypeNames(), "levels": sl.LevelNames()} {
				if len(vs) > 0 {
					v.Set(k, strings.Join(vs, ","))
				}
			}
			if sl.Comment != "" {
				v.Set("comment", sl.Comment)
			}
			row.ExtendHref = "/ui/silences?" + v.Encode() + "#silence-form"
		}
		d.Silences = append(d.Silences, row)
	}
	windows, err := h.eng.Maintenance(ctx)
	if err != nil {
		return nil, err
	}
	for _, w := range windows {
		_, end, active := w.ActiveAt(now)
		wv := windowView{ID: w.ID(), Cron: w.Cron.String(), Zone: w.Location.String(),
			Duration: w.Duration.String(), Matchers: w.Matchers.String(), Comment: w.Comment, Active: active,
			Next: w.Cron.Next(now, w.Location).UTC()}
		if active {
			wv.End = end.UTC()
		}
		d.Windows = append(d.Windows, wv)
	}
	return &view{name: "silences", title: "Silences", nav: "silences", data: d, live: "/v1/events/stream?type=SILENCE_CREATED,SILENCE_EXPIRED"}, nil
}

// preview reads what the form's matchers reach: every running pipeline
// they reach, and for the first maxPreviewPipelines of them the open
// conditions of the current period they cover (deps.OpensCondition,
// deps.ConditionHolds on the period's stored facts).
func (h *handler) preview(ctx context.Context, f silenceForm, now time.Time) (*silencePreview, error) {
	m, err := silence.ParseMatchers(list(f.Pipelines), list(f.Types), list(f.Levels), list(f.Owners))
	if err != nil {
		return nil, err
	}
	out := &silencePreview{Matchers: m.String(), EveryPipeline: m.EveryPipeline()}
	entries, err := h.board(ctx, now)
	if err != nil {
		return nil, err
	}
	for i := range entries {
		e := &entries[i]
		if !m.Reaches(e.p.ID, e.p.Owner) {
			continue
		}
		if len(out.Pipelines) == maxPreviewPipelines {
			out.More++
			continue
		}
		out.Pipelines = append(out.Pipelines, e.p.ID)
		key := e.key()
		page, err := h.eng.Store().EventList(ctx, store.EventListParams{PipelineID: key.PipelineID, Period: key.Period})
		if err != nil {
			return nil, fmt.Errorf("events of %s: %w", key.PipelineID, err)
		}
		var facts *deps.ConditionFacts
		seen := map[event.Type]bool{}
		for _, ev := range page.Events {
			if seen[ev.Type] || !deps.OpensCondition(ev.Type) || !m.Matches(e.p.Owner, ev) {
				continue
			}
			if facts == nil {
				cf, err := store.ConditionFactsOf(ctx, h.eng.Store(), key)
				if err != nil {
					return nil, err
				}
				facts = &cf
			}
			if deps.ConditionHolds(e.p, ev, *facts, now) {
				seen[ev.Type] = true
				out.Conditions = append(out.Conditions, coveredCondition{PipelineID: key.PipelineID, Period: key.Period, Type: ev.Type, Message: ev.Message})
			}
		}
	}
	return out, nil
}

// list splits a comma-separated form field; nil when empty.
func list(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}
