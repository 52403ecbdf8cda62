package web

import (
	"context"
	"net/http"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
	"github.com/interlockhq/interlock/internal/silence"
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
	ids, m, err := h.eng.SilencedBy(ctx, evs)
	if err != nil {
		return nil, err
	}
	out := make([]eventView, len(evs))
	for i, e := range evs {
		out[i] = eventView{Event: e, SilencedBy: ids[i]}
		if ids[i] != "" {
			out[i].SilenceNote = m.Comment(ids[i])
		}
	}
	return out, nil
}

type silencesPageData struct {
	Silences []api.Silence
	Windows  []windowView
	Now      time.Time
}

type windowView struct {
	ID, Cron, Zone, Duration, Matchers, Comment string
	Active                                      bool
}

// silencesPage is /ui/silences: the active silences and those ended in
// the last day (api.RecentlyEnded), and the maintenance windows.
func (h *handler) silencesPage(r *http.Request) (*view, error) {
	now := h.eng.Now()
	ss, err := h.eng.Silences(r.Context(), now.Add(-api.RecentlyEnded))
	if err != nil {
		return nil, err
	}
	d := silencesPageData{Now: now.UTC(), Silences: []api.Silence{}}
	for _, s := range ss {
		d.Silences = append(d.Silences, api.SilenceView(s, now))
	}
	for _, w := range h.eng.Maintenance() {
		_, _, active := w.ActiveAt(now)
		d.Windows = append(d.Windows, windowView{ID: w.ID(), Cron: w.Cron.String(), Zone: w.Location.String(),
			Duration: w.Duration.String(), Matchers: matchersText(w.Matchers), Comment: w.Comment, Active: active})
	}
	return &view{name: "silences", title: "Silences", nav: "silences", data: d, live: "/v1/events/stream?type=SILENCE_CREATED,SILENCE_EXPIRED"}, nil
}

func matchersText(m silence.Matchers) string { return m.String() }
