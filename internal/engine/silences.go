package engine

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/interlockhq/interlock/internal/decide"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
)

// Silences (internal/silence, docs/silences.md). An operator's silence is
// a store record, created and expired with SILENCE_CREATED and
// SILENCE_EXPIRED in the same commit (decide.SilenceCreate,
// decide.SilenceExpiry), and a timer at its end that alerts, once, each
// condition it silenced that still holds (silenceend.go). Maintenance
// windows come from interlock.yaml (Options.Maintenance).

// ErrUnknownSilence: no silence has that id.
var ErrUnknownSilence = decide.ErrUnknownSilence

// SilenceRequest is an operator's new silence (silence.New decides it).
type SilenceRequest = silence.Request

// MaxSilenceSpan bounds how far ahead a silence may end (silence.MaxSpan).
const MaxSilenceSpan = silence.MaxSpan

// CreateSilence stores a new silence, with SILENCE_CREATED and the timer
// at its end. A request silence.New refuses (no matcher, no end, an end
// not in the future or beyond MaxSilenceSpan, …) is refused with
// ErrInvalidRequest and the field.
func (e *Engine) CreateSilence(ctx context.Context, req SilenceRequest) (_ store.Silence, err error) {
	ctx, span := e.startSpan(ctx, spanOperator+"silence")
	defer func() { endSpan(span, err) }()
	now := e.clk.Now()
	b := &batch{e: e, f: e.directFacts()}
	o, rec, err := decide.SilenceCreate(decide.SilenceIn{Request: req, NewSilenceID: newSilenceID(now), Env: b.env()}, now)
	if err != nil {
		return store.Silence{}, fmt.Errorf("%w: %v", ErrInvalidRequest, err)
	}
	b.Outcome = o
	if err := b.commit(ctx); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return store.Silence{}, fmt.Errorf("%w: id: a silence %q exists", ErrInvalidRequest, rec.ID)
		}
		return store.Silence{}, err
	}
	return rec, nil
}

// ExpireSilence ends a silence now, with SILENCE_EXPIRED, and moves its
// end timer to now, so the conditions it silenced that still hold are
// alerted at once (decide.SilenceExpiry). Expiring one that has ended
// already changes nothing and returns it as it is.
func (e *Engine) ExpireSilence(ctx context.Context, id, by string) (_ store.Silence, err error) {
	ctx, span := e.startSpan(ctx, spanOperator+"silence.expire")
	defer func() { endSpan(span, err) }()
	var out store.Silence
	err = e.retry(ctx, "expire silence "+id, func(ctx context.Context) error {
		f, err := e.loadFacts(ctx, func(*facts, needs.Configs) needs.Set { return needs.Silence(id) })
		if err != nil {
			return err
		}
		b := &batch{e: e, f: f}
		in := decide.SilenceExpiryIn{ID: id, By: by, Env: b.env()}
		next, err := decideWith(ctx, b, decide.SilenceExpiry, in, e.clk.Now())
		if err != nil {
			return err
		}
		return b.commitThen(ctx, func() { out = next })
	})
	return out, err
}

// Silences lists the stored silences that end at or after since (zero:
// all of them), earliest created first.
func (e *Engine) Silences(ctx context.Context, since time.Time) ([]store.Silence, error) {
	return e.st.SilenceList(ctx, store.SilenceListParams{EndedSince: since})
}

// Maintenance returns the maintenance windows: interlock.yaml's, or those
// Options.MaintenanceFrom reads now.
func (e *Engine) Maintenance(ctx context.Context) ([]silence.Window, error) {
	if e.windowsFrom != nil {
		ws, err := e.windowsFrom(ctx)
		if err != nil {
			return nil, fmt.Errorf("maintenance windows: %w", err)
		}
		return slices.Clone(ws), nil
	}
	return slices.Clone(e.windows), nil
}

func newSilenceID(now time.Time) string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return "s-" + now.UTC().Format("20060102") + "-" + hex.EncodeToString(b[:])
}

// SilenceMatcher matches events against the silences read once and the
// maintenance windows, resolving each event's pipeline owner when a
// matcher asks for owners (from the pipeline's config, read once per
// pipeline).
type SilenceMatcher struct {
	e        *Engine
	ctx      context.Context
	silences []silence.Silence
	windows  []silence.Window
	owners   map[string]string
	byOwner  bool
}

// SilenceMatcher reads the silences that may cover events at or after
// since: one read of the few stored silences, for a page of events or a
// sweep of the alert worker.
func (e *Engine) SilenceMatcher(ctx context.Context, since time.Time) (*SilenceMatcher, error) {
	ss, err := e.st.SilenceList(ctx, store.SilenceListParams{EndedSince: since})
	if err != nil {
		return nil, err
	}
	windows, err := e.Maintenance(ctx)
	if err != nil {
		return nil, err
	}
	m := &SilenceMatcher{e: e, ctx: ctx, windows: windows, owners: map[string]string{}}
	for _, s := range ss {
		m.silences = append(m.silences, s.Silence)
	}
	m.byOwner = silence.NeedsOwners(m.silences, windows)
	return m, nil
}

// SilencedBy returns, for each of evs, the id of the silence or window
// that covers it ("" for none), with one read of the silences for the
// lot (from the earliest event on), and the matcher it used (for the
// silences' comments): how the API and the dashboard mark the events
// they show.
func (e *Engine) SilencedBy(ctx context.Context, evs []event.Event) ([]string, *SilenceMatcher, error) {
	ids := make([]string, len(evs))
	if len(evs) == 0 {
		return ids, nil, nil
	}
	since := evs[0].Time
	for _, ev := range evs {
		if ev.Time.Before(since) {
			since = ev.Time
		}
	}
	m, err := e.SilenceMatcher(ctx, since)
	if err != nil {
		return nil, nil, err
	}
	for i, ev := range evs {
		ids[i], _ = m.Match(ev)
	}
	return ids, m, nil
}

// Match returns the silence or window that covers ev, if any.
func (m *SilenceMatcher) Match(ev event.Event) (string, bool) {
	if m == nil || (len(m.silences) == 0 && len(m.windows) == 0) {
		return "", false
	}
	return silence.Match(m.silences, m.windows, m.owner(ev.PipelineID), ev)
}

// Silence returns the silence of id among those read (for its comment).
func (m *SilenceMatcher) Silence(id string) (silence.Silence, bool) {
	if m == nil {
		return silence.Silence{}, false
	}
	for _, s := range m.silences {
		if s.ID == id {
			return s, true
		}
	}
	return silence.Silence{}, false
}

// Window returns the window of id (silence.WindowID).
func (m *SilenceMatcher) Window(id string) (silence.Window, bool) {
	if m == nil {
		return silence.Window{}, false
	}
	for _, w := range m.windows {
		if w.ID() == id {
			return w, true
		}
	}
	return silence.Window{}, false
}

// Comment is the comment of the silence or window of id, "" if none.
func (m *SilenceMatcher) Comment(id string) string {
	if s, ok := m.Silence(id); ok {
		return s.Comment
	}
	if w, ok := m.Window(id); ok {
		return w.Comment
	}
	return ""
}

func (m *SilenceMatcher) owner(pipelineID string) string {
	if !m.byOwner || pipelineID == "" {
		return ""
	}
	if o, ok := m.owners[pipelineID]; ok {
		return o
	}
	o := ""
	if p, _, err := m.e.Pipeline(m.ctx, pipelineID); err == nil {
		o = p.Owner
	}
	m.owners[pipelineID] = o
	return o
}

// Silenced is SilenceMatcher as the alert worker asks it
// (alert.Silencer).
func (e *Engine) Silenced(ctx context.Context, since time.Time) (func(event.Event) (string, bool), error) {
	m, err := e.SilenceMatcher(ctx, since)
	if err != nil {
		return nil, err
	}
	return m.Match, nil
}
