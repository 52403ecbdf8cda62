package decide

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/run/runtest"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
)

// silenceFacts are the facts a store holding ss answers to asked.
func silenceFacts(asked needs.Set, ss ...store.Silence) *Facts {
	f := &Facts{Asked: asked, Silences: map[string]store.Silence{}}
	for _, s := range ss {
		if slices.Contains(asked.Silences, s.ID) {
			f.Silences[s.ID] = s
		}
	}
	return f
}

func aSilence(now time.Time, ends time.Time) store.Silence {
	return store.Silence{Silence: silence.Silence{ID: "s-1", Matchers: silence.Matchers{Pipelines: []string{"p1"}},
		StartsAt: now.Add(-time.Hour), EndsAt: ends, CreatedAt: now.Add(-time.Hour)}, Version: 2}
}

// timerMoves reports whether o writes the timer key due at due, on the
// condition of the due time read (was); removed, whether it deletes it.
func timerMoves(o *Outcome, key string, was, due time.Time) (moved, removed bool) {
	moved = slices.ContainsFunc(o.C.Timers, func(w store.TimerWrite) bool {
		return w.Timer.Key == key && w.Timer.DueAt.Equal(due) && w.ExpectDueAt != nil && w.ExpectDueAt.Equal(was)
	})
	removed = slices.ContainsFunc(o.C.TimerDeletes, func(d store.TimerDelete) bool {
		return d.Key == key && d.ExpectDueAt != nil && d.ExpectDueAt.Equal(was)
	})
	return moved, removed
}

func TestSilenceCreate(t *testing.T) {
	now := runtest.T0
	o, rec, err := SilenceCreate(SilenceIn{Request: silence.Request{Matchers: silence.Matchers{Pipelines: []string{"p1"}}, Duration: time.Hour, By: "op"}, NewSilenceID: "s-new", NewID: ids()}, now)
	if err != nil {
		t.Fatal(err)
	}
	if rec.ID != "s-new" || rec.Version != 1 || len(o.C.Silences) != 1 || o.C.Silences[0].ExpectVersion != 0 {
		t.Fatalf("silence %+v, writes %+v: want s-new, a first write", rec, o.C.Silences)
	}
	if got := types(o.C.Events); !slices.Equal(got, []event.Type{event.SilenceCreated}) {
		t.Fatalf("events %v, want SILENCE_CREATED", got)
	}
	if len(o.C.Timers) != 1 || o.C.Timers[0].Timer.Kind != string(run.TimerSilenceEnd) || !o.C.Timers[0].Timer.DueAt.Equal(now.Add(time.Hour)) {
		t.Fatalf("timers %+v, want the end timer at the silence's end", o.C.Timers)
	}
	if _, _, err := SilenceCreate(SilenceIn{Request: silence.Request{Duration: time.Hour}, NewSilenceID: "s-new"}, now); !errors.Is(err, silence.ErrInvalid) {
		t.Fatalf("no matcher: err %v, want silence.ErrInvalid", err)
	}
}

func TestSilenceExpiry(t *testing.T) {
	now := runtest.T0
	in := SilenceExpiryIn{ID: "s-1", By: "op", NewID: ids()}
	t.Run("a silence in force ends now, its end timer moves to now", func(t *testing.T) {
		s := aSilence(now, now.Add(time.Hour))
		o, got, err := SilenceExpiry(in, silenceFacts(needs.Silence("s-1"), s), now)
		if err != nil {
			t.Fatal(err)
		}
		if len(o.C.Silences) != 1 || o.C.Silences[0].ExpectVersion != s.Version || !o.C.Silences[0].Silence.ExpiredAt.Equal(now) {
			t.Fatalf("writes %+v, want the silence expired now on version %d", o.C.Silences, s.Version)
		}
		if got.Version != s.Version+1 || !got.ExpiredAt.Equal(now) {
			t.Fatalf("answered %+v, want the silence as stored", got)
		}
		if len(o.C.Timers) != 1 || !o.C.Timers[0].Timer.DueAt.Equal(now) {
			t.Fatalf("timers %+v, want the end timer due now", o.C.Timers)
		}
		if ev := types(o.C.Events); !slices.Equal(ev, []event.Type{event.SilenceExpired}) {
			t.Fatalf("events %v, want SILENCE_EXPIRED", ev)
		}
	})
	t.Run("a silence over already changes nothing", func(t *testing.T) {
		s := aSilence(now, now.Add(-time.Minute))
		o, got, err := SilenceExpiry(in, silenceFacts(needs.Silence("s-1"), s), now)
		if err != nil || !o.C.Empty() || got.Version != s.Version {
			t.Fatalf("outcome %+v, answer %+v, err %v: want nothing, the silence as it is", o.C, got, err)
		}
	})
	t.Run("an unknown silence", func(t *testing.T) {
		if _, _, err := SilenceExpiry(in, silenceFacts(needs.Silence("s-1")), now); !errors.Is(err, ErrUnknownSilence) {
			t.Fatalf("err %v, want ErrUnknownSilence", err)
		}
	})
	t.Run("the silence not read", func(t *testing.T) {
		_, _, err := SilenceExpiry(in, silenceFacts(needs.Set{}), now)
		if m, ok := AsMissing(err); !ok || !slices.Contains(m.Needs.Silences, "s-1") {
			t.Fatalf("err %v, want the silence missing", err)
		}
	})
}

func TestSilenceEnd(t *testing.T) {
	now := runtest.T0
	key := run.SilenceEndTimer("s-1").String()
	was := now.Add(-time.Minute)
	timer := store.Timer{Key: key, Kind: string(run.TimerSilenceEnd), DueAt: was}
	for _, c := range []struct {
		name    string
		timer   store.Timer
		stored  []store.Silence
		judge   bool
		movedTo time.Time // zero: removed
	}{
		{name: "a silence over is judged, its timer goes", timer: timer, stored: []store.Silence{aSilence(now, was)}, judge: true},
		{name: "a silence extended waits for its end", timer: timer, stored: []store.Silence{aSilence(now, now.Add(time.Hour))}, movedTo: now.Add(time.Hour)},
		{name: "a silence gone by retention judges nothing", timer: timer},
		{name: "a key that is not a silence end's goes", timer: store.Timer{Key: "nonsense", Kind: string(run.TimerSilenceEnd), DueAt: was}},
	} {
		t.Run(c.name, func(t *testing.T) {
			asked := needs.Timer(nil, nil, needs.NoMarkersRead, c.timer.Key, run.TimerSilenceEnd, c.timer.Run, c.timer.DueAt, now)
			o, end, err := SilenceEnd(EndTimerIn{Timer: c.timer, NewID: ids()}, silenceFacts(asked, c.stored...), now)
			if err != nil {
				t.Fatal(err)
			}
			if (end.Judge != nil) != c.judge || c.judge && (end.Judge.ID != "s-1" || end.MarkerID != "s-1") {
				t.Fatalf("ending %+v, want judged %v", end, c.judge)
			}
			moved, removed := timerMoves(o, c.timer.Key, was, c.movedTo)
			if c.movedTo.IsZero() != removed || !c.movedTo.IsZero() != moved {
				t.Fatalf("timers %+v deletes %+v: want moved to %v (zero: removed), on its due time", o.C.Timers, o.C.TimerDeletes, c.movedTo)
			}
			if bad := c.timer.Key == "nonsense"; bad != slices.ContainsFunc(o.Logs, func(l Log) bool { return strings.Contains(l.Msg, "unreadable timer key") }) {
				t.Fatalf("logs %+v, want the unreadable key logged %v", o.Logs, bad)
			}
		})
	}
	t.Run("the silence not read", func(t *testing.T) {
		_, _, err := SilenceEnd(EndTimerIn{Timer: timer}, silenceFacts(needs.Set{Timers: []string{key}}), now)
		if m, ok := AsMissing(err); !ok || !slices.Contains(m.Needs.Silences, "s-1") {
			t.Fatalf("err %v, want the silence missing", err)
		}
	})
}

func TestMaintenance(t *testing.T) {
	now := runtest.T0 // 08:00
	w, err := silence.NewWindow("nightly", "0 2 * * *", 2*time.Hour, "UTC", silence.Matchers{Pipelines: []string{"p1"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	key := run.MaintenanceEndTimer("nightly").String()
	ended := runtest.HM(4, 0)
	next := ended.Add(24 * time.Hour)
	t.Run("an occurrence's end is judged, the timer moves to the next", func(t *testing.T) {
		o, end := MaintenanceEnd(EndTimerIn{Timer: MaintenanceEndTimer("nightly", ended), Windows: []silence.Window{w}, NewID: ids()}, now)
		if end.Judge == nil || !end.Judge.StartsAt.Equal(runtest.HM(2, 0)) || !end.Judge.EndsAt.Equal(ended) || !strings.HasPrefix(end.MarkerID, w.ID()+"@") {
			t.Fatalf("ending %+v, want the 02:00-04:00 occurrence", end)
		}
		if moved, _ := timerMoves(o, key, ended, next); !moved {
			t.Fatalf("timers %+v, want the timer moved to %v", o.C.Timers, next)
		}
	})
	t.Run("a window no longer configured drops its timer", func(t *testing.T) {
		o, end := MaintenanceEnd(EndTimerIn{Timer: MaintenanceEndTimer("nightly", ended), NewID: ids()}, now)
		if _, removed := timerMoves(o, key, ended, time.Time{}); end.Judge != nil || !removed {
			t.Fatalf("ending %+v, deletes %+v: want nothing judged, the timer removed", end, o.C.TimerDeletes)
		}
	})
	t.Run("arming puts a missing timer, leaves a due one to fire", func(t *testing.T) {
		asked := needs.MaintenanceEnds([]string{key})
		f := &Facts{Asked: asked, Timers: map[string]store.Timer{}}
		o, err := MaintenanceArm([]silence.Window{w}, f, now)
		if err != nil || len(o.C.Timers) != 1 || !o.C.Timers[0].Timer.DueAt.Equal(next) {
			t.Fatalf("timers %+v, err %v: want one at %v", o.C.Timers, err, next)
		}
		f.Timers[key] = MaintenanceEndTimer("nightly", ended) // due, not fired yet
		if o, err := MaintenanceArm([]silence.Window{w}, f, now); err != nil || !o.C.Empty() {
			t.Fatalf("outcome %+v, err %v: want the due timer left to fire", o.C, err)
		}
		if _, err := MaintenanceArm([]silence.Window{w}, &Facts{}, now); !isMissing(err, func(m *Missing) bool { return slices.Contains(m.Needs.Timers, key) }) {
			t.Fatalf("err %v, want the window's timer missing", err)
		}
	})
}

func isMissing(err error, want func(*Missing) bool) bool {
	m, ok := AsMissing(err)
	return ok && want(m)
}

func TestAfterSilence(t *testing.T) {
	now := runtest.T0
	w := newWorld(t, triggerDoc)
	p := w.pipes["p1"]
	key := run.Key{PipelineID: "p1", ScheduleID: p.ScheduleID(), Period: "2026-03-10"}
	breach := event.Event{ID: "e1", Time: now.Add(-30 * time.Minute), Type: event.SLABreach, PipelineID: "p1", ScheduleID: key.ScheduleID, Date: key.Period}
	kind := run.AfterSilenceMarker("s-1", event.SLABreach).String()
	for _, c := range []struct {
		name    string
		runs    []run.Run
		markers []store.Marker
		id      string
		send    bool
	}{
		{name: "a breach that still holds is alerted once, with its marker", send: true},
		{name: "a breach whose period completed meanwhile is not", runs: []run.Run{{Key: key, State: run.Completed, Version: 4, EndedAt: now.Add(-time.Minute)}}},
		{name: "a condition alerted before (its marker) is not again", markers: []store.Marker{{Key: key, Kind: kind, At: now.Add(-time.Minute)}}},
		{name: "a pipeline removed meanwhile: nothing", id: "gone"},
	} {
		t.Run(c.name, func(t *testing.T) {
			w.runs, w.markers = c.runs, c.markers
			ev := breach
			k := key
			if c.id != "" {
				ev.PipelineID, k.PipelineID = c.id, c.id
			}
			f := w.facts(needs.AfterSilence(k))
			var o *Outcome
			err := w.decide(t, f, func(f *Facts) (err error) {
				o, err = AfterSilence(AfterSilenceIn{Event: ev, SilenceID: "s-1", MarkerID: "s-1", NewID: ids()}, f, now)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if !c.send {
				if !o.C.Empty() {
					t.Fatalf("outcome %+v, want nothing", o.C)
				}
				return
			}
			if got := types(o.C.Events); !slices.Equal(got, []event.Type{event.SLABreach}) {
				t.Fatalf("events %v, want the breach again", got)
			}
			if len(o.C.Markers) != 1 || o.C.Markers[0].Marker.Kind != kind || !o.C.Markers[0].IfAbsent {
				t.Fatalf("markers %+v, want %s if absent", o.C.Markers, kind)
			}
		})
	}
	full := needs.AfterSilence(key)
	for _, c := range []struct {
		name string
		drop func(*needs.Set)
		want func(*Missing) bool
	}{
		{"the period's markers", func(n *needs.Set) { n.MarkersOf = nil }, func(m *Missing) bool { return slices.Contains(m.Needs.MarkersOf, key) }},
		{"the pipeline", func(n *needs.Set) { n.Pipelines = nil }, func(m *Missing) bool { return slices.Contains(m.Needs.Pipelines, "p1") }},
		{"the period's run", func(n *needs.Set) { n.Runs = nil }, func(m *Missing) bool { return slices.Contains(m.Needs.Runs, key) }},
	} {
		t.Run("missing "+c.name, func(t *testing.T) {
			w.runs, w.markers = nil, nil
			asked := full
			c.drop(&asked)
			_, err := AfterSilence(AfterSilenceIn{Event: breach, SilenceID: "s-1", MarkerID: "s-1", NewID: ids()}, w.facts(asked), now)
			if !isMissing(err, c.want) {
				t.Fatalf("err %v, want the missing %s", err, c.name)
			}
		})
	}
}
