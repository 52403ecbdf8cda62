package api

import (
	"context"
	"net/http"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/duration"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
)

// Silences (docs/silences.md): POST /v1/silences creates one, GET lists
// the active and recently ended ones, DELETE /v1/silences/{id} expires
// one now. Events answers mark the events a silence or a maintenance
// window covers with silencedBy, matched when they are read.

// SilenceRequest is the body of POST /v1/silences: at least one matcher,
// and until (RFC 3339) or duration (30m, 2h, 1d); an id names the silence
// (else one is made): a second silence of that id is refused, so a
// retried request makes one.
type SilenceRequest struct {
	ID string `json:"id,omitempty"`
	silence.Written
	Until    string `json:"until"`
	Duration string `json:"duration"`
	Comment  string `json:"comment"`
}

// Silence is a silence as the API answers it.
type Silence struct {
	ID string `json:"id"`
	silence.Written
	StartsAt  string `json:"startsAt"`
	EndsAt    string `json:"endsAt"`
	ExpiredAt string `json:"expiredAt,omitempty"`
	// Active: the silence covers events at the time of the answer.
	Active    bool   `json:"active"`
	Comment   string `json:"comment,omitempty"`
	CreatedBy string `json:"createdBy,omitempty"`
	CreatedAt string `json:"createdAt"`
}

// Silences is the answer of GET /v1/silences.
type Silences struct {
	Silences []Silence `json:"silences"`
}

// RecentlyEnded is how long GET /v1/silences keeps listing a silence
// after its end (?all=true lists every stored one).
const RecentlyEnded = 24 * time.Hour

// SilenceView renders a stored silence at now.
func SilenceView(s store.Silence, now time.Time) Silence {
	v := Silence{ID: s.ID, Written: s.Matchers.Written(),
		StartsAt: stamp(s.StartsAt), EndsAt: stamp(s.EndsAt), Active: s.ActiveAt(now), Comment: s.Comment,
		CreatedBy: s.CreatedBy, CreatedAt: stamp(s.CreatedAt)}
	if !s.ExpiredAt.IsZero() {
		v.ExpiredAt = stamp(s.ExpiredAt)
	}
	return v
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

func (s *server) createSilence(w http.ResponseWriter, r *http.Request) error {
	if _, err := readQuery(r); err != nil {
		return err
	}
	req, err := readRequest[SilenceRequest](s, w, r, false)
	if err != nil {
		return err
	}
	m, err := req.Written.Parse()
	if err != nil {
		return errorf(http.StatusBadRequest, codeBadRequest, "%s", fieldErrors(err))
	}
	if m.Empty() {
		return errorf(http.StatusBadRequest, codeBadRequest, "matchers: give at least one of \"pipelines\", \"types\", \"levels\", \"owners\" (a silence of everything is refused)")
	}
	if m.EveryPipeline() && !infoFrom(r.Context()).caller.role.Includes(pipeline.RoleAdmin) {
		return errorf(http.StatusForbidden, codeForbidden, "a silence of every pipeline (no \"pipelines\" or \"owners\" matcher, or \"pipelines\": [\"*\"]) needs the admin role; name the pipelines or owners to silence")
	}
	if err := checkComment(req.Comment); err != nil {
		return err
	}
	sr := engine.SilenceRequest{ID: req.ID, Matchers: m, Comment: req.Comment, By: by(r)}
	switch {
	case req.Until != "" && req.Duration != "":
		return errorf(http.StatusBadRequest, codeBadRequest, "give one of \"until\" and \"duration\", not both")
	case req.Until != "":
		if sr.Until, err = time.Parse(time.RFC3339, req.Until); err != nil {
			return errorf(http.StatusBadRequest, codeBadRequest, "field \"until\" %q: want an RFC 3339 time such as 2026-03-10T18:00:00Z", req.Until)
		}
		if !sr.Until.After(s.eng.Now()) {
			return errorf(http.StatusBadRequest, codeBadRequest, "field \"until\" %q is not in the future", req.Until)
		}
	case req.Duration != "":
		if sr.Duration, err = duration.Parse(req.Duration); err != nil || sr.Duration <= 0 {
			return errorf(http.StatusBadRequest, codeBadRequest, "field \"duration\" %q: want a positive duration such as 30m, 2h or 1d", req.Duration)
		}
	default:
		return errorf(http.StatusBadRequest, codeBadRequest, "field \"until\" or \"duration\" is required: when the silence ends")
	}
	created, err := s.eng.CreateSilence(r.Context(), sr)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, SilenceView(created, s.eng.Now()))
	return nil
}

// fieldErrors renders silence's field errors as the API names fields.
func fieldErrors(err error) string {
	var parts []string
	for _, fe := range silence.FieldErrors(err) {
		parts = append(parts, "field \""+fe.Field+"\": "+fe.Msg)
	}
	if len(parts) == 0 {
		return err.Error()
	}
	return strings.Join(parts, "; ")
}

func checkComment(c string) error {
	switch {
	case !utf8.ValidString(c):
		return errorf(http.StatusBadRequest, codeBadRequest, "field \"comment\" is not valid UTF-8")
	case len(c) > silence.MaxComment:
		return errorf(http.StatusBadRequest, codeBadRequest, "field \"comment\" is longer than %d bytes", silence.MaxComment)
	case strings.IndexFunc(c, unicode.IsControl) >= 0:
		return errorf(http.StatusBadRequest, codeBadRequest, "field \"comment\" contains control characters")
	}
	return nil
}

// listSilences answers the active silences and those ended within
// RecentlyEnded; ?all=true every stored one (retention deletes them).
func (s *server) listSilences(w http.ResponseWriter, r *http.Request) error {
	all, err := onlyParam(r, "all")
	if err != nil {
		return err
	}
	now := s.eng.Now()
	since := now.Add(-RecentlyEnded)
	switch all {
	case "", "false":
	case "true":
		since = time.Time{}
	default:
		return errorf(http.StatusBadRequest, codeBadRequest, "all %q: want true or false", all)
	}
	ss, err := s.eng.Silences(r.Context(), since)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, Silences{Silences: views(ss, func(x store.Silence) Silence { return SilenceView(x, now) })})
	return nil
}

// expireSilence ends a silence now; one that has ended already is
// answered as it is.
func (s *server) expireSilence(r *http.Request) (Silence, error) {
	x, err := s.eng.ExpireSilence(r.Context(), r.PathValue("id"), by(r))
	if err != nil {
		return Silence{}, err
	}
	return SilenceView(x, s.eng.Now()), nil
}

// EventView is an event as the API answers it: its envelope, and the
// silence or maintenance window that covers it, matched at read time by
// the event's time (the stored event is never changed).
type EventView struct {
	event.Envelope
	SilencedBy string `json:"silencedBy,omitempty"`
}

// eventViews renders events with silencedBy.
func (s *server) eventViews(ctx context.Context, evs []event.Event) ([]EventView, error) {
	return Silenced(ctx, s.eng, evs, func(e event.Event, by string, _ *engine.SilenceMatcher) EventView {
		return EventView{Envelope: e.Envelope(), SilencedBy: by}
	})
}

// Silenced renders each of evs with view, given the id of the silence or
// window that covers it ("" for none) and the matcher that found it (for
// its comment): one read of the silences for the lot (engine.SilencedBy).
// The API's events and the dashboard's both go through it.
func Silenced[V any](ctx context.Context, eng *engine.Engine, evs []event.Event, view func(e event.Event, by string, m *engine.SilenceMatcher) V) ([]V, error) {
	ids, m, err := eng.SilencedBy(ctx, evs)
	if err != nil {
		return nil, err
	}
	out := make([]V, len(evs))
	for i, e := range evs {
		out[i] = view(e, ids[i], m)
	}
	return out, nil
}
