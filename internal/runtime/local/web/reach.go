package web

import (
	"context"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/silence"
)

// silenceReach is the silences and maintenance windows a page read once,
// to say which pipelines they reach.
type silenceReach struct {
	silences []silence.Silence
	windows  []silence.Window
}

// silenceBadge is a silence or open window that reaches a pipeline.
type silenceBadge struct {
	ID      string
	Until   time.Time // UTC
	Scope   string    // the types and levels it is limited to; "" for every alert
	Comment string
}

// silenceReachAt reads the silences active at now and the windows.
func (h *handler) silenceReachAt(ctx context.Context, now time.Time) (silenceReach, error) {
	ss, err := h.eng.Silences(ctx, now)
	if err != nil {
		return silenceReach{}, err
	}
	var out silenceReach
	for _, s := range ss {
		if s.ActiveAt(now) {
			out.silences = append(out.silences, s.Silence)
		}
	}
	if out.windows, err = h.eng.Maintenance(ctx); err != nil {
		return silenceReach{}, err
	}
	return out, nil
}

// scope says which alerts of a pipeline m covers: "" for all, else its
// types and levels ("type=SLA_WARNING level=warning").
func scope(m silence.Matchers) string {
	var parts []string
	if len(m.Types) > 0 {
		parts = append(parts, "type="+joined(m.Types, ","))
	}
	if len(m.Levels) > 0 {
		parts = append(parts, "level="+joined(m.Levels, ","))
	}
	return strings.Join(parts, " ")
}

// of is the first silence (the one ending last), else the first open
// window, that reaches p at now; nil when none does.
func (r silenceReach) of(p *pipeline.Pipeline, now time.Time) *silenceBadge {
	var best *silenceBadge
	for _, s := range r.silences {
		if !s.Reaches(p.ID, p.Owner) {
			continue
		}
		if best == nil || s.End().After(best.Until) {
			best = &silenceBadge{ID: s.ID, Until: s.End().UTC(), Scope: scope(s.Matchers), Comment: s.Comment}
		}
	}
	if best != nil {
		return best
	}
	for _, w := range r.windows {
		if _, end, open := w.ActiveAt(now); open && w.Reaches(p.ID, p.Owner) {
			return &silenceBadge{ID: w.ID(), Until: end.UTC(), Scope: scope(w.Matchers), Comment: w.Comment}
		}
	}
	return nil
}
