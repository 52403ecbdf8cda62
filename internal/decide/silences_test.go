package decide

import (
	"encoding/json"
	"errors"
	"fmt"
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
	o, rec, err := SilenceCreate(SilenceIn{Request: silence.Request{Matchers: silence.Matchers{Pipelines: []string{"p1"}}, Duration: time.Hour, By: "op"}, NewSilenceID: "s-new", Env: Env{NewID: ids()}}, now)
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
	in := SilenceExpiryIn{ID: "s-1", By: "op", Env: Env{NewID: ids()}}
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

// endWorld is what a store holds for a silence's end: the silences, the
// event log (each event in its pipeline's shard, numbered in order) and
// the pipelines (their owners).
type endWorld struct {
	world
	silences []store.Silence
	events   []event.Event
}

func newEndWorld(t *testing.T, docs ...string) *endWorld {
	return &endWorld{world: newWorld(t, docs...)}
}

func (w *endWorld) log(pipelineID string, typ event.Type, date string, at time.Time) {
	w.events = append(w.events, event.Event{ID: fmt.Sprint(len(w.events)), Shard: store.EventShard(pipelineID), Seq: int64(len(w.events) + 1),
		Time: at, Type: typ, PipelineID: pipelineID, ScheduleID: "daily", Date: date})
}

// facts are what the store answers to asked.
func (w *endWorld) facts(asked needs.Set) *Facts {
	f := w.world.facts(asked)
	f.Silences = map[string]store.Silence{}
	for _, s := range w.silences {
		if slices.Contains(asked.Silences, s.ID) {
			f.Silences[s.ID] = s
		}
	}
	f.Events = map[needs.EventRange]store.EventPage{}
	for _, r := range asked.Events {
		f.Events[r] = w.page(r)
	}
	return f
}

// page is store.EventList's answer to r.
func (w *endWorld) page(r needs.EventRange) store.EventPage {
	p := store.EventListParams{PipelineID: r.PipelineID, Since: r.Since, Limit: r.Limit}
	for _, typ := range strings.Split(r.Types, ",") {
		p.Types = append(p.Types, event.Type(typ))
	}
	if r.After != "" {
		p.After, _ = store.ParseCursor(r.After)
	}
	shards := p.Shards()
	per := make([][]event.Event, len(shards))
	for i, sh := range shards {
		for _, ev := range w.events {
			if ev.Shard == sh && ev.Seq > p.After[sh] && (p.PipelineID == "" || ev.PipelineID == p.PipelineID) &&
				slices.Contains(p.Types, ev.Type) && !ev.Time.Before(p.Since) {
				per[i] = append(per[i], ev)
			}
		}
	}
	return store.MergeEventShards(p, per)
}

// decide runs d on the facts asked names, as the engine does: what it
// finds missing in further rounds (a late read fails the test). It
// returns the rounds read.
func (w *endWorld) decide(t *testing.T, asked needs.Set, d func(*Facts) error) (needs.Set, error) {
	t.Helper()
	for range 16 {
		err := d(w.facts(asked))
		m, ok := AsMissing(err)
		if !ok {
			return asked, err
		}
		if !m.Needs.Empty() {
			t.Fatalf("late read: %+v", m.Needs)
		}
		asked.Add(m.Rounds) // configs: resolved for every row asked
	}
	t.Fatal("the decision never stops asking")
	return asked, nil
}

func conditionDates(evs []event.Event) []string {
	var out []string
	for _, ev := range evs {
		out = append(out, ev.PipelineID+" "+ev.Date)
	}
	return out
}

func TestSilenceEnd(t *testing.T) {
	now := runtest.T0
	key := run.SilenceEndTimer("s-1").String()
	was := now.Add(-time.Minute)
	timer := store.Timer{Key: key, Kind: string(run.TimerSilenceEnd), DueAt: was}
	const p1 = "pipeline: {id: p1, owner: team-a}\nschedule: {cron: '0 6 * * *'}\njob: {type: command, config: {command: /bin/true}}\n"
	const p2 = "pipeline: {id: p2, owner: team-b}\nschedule: {cron: '0 6 * * *'}\njob: {type: command, config: {command: /bin/true}}\n"
	for _, c := range []struct {
		name    string
		timer   store.Timer
		stored  []store.Silence
		events  func(w *endWorld)
		want    []string // the conditions judged: pipeline and period
		judged  bool
		movedTo time.Time // zero: removed
	}{
		{name: "a silence over judges the conditions it covered, its timer goes", timer: timer, stored: []store.Silence{aSilence(now, was)},
			events: func(w *endWorld) {
				w.log("p1", event.SLABreach, "2026-03-09", now.Add(-2*time.Hour))    // before the silence
				w.log("p1", event.SLABreach, "2026-03-10", now.Add(-30*time.Minute)) // covered
				w.log("p1", event.SLABreach, "2026-03-10", now.Add(-25*time.Minute)) // the same condition again
				w.log("p1", event.JobTriggered, "2026-03-10", now.Add(-20*time.Minute))
				w.log("p2", event.SLABreach, "2026-03-10", now.Add(-30*time.Minute)) // another pipeline's
			}, want: []string{"p1 2026-03-10"}, judged: true},
		{name: "more events than a page: every page is read", timer: timer, stored: []store.Silence{aSilence(now, was)},
			events: func(w *endWorld) {
				for i := range needs.EndEventsPage + 20 {
					w.log("p1", event.SLABreach, fmt.Sprintf("2026-01-%04d", i), now.Add(-30*time.Minute))
				}
			}, judged: true},
		{name: "a silence by owner matches each event's pipeline owner", timer: timer,
			stored: []store.Silence{{Silence: silence.Silence{ID: "s-1", Matchers: silence.Matchers{Owners: []string{"team-a"}}, StartsAt: now.Add(-time.Hour), EndsAt: was}, Version: 1}},
			events: func(w *endWorld) {
				w.log("p1", event.SLABreach, "2026-03-10", now.Add(-30*time.Minute))
				w.log("p2", event.SLABreach, "2026-03-10", now.Add(-30*time.Minute))
			}, want: []string{"p1 2026-03-10"}, judged: true},
		{name: "a silence extended waits for its end", timer: timer, stored: []store.Silence{aSilence(now, now.Add(time.Hour))}, movedTo: now.Add(time.Hour)},
		{name: "a silence gone by retention judges nothing", timer: timer},
		{name: "a key that is not a silence end's goes", timer: store.Timer{Key: "nonsense", Kind: string(run.TimerSilenceEnd), DueAt: was}},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := newEndWorld(t, p1, p2)
			w.silences = c.stored
			if c.events != nil {
				c.events(w)
			}
			asked := needs.Timer(nil, nil, needs.NoMarkersRead, c.timer.Key, run.TimerSilenceEnd, c.timer.Run, c.timer.DueAt, now)
			asked.Add(needs.SilenceEnd(c.timer.Key, func(string) (*silence.Silence, bool) { return nil, false }, now))
			var o *Outcome
			var end SilenceEnding
			_, err := w.decide(t, asked, func(f *Facts) (err error) {
				o, end, err = Timer(TimerIn{Timer: c.timer, Env: Env{NewID: ids()}}, f, now)
				return err
			})
			if err != nil {
				t.Fatal(err)
			}
			if judged := end.SilenceID != ""; judged != c.judged || judged && end.MarkerID != "s-1" {
				t.Fatalf("ending %+v, want judged %v", end, c.judged)
			}
			switch {
			case c.want != nil:
				if got := conditionDates(end.Conditions); !slices.Equal(got, c.want) {
					t.Fatalf("conditions %v, want %v", got, c.want)
				}
			case c.judged:
				if len(end.Conditions) != needs.EndEventsPage+20 {
					t.Fatalf("%d conditions, want %d", len(end.Conditions), needs.EndEventsPage+20)
				}
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
		_, _, err := Timer(TimerIn{Timer: timer}, silenceFacts(needs.Set{Timers: []string{key}}), now)
		if m, ok := AsMissing(err); !ok || !slices.Contains(m.Needs.Silences, "s-1") {
			t.Fatalf("err %v, want the silence missing", err)
		}
	})
}

func TestMaintenance(t *testing.T) {
	now := runtest.T0 // 08:00
	win, err := silence.NewWindow("nightly", "0 2 * * *", 2*time.Hour, "UTC", silence.Matchers{Pipelines: []string{"p1"}}, "")
	if err != nil {
		t.Fatal(err)
	}
	key := run.MaintenanceEndTimer("nightly").String()
	ended := runtest.HM(4, 0)
	next := ended.Add(24 * time.Hour)
	end := func(t *testing.T, w *endWorld, windows []silence.Window) (*Outcome, SilenceEnding) {
		t.Helper()
		var o *Outcome
		var e SilenceEnding
		tm := MaintenanceEndTimer("nightly", ended)
		// The needs name the occurrence's first page: the decision reads
		// no round more.
		in := TimerIn{Timer: tm, Windows: windows, Env: Env{NewID: ids()}}
		asked := TimerNeeds(&Facts{}, needs.ConfigMap{}.Of, in, now)
		read, err := w.decide(t, asked, func(f *Facts) (err error) {
			o, e, err = Timer(in, f, now)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if more := read.Minus(asked); !more.Empty() {
			t.Fatalf("the decision read %+v in further rounds, want nothing the needs did not name", more)
		}
		return o, e
	}
	t.Run("an occurrence's end judges its conditions, the timer moves to the next", func(t *testing.T) {
		w := newEndWorld(t, triggerDoc)
		w.log("p1", event.SLABreach, "2026-03-10", runtest.HM(1, 0)) // before the occurrence
		w.log("p1", event.SLABreach, "2026-03-11", runtest.HM(3, 0))
		o, e := end(t, w, []silence.Window{win})
		if e.SilenceID != win.ID() || !strings.HasPrefix(e.MarkerID, win.ID()+"@") || !slices.Equal(conditionDates(e.Conditions), []string{"p1 2026-03-11"}) {
			t.Fatalf("ending %+v, want the 02:00-04:00 occurrence's one condition", e)
		}
		if moved, _ := timerMoves(o, key, ended, next); !moved {
			t.Fatalf("timers %+v, want the timer moved to %v", o.C.Timers, next)
		}
	})
	t.Run("a window no longer configured drops its timer", func(t *testing.T) {
		o, e := end(t, newEndWorld(t), nil)
		if _, removed := timerMoves(o, key, ended, time.Time{}); e.SilenceID != "" || !removed {
			t.Fatalf("ending %+v, deletes %+v: want nothing judged, the timer removed", e, o.C.TimerDeletes)
		}
	})
	t.Run("arming puts a missing timer, leaves a due one to fire", func(t *testing.T) {
		w := win
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
				o, err = AfterSilence(AfterSilenceIn{Event: ev, SilenceID: "s-1", MarkerID: "s-1", Env: Env{NewID: ids()}}, f, now)
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
			_, err := AfterSilence(AfterSilenceIn{Event: breach, SilenceID: "s-1", MarkerID: "s-1", Env: Env{NewID: ids()}}, w.facts(asked), now)
			if !isMissing(err, c.want) {
				t.Fatalf("err %v, want the missing %s", err, c.name)
			}
		})
	}
}

// SILENCE_CREATED writes the matchers' types and levels as strings
// (silence.Matchers.TypeNames, LevelNames), and leaves out a field with
// none.
func TestSilenceDetailMatchers(t *testing.T) {
	m := silence.Matchers{Types: []event.Type{event.JobFailed, event.SLABreach}, Levels: []event.Level{event.LevelError}}
	o, _, err := SilenceCreate(SilenceIn{Request: silence.Request{Matchers: m, Duration: time.Hour, By: "op"}, NewSilenceID: "s-new", Env: Env{NewID: ids()}}, runtest.T0)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(o.C.Events[0].Detail)
	if err != nil {
		t.Fatal(err)
	}
	want := `"matchers":{"levels":["error"],"types":["JOB_FAILED","SLA_BREACH"]}`
	if !strings.Contains(string(b), want) {
		t.Fatalf("detail %s, want %s", b, want)
	}
}
