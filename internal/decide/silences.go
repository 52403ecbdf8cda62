package decide

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"

	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/needs"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
)

// Silences and maintenance windows (package silence decides their
// validity, expiry, ends and occurrences; docs/silences.md): an
// operator's silence is created and expired with SILENCE_CREATED and
// SILENCE_EXPIRED in the same commit as the record, and a timer at its
// end (moved to the expiry when it is expired early) that alerts, once,
// each condition it silenced that still holds. A window's end timer is
// armed at its next occurrence's end and re-armed by each firing.

// ErrUnknownSilence: no silence has that id.
var ErrUnknownSilence = errors.New("unknown silence")

// Silence returns the stored silence of id (nil: none stored).
func (f *Facts) Silence(id string) (*store.Silence, error) {
	return stored(f.Asked.Silences, f.Silences, id, needs.Silence(id))
}

// SilenceEndTimer is the timer at s's end.
func SilenceEndTimer(s silence.Silence) store.Timer {
	return store.Timer{Key: run.SilenceEndTimer(s.ID).String(), Kind: string(run.TimerSilenceEnd), DueAt: s.End(),
		Detail: sensor.NewObject(map[string]sensor.Value{"silence": sensor.StringValue(s.ID)})}
}

// MaintenanceEndTimer is the end timer of window name, due at due.
func MaintenanceEndTimer(name string, due time.Time) store.Timer {
	return store.Timer{Key: run.MaintenanceEndTimer(name).String(), Kind: string(run.TimerMaintenanceEnd), DueAt: due,
		Detail: sensor.NewObject(map[string]sensor.Value{"window": sensor.StringValue(name)})}
}

// SilenceIn is an operator's silence to create: the request and the id
// a new one gets when the request names none (the engine's random id).
type SilenceIn struct {
	Request      silence.Request
	NewSilenceID string
	Env
}

// SilenceCreate decides a new silence (silence.New: a request it refuses
// is the error, naming the field): its record, SILENCE_CREATED and the
// timer at its end. It reads no facts: the record's write is conditioned
// on no silence of its id existing.
func SilenceCreate(in SilenceIn, now time.Time) (*Outcome, store.Silence, error) {
	s, err := silence.New(in.Request, now, in.NewSilenceID)
	if err != nil {
		return nil, store.Silence{}, err
	}
	o := New(nil, nil, now, in.Env)
	rec := store.Silence{Silence: s}
	o.C.Silences = []store.SilenceWrite{{Silence: rec}}
	o.PutTimer(SilenceEndTimer(s), nil)
	o.Emit(run.Key{}, event.SilenceCreated, fmt.Sprintf("silence %s by %s until %s: %s", s.ID, orSomeone(in.Request.By), s.EndsAt.UTC().Format(time.RFC3339), s.Matchers), silenceDetail(s, in.Request.By))
	rec.Version = 1
	return o, rec, nil
}

// SilenceExpiryIn is an operator's expiry of the silence ID.
type SilenceExpiryIn struct {
	ID, By string
	Env
}

// SilenceExpiry decides an operator's expiry of a silence (silence
// Silence.Expire): it ends now, with SILENCE_EXPIRED, and its end timer
// moves to now, so the conditions it silenced that still hold are
// alerted at once. One over already changes nothing (an empty outcome);
// the silence is answered as it will be stored. ErrUnknownSilence when
// none has that id.
func SilenceExpiry(in SilenceExpiryIn, f *Facts, now time.Time) (*Outcome, store.Silence, error) {
	cur, err := f.Silence(in.ID)
	if err != nil {
		return nil, store.Silence{}, err
	}
	if cur == nil {
		return nil, store.Silence{}, fmt.Errorf("%w %q", ErrUnknownSilence, in.ID)
	}
	o := New(nil, f, now, in.Env)
	next := *cur
	var changed bool
	if next.Silence, changed = cur.Expire(now); !changed {
		return o, *cur, nil
	}
	o.C.Silences = []store.SilenceWrite{{Silence: next, ExpectVersion: cur.Version}}
	o.PutTimer(SilenceEndTimer(next.Silence), nil)
	o.Emit(run.Key{}, event.SilenceExpired, fmt.Sprintf("silence %s expired by %s: %s", in.ID, orSomeone(in.By), cur.Matchers), silenceDetail(next.Silence, in.By))
	next.Version++
	return o, next, nil
}

// SilenceEnding is what a silence's or a window's end timer leaves to
// judge: the conditions the silence SilenceID covered (the latest event
// that opened each: deps.SilencedConditions), each judged and alerted
// once under MarkerID (AfterSilence).
type SilenceEnding struct {
	SilenceID  string
	MarkerID   string
	Conditions []event.Event
}

// MaxAfterSilenceEvents bounds the events one end reads (a silence that
// covered more is judged on the first ones).
const MaxAfterSilenceEvents = 100_000

// ending is the end of s under markerID: the conditions it covered, among
// the stored events silence.EndQueryOf names (needs.EndEvents), read page
// by page — the first named by the needs (needs.SilenceEnd), the others
// in further rounds (each page's cursor names the next: found as they
// go, Missing.Rounds) — matched against s with each event's pipeline owner
// when s names owners (the pipelines' configs, in rounds too).
func ending(f *Facts, s silence.Silence, markerID string) (SilenceEnding, error) {
	end := SilenceEnding{SilenceID: s.ID, MarkerID: markerID}
	r, ok := needs.EndEvents(s)
	if !ok {
		return end, nil
	}
	ss := []silence.Silence{s}
	byOwner := silence.NeedsOwners(ss, nil)
	var covered []event.Event
	for read := 0; read < MaxAfterSilenceEvents; {
		page, err := f.eventsIn(r)
		if err != nil {
			return SilenceEnding{}, err
		}
		var lack Missing
		for _, ev := range page.Events {
			owner := ""
			if byOwner && ev.PipelineID != "" {
				lp, err := f.Pipeline(ev.PipelineID)
				if m, ok := AsMissing(err); ok {
					lack.Rounds.Add(m.Needs)
					lack.Configs = append(lack.Configs, m.Configs...)
					continue
				}
				if err != nil {
					return SilenceEnding{}, err
				}
				if lp != nil {
					owner = lp.P.Owner
				}
			}
			if _, ok := silence.Match(ss, nil, owner, ev); ok {
				covered = append(covered, ev)
			}
		}
		if !lack.Rounds.Empty() || len(lack.Configs) > 0 {
			return SilenceEnding{}, &lack
		}
		read += len(page.Events)
		if len(page.Events) < r.Limit {
			break
		}
		r.After = page.Next.String()
	}
	end.Conditions = deps.SilencedConditions(covered)
	return end, nil
}

// eventsIn returns the page of events r names: one not read yet is read
// in a further round (an end's pages are found as they go).
func (f *Facts) eventsIn(r needs.EventRange) (store.EventPage, error) {
	if !slices.Contains(f.Asked.Events, r) {
		return store.EventPage{}, &Missing{Rounds: needs.Set{Events: []needs.EventRange{r}}}
	}
	return f.Events[r], nil
}

// readSilence answers the silence of id as needs.ReadSilences does.
func (f *Facts) readSilence(id string) (*silence.Silence, bool) {
	if !slices.Contains(f.Asked.Silences, id) {
		return nil, false
	}
	s, ok := f.Silences[id]
	if !ok {
		return nil, true
	}
	return &s.Silence, true
}

// silenceEnd decides a due silence end timer: a silence not over (a
// timer left from an older end) moves it to its end; a silence over is
// judged (SilenceEnding), a silence gone by retention judges nothing. A
// key that is not a silence end's (a store edited by hand) is logged:
// no handler can act on it. The timer goes unless moved (Timer).
func (d timerDecision) silenceEnd() (*Outcome, SilenceEnding, error) {
	t := d.in.Timer
	o := d.outcome(nil)
	k, ok := timerKeyOf(o, t, run.TimerSilenceEnd)
	if !ok {
		return o, SilenceEnding{}, nil
	}
	stored, err := d.f.Silence(k.Name)
	if err != nil {
		return nil, SilenceEnding{}, err
	}
	var end SilenceEnding
	switch {
	case stored == nil: // gone by retention: nothing to judge
	case !stored.Over(d.now):
		due := t.DueAt
		o.PutTimer(SilenceEndTimer(stored.Silence), &due) // wait for the end
	default:
		if end, err = ending(d.f, stored.Silence, stored.ID); err != nil {
			return nil, SilenceEnding{}, err
		}
	}
	return o, end, nil
}

// maintenanceEnd decides a due window end timer: the occurrence that
// ended at its due time is judged (silence.EndedOccurrence among
// TimerIn.Windows), and the timer moves to the next occurrence's end; a
// window no longer configured, or one that never ends again, lets it go
// (Timer).
func (d timerDecision) maintenanceEnd() (*Outcome, SilenceEnding, error) {
	t := d.in.Timer
	o := d.outcome(nil)
	var end SilenceEnding
	if k, ok := timerKeyOf(o, t, run.TimerMaintenanceEnd); ok {
		if occ, ok := silence.EndedOccurrence(d.in.Windows, k.Name, t.DueAt, d.now); ok {
			var err error
			if end, err = ending(d.f, occ.Silence, occ.MarkerID); err != nil {
				return nil, SilenceEnding{}, err
			}
			if !occ.Next.IsZero() {
				due := t.DueAt
				o.PutTimer(MaintenanceEndTimer(k.Name, occ.Next), &due)
			}
		}
	}
	return o, end, nil
}

// timerKeyOf reads t's key as one of family fam; one that is not is
// logged (its timer goes: no handler can act on it, and kept it would
// fire for ever).
func timerKeyOf(o *Outcome, t store.Timer, fam run.TimerFamily) (run.TimerKey, bool) {
	k, err := run.ParseTimerKey(t.Key)
	if err == nil && k.Family != fam {
		err = fmt.Errorf("%w: %q is not a %s timer's key", run.ErrTimerKey, t.Key, fam)
	}
	if err != nil {
		o.log(slog.LevelError, "unreadable timer key; removing the timer", "key", t.Key, "kind", t.Kind, "err", err)
		return run.TimerKey{}, false
	}
	return k, true
}

// MaintenanceArm decides the end timers of the maintenance windows
// configured now (silence.ArmWindowEnd): each window with none gets one
// at its next occurrence's end; one already due is left to fire, one
// armed for another future instant is moved. It reads the windows' end
// timers (needs.MaintenanceEnds).
func MaintenanceArm(windows []silence.Window, f *Facts, now time.Time) (*Outcome, error) {
	o := New(nil, f, now, Env{})
	for _, w := range windows {
		t, err := f.Timer(run.MaintenanceEndTimer(w.Name).String())
		if err != nil {
			return nil, err
		}
		var cur time.Time
		if t != nil {
			cur = t.DueAt
		}
		if due, put := silence.ArmWindowEnd(w, now, cur, t != nil); put {
			o.PutTimer(MaintenanceEndTimer(w.Name, due), nil)
		}
	}
	return o, nil
}

// AfterSilenceIn is one condition a silence or window covered (ev, the
// latest event that opened it: deps.SilencedConditions), judged at its
// end under the marker id of the end (SilenceEnding).
type AfterSilenceIn struct {
	Event     event.Event
	SilenceID string
	MarkerID  string
	Env
}

// AfterSilence decides whether a silenced condition is alerted at its
// silence's end (deps.LetGo on its period's facts, needs.AfterSilence):
// the alert and its marker (run.AfterSilenceMarker, written if absent) in
// one outcome, so a restart or a second replica that judges it again
// sends nothing more. A condition cleared meanwhile, or told by a later
// alert, sends nothing (logged); one alerted before (its marker), or of
// a pipeline no longer running, nothing either.
func AfterSilence(in AfterSilenceIn, f *Facts, now time.Time) (*Outcome, error) {
	ev := in.Event
	key := run.Key{PipelineID: ev.PipelineID, ScheduleID: ev.ScheduleID, Period: ev.Date}
	kind := run.AfterSilenceMarker(in.MarkerID, ev.Type).String()
	none := New(nil, f, now, in.Env)
	if done, err := f.HasMarker(key, kind); err != nil || done {
		return none, err
	}
	lp, err := f.Pipeline(key.PipelineID)
	if err != nil || lp == nil {
		return none, err
	}
	facts, err := ConditionFacts(f, key)
	if err != nil {
		return nil, err
	}
	held, verdict := deps.LetGo(lp.P, ev, facts, now)
	switch verdict {
	case deps.LetGoCleared:
		none.log(slog.LevelInfo, "silenced condition cleared before the silence ended; nothing to send", "silence", in.SilenceID,
			"pipeline", key.PipelineID, "period", key.Period, "type", ev.Type)
		return none, nil
	case deps.LetGoTold:
		none.log(slog.LevelInfo, "silenced condition was reported by a later alert; nothing to send", "silence", in.SilenceID,
			"pipeline", key.PipelineID, "period", key.Period, "type", ev.Type)
		return none, nil
	}
	o := New(lp, f, now, in.Env)
	o.Marker(store.Marker{Key: key, Kind: kind, At: now}, true)
	o.Notes(key, []run.Note{deps.AfterSilence(held, in.SilenceID)})
	return o, nil
}

func orSomeone(by string) string {
	if by == "" {
		return "someone"
	}
	return by
}

// silenceDetail is the detail of SILENCE_CREATED and SILENCE_EXPIRED:
// the silence, who acted, and its matchers.
func silenceDetail(s silence.Silence, by string) sensor.Object {
	f := map[string]sensor.Value{
		"silence":  sensor.StringValue(s.ID),
		"by":       sensor.StringValue(by),
		"startsAt": sensor.StringValue(s.StartsAt.UTC().Format(time.RFC3339Nano)),
		"endsAt":   sensor.StringValue(s.End().UTC().Format(time.RFC3339Nano)),
		"matchers": sensor.ObjectValue(matchersObject(s.Matchers)),
	}
	if s.Comment != "" {
		f["comment"] = sensor.StringValue(s.Comment)
	}
	return sensor.NewObject(f)
}

// matchersObject is how matchers are written in events.
func matchersObject(m silence.Matchers) sensor.Object {
	f := map[string]sensor.Value{}
	add := func(name string, vs []string) {
		if len(vs) > 0 {
			f[name] = sensor.ArrayValue(stringValues(vs))
		}
	}
	add("pipelines", m.Pipelines)
	add("types", m.TypeNames())
	add("levels", m.LevelNames())
	add("owners", m.Owners)
	return sensor.NewObject(f)
}

func stringValues(vs []string) []sensor.Value {
	l := make([]sensor.Value, len(vs))
	for i, v := range vs {
		l[i] = sensor.StringValue(v)
	}
	return l
}
