package watchdog

import (
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store/record"
)

// Grace is how long after an expected time (a cron start, an inclusion
// date's time, a trigger sensor's arrival) the watchdog waits before it
// calls the run missing: the engine acts at that instant, and a snapshot
// taken while it commits must not read as a miss.
const Grace = time.Minute

// SLABreachTimerKey is the key of a period's absolute SLA breach timer
// ("sla-breach/<pipeline>/<schedule>/<period>"), the timer sla-scheduling
// looks for (Snapshot.BreachTimers) and names in its finding.
func SLABreachTimerKey(k run.Key) string { return run.PeriodTimer(run.TimerSLABreach, k).String() }

// StuckMarker is the dedup marker kind of a RUN_STUCK finding
// (run.StuckMarker: "run-stuck:0:RUNNING"), so a run is reported once per
// state it gets stuck in, and a rerun (a new generation) that gets stuck
// is reported again.
func StuckMarker(r run.Run) string { return run.StuckMarker(r).String() }

// watched returns the pipelines the watchdog looks at: every pipeline
// with a config that is not in dry-run (dry-run pipelines are invisible
// to it), by id (in a pass, built once for its checks).
func (s *Snapshot) watched() map[string]*Pipeline {
	if s.idx == nil {
		return s.watchedByID()
	}
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	if s.idx.watched == nil {
		s.idx.watched = s.watchedByID()
	}
	return s.idx.watched
}

// watchedList is watched in Snapshot order (in a pass, listed once for
// its checks).
func (s *Snapshot) watchedList() []*Pipeline {
	if s.idx == nil {
		return s.listWatched()
	}
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	if !s.idx.listed {
		s.idx.list, s.idx.listed = s.listWatched(), true
	}
	return s.idx.list
}

func (s *Snapshot) watchedByID() map[string]*Pipeline {
	out := make(map[string]*Pipeline, len(s.Pipelines))
	for i := range s.Pipelines {
		wp := &s.Pipelines[i]
		if wp.P == nil || wp.P.DryRun {
			continue
		}
		out[wp.P.ID] = wp
	}
	return out
}

func (s *Snapshot) listWatched() []*Pipeline {
	var out []*Pipeline
	for i := range s.Pipelines {
		wp := &s.Pipelines[i]
		if wp.P != nil && !wp.P.DryRun {
			out = append(out, wp)
		}
	}
	return out
}

func (s *Snapshot) hasMarker(k run.Key, kind string) bool {
	_, ok := s.Markers[MarkerKey{Key: k, Kind: kind}]
	return ok
}

// passIndex is what several checks of one pass derive from the same
// snapshot, derived once per pass (runChecks gives each pass its own);
// nil when a check runs on its own. Checks only read what it holds.
type passIndex struct {
	mu sync.Mutex
	// grouped is a kind's markers by pipeline, sorted: those of
	// groupedKinds from one walk of the markers, at the first ask, any
	// other kind's when asked for.
	grouped map[string]map[string][]record.Marker
	sensors map[string][]record.Sensor
	// watched and list are watched and watchedList's answers (listed:
	// list is derived); pending is pendingTriggers' by pipeline id.
	watched map[string]*Pipeline
	list    []*Pipeline
	listed  bool
	pending map[string]map[string]pendingTrigger
}

// groupedKinds are the marker kinds the checks ask markersOf for: a pass
// collects them in one walk of the markers (most markers are of other
// kinds).
var groupedKinds = []string{run.MarkerScheduleMissed, run.MarkerIrregularMissed, run.MarkerFirstArrival}

// markersOf returns the markers of one kind, by pipeline id, sorted by
// key (so findings come out in period order). In a pass, the markers are
// walked once for all kinds, and a kind asked for again is not grouped
// again.
func (s *Snapshot) markersOf(kind string) map[string][]record.Marker {
	if s.idx == nil {
		var ms []record.Marker
		for mk, m := range s.Markers {
			if mk.Kind == kind {
				ms = append(ms, m)
			}
		}
		return groupMarkers(ms)
	}
	x := s.idx
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.grouped == nil {
		// Grouped by pipeline as they are walked (one copy of each), a
		// kind compared with each grouped kind's name, not hashed: most
		// markers are of none of them.
		x.grouped = make(map[string]map[string][]record.Marker, len(groupedKinds))
		groups := make([]map[string][]record.Marker, len(groupedKinds))
		for i, k := range groupedKinds {
			groups[i] = map[string][]record.Marker{}
			x.grouped[k] = groups[i]
		}
		for mk, m := range s.Markers {
			for i, k := range groupedKinds {
				if mk.Kind == k {
					groups[i][m.Key.PipelineID] = append(groups[i][m.Key.PipelineID], m)
					break
				}
			}
		}
		for _, g := range groups {
			sortGroups(g)
		}
	}
	g, ok := x.grouped[kind]
	if !ok {
		// A kind no check asked for when this was written: walked for.
		var ms []record.Marker
		for mk, m := range s.Markers {
			if mk.Kind == kind {
				ms = append(ms, m)
			}
		}
		g = groupMarkers(ms)
		x.grouped[kind] = g
	}
	return g
}

// groupMarkers groups markers by pipeline id, each list sorted by key.
func groupMarkers(markers []record.Marker) map[string][]record.Marker {
	out := map[string][]record.Marker{}
	for _, m := range markers {
		out[m.Key.PipelineID] = append(out[m.Key.PipelineID], m)
	}
	sortGroups(out)
	return out
}

// sortGroups sorts each pipeline's markers by key.
func sortGroups(g map[string][]record.Marker) {
	for _, ms := range g {
		slices.SortFunc(ms, func(a, b record.Marker) int { return compareKeys(a.Key, b.Key) })
	}
}

func compareKeys(a, b run.Key) int {
	if c := strings.Compare(a.PipelineID, b.PipelineID); c != 0 {
		return c
	}
	if c := strings.Compare(a.ScheduleID, b.ScheduleID); c != 0 {
		return c
	}
	return strings.Compare(a.Period, b.Period)
}

// sensorsByPipeline groups the snapshot's sensors by pipeline id (once
// per pass).
func (s *Snapshot) sensorsByPipeline() map[string][]record.Sensor {
	if s.idx == nil {
		return groupSensors(s.Sensors)
	}
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	if s.idx.sensors == nil {
		s.idx.sensors = groupSensors(s.Sensors)
	}
	return s.idx.sensors
}

func groupSensors(sensors []record.Sensor) map[string][]record.Sensor {
	out := map[string][]record.Sensor{}
	for _, x := range sensors {
		out[x.PipelineID] = append(out[x.PipelineID], x)
	}
	return out
}

// runIndex answers "does this period have a run" for the checks that
// look for missing runs.
type runIndex struct {
	s *Snapshot
}

func newRunIndex(s *Snapshot) runIndex { return runIndex{s: s} }

// hourSuffixes are "T00" … "T23".
var hourSuffixes = func() (out [24]string) {
	for h := range out {
		out[h] = fmt.Sprintf("T%02d", h)
	}
	return out
}()

// find returns the period's run. For a daily period, a run of any hour
// of that date counts too: a trigger-only pipeline whose sensors carry an
// hour keys its runs by hour. (Probing the 24 hour keys on a miss keeps
// the common case, a run under its own key, at one lookup.)
func (ix runIndex) find(k run.Key, per schedule.Period) (run.Run, bool) {
	if r, ok := ix.s.Runs[k]; ok {
		return r, true
	}
	// A run from before a reload added or removed the cron.
	if r, ok := ix.s.Runs[run.OtherSchedule(k)]; ok {
		return r, true
	}
	if per.Hourly {
		return run.Run{}, false
	}
	hk := k
	for _, h := range hourSuffixes {
		hk.Period = k.Period + h
		if r, ok := ix.s.Runs[hk]; ok {
			return r, true
		}
	}
	return run.Run{}, false
}

// handled reports whether a period was taken care of: it has a run (as
// in find), or the pipeline was in dry-run then and only projected it (a
// pipeline switched to live must not be told it missed, nor start a real
// run for, a period it observed in dry-run).
func (ix runIndex) handled(k run.Key, per schedule.Period) bool {
	if _, ok := ix.find(k, per); ok {
		return true
	}
	return ix.s.hasMarker(k, run.MarkerDryRun) || ix.s.hasMarker(k, run.MarkerDryRunSeen)
}

// keyOf is the run key of a pipeline's period.
func keyOf(p *pipeline.Pipeline, per schedule.Period) run.Key {
	return run.Key{PipelineID: p.ID, ScheduleID: p.ScheduleID(), Period: periodString(per)}
}

// periodString is per.String() without fmt: the checks format a period
// for every tick and date they look at, over every pipeline.
func periodString(per schedule.Period) string {
	d := per.Date
	if d.Year < 0 || d.Year > 9999 {
		return per.String()
	}
	b := make([]byte, 0, 13)
	b = append(b, byte('0'+d.Year/1000), byte('0'+d.Year/100%10), byte('0'+d.Year/10%10), byte('0'+d.Year%10), '-')
	b = append(b, byte('0'+int(d.Month)/10), byte('0'+int(d.Month)%10), '-', byte('0'+d.Day/10), byte('0'+d.Day%10))
	if per.Hourly {
		b = append(b, 'T', byte('0'+per.Hour/10), byte('0'+per.Hour%10))
	}
	return string(b)
}

// prevPeriod is the period before per.
func prevPeriod(per schedule.Period) schedule.Period {
	if per.Hourly {
		return schedule.HourlyPeriod(per.Date, per.Hour-1)
	}
	return schedule.Daily(per.Date.AddDays(-1))
}

// pendingTrigger is stored trigger data for a period: the earliest
// sensor (by arrival) that matches the trigger key and satisfies its
// condition.
type pendingTrigger struct {
	sensor record.Sensor
	period schedule.Period
}

// pendingTriggers returns, by period string, the pipeline's stored
// trigger sensors that satisfy the trigger condition now and arrived
// after the pipeline was first loaded. trigger-reconciliation starts the
// runs they should have started; missed-inclusion-dates and
// trigger-deadlines leave those periods to it. In a pass, each
// pipeline's are derived once for the three (sensors is always the
// pipeline's own: sensorsByPipeline).
func (s *Snapshot) pendingTriggers(wp *Pipeline, sensors []record.Sensor) map[string]pendingTrigger {
	if s.idx == nil || wp.P.Schedule.Trigger == nil {
		return s.findPendingTriggers(wp, sensors)
	}
	s.idx.mu.Lock()
	defer s.idx.mu.Unlock()
	pend, ok := s.idx.pending[wp.P.ID]
	if !ok {
		pend = s.keptPendingTriggers(wp, sensors)
		if s.idx.pending == nil {
			s.idx.pending = map[string]map[string]pendingTrigger{}
		}
		s.idx.pending[wp.P.ID] = pend
	}
	return pend
}

// keptPendingTriggers is findPendingTriggers, kept by Kept between passes
// while the pipeline's config, first load, sensors and the rule options
// are unchanged and its trigger condition does not read now. The caller
// holds s.idx.mu.
func (s *Snapshot) keptPendingTriggers(wp *Pipeline, sensors []record.Sensor) map[string]pendingTrigger {
	x := s.kept
	if x == nil || x.pending == nil || wp.P.Schedule.Trigger.Rule.ReadsNow() {
		return s.findPendingTriggers(wp, sensors)
	}
	id := wp.P.ID
	if m, ok := x.pending[id]; ok && m.p == wp.P && m.firstLoaded.Equal(wp.FirstLoadedAt) && m.rules == s.Rules && m.gen == x.sensorGen[id] {
		return m.pend
	}
	pend := s.findPendingTriggers(wp, sensors)
	x.pending[id] = pendingMemo{p: wp.P, firstLoaded: wp.FirstLoadedAt, rules: s.Rules, gen: x.sensorGen[id], pend: pend}
	return pend
}

func (s *Snapshot) findPendingTriggers(wp *Pipeline, sensors []record.Sensor) map[string]pendingTrigger {
	p := wp.P
	if p.Schedule.Trigger == nil {
		return nil
	}
	var out map[string]pendingTrigger
	for _, x := range sensors {
		if !run.MatchesTrigger(p, x.Key) || x.ChangedAt.Before(wp.FirstLoadedAt) {
			continue
		}
		if !run.TriggerCheck(p, x.Record(), s.Now, s.Rules).Passed {
			continue
		}
		per, err := run.SensorPeriod(p, x.Key, x.Data, x.ChangedAt)
		if err != nil {
			continue
		}
		ps := periodString(per)
		if prev, ok := out[ps]; ok && !earlier(x, prev.sensor) {
			continue
		}
		if out == nil {
			out = map[string]pendingTrigger{}
		}
		out[ps] = pendingTrigger{sensor: x, period: per}
	}
	return out
}

// pendingOn reports whether trigger data is pending for per (for a daily
// period, data for any hour of its date counts).
func pendingOn(pend map[string]pendingTrigger, per schedule.Period) bool {
	if _, ok := pend[periodString(per)]; ok {
		return true
	}
	if per.Hourly {
		return false
	}
	for _, pt := range pend {
		if pt.period.Date == per.Date {
			return true
		}
	}
	return false
}

func earlier(a, b record.Sensor) bool {
	if !a.ChangedAt.Equal(b.ChangedAt) {
		return a.ChangedAt.Before(b.ChangedAt)
	}
	return a.Key < b.Key
}

// pausedAt reports whether t fell in one of the pipeline's pause windows.
func (wp *Pipeline) pausedAt(t time.Time) bool {
	for _, w := range wp.Pauses {
		if w.Contains(t) {
			return true
		}
	}
	return false
}

// held reports whether a paused pipeline holds the run on purpose: a
// pause holds runs before their job started (product spec §3b).
func held(wp *Pipeline, r run.Run) bool {
	return wp.Paused && run.HeldByPause(r)
}

// unheldRuns yields the snapshot's active runs of watched pipelines, each
// with its pipeline, leaving out those a pause holds (held): the runs
// staleRuns and stuckRuns judge. Each run is yielded as a copy, so a
// Finding may keep its address.
func (s *Snapshot) unheldRuns() iter.Seq2[*Pipeline, run.Run] {
	return func(yield func(*Pipeline, run.Run) bool) {
		idx := s.watched()
		for _, r := range s.ActiveRuns {
			if wp := idx[r.PipelineID]; wp != nil && !held(wp, r) && !yield(wp, r) {
				return
			}
		}
	}
}

// detail is an event detail from the watchdog.
func detail(kv ...any) sensor.Object {
	return run.Detail(append([]any{"source", "watchdog"}, kv...)...)
}

// local formats t in loc for messages.
func local(t time.Time, loc *time.Location) string {
	if loc == nil {
		loc = time.UTC
	}
	return t.In(loc).Format("2006-01-02 15:04 MST")
}

// sortFindings orders findings by key, then event, for stable output.
func sortFindings(fs []Finding) {
	slices.SortStableFunc(fs, func(a, b Finding) int {
		if c := compareKeys(a.Key, b.Key); c != 0 {
			return c
		}
		return strings.Compare(string(a.Event), string(b.Event))
	})
}

// WatchKey is the prefix of the sensor keys the checks read of p (its
// trigger key, run.MatchesTrigger), and ok false when they read none of
// its sensors (no trigger, or a dry run, which the checks skip).
func WatchKey(p *pipeline.Pipeline) (key string, ok bool) {
	if p == nil || p.DryRun || p.Schedule.Trigger == nil {
		return "", false
	}
	return p.Schedule.Trigger.Rule.Key, true
}

// Watches reports whether the checks read p's sensor key: what the engine
// stores with each sensor it writes (record.Sensor.Watched), so that the
// store's index of changes across pipelines holds only what a pass reads.
func Watches(p *pipeline.Pipeline, key string) bool {
	k, ok := WatchKey(p)
	return ok && run.KeyHasPrefix(key, k)
}

// WatchChangedAt is a pipeline row's WatchChangedAt after a config load
// (store.Pipeline.WatchChangedAt): now when the load changes which
// sensors the checks read (WatchKey differs from the stored config's, or
// the stored config no longer parses: prev nil), else what the row had.
// A pipeline loaded for the first time has no sensors yet (the engine
// refuses sensors of unknown pipelines): zero.
func WatchChangedAt(exists bool, prev *pipeline.Pipeline, prevAt time.Time, next *pipeline.Pipeline, now time.Time) time.Time {
	if !exists {
		return time.Time{}
	}
	if prev != nil {
		pk, pok := WatchKey(prev)
		nk, nok := WatchKey(next)
		if pok == nok && pk == nk {
			return prevAt
		}
	}
	return now
}

// SensorReads is what a pass reads of the sensors.
type SensorReads struct {
	// Read: a check reads sensors (ReadsSensors); else nothing is read.
	Read bool
	// Since: the watched sensors changed since then, across pipelines
	// (store.SensorListChangedParams.Watched).
	Since time.Time
	// Pipelines are read whole (their sensors changed since
	// Refresh.SensorsFrom, watched or not): those whose watched set a
	// config load changed since the snapshot kept held them, so sensors
	// written before the load, whose Watched the older config decided,
	// are not missed.
	Pipelines []string
}

// PlanSensorReads decides a pass's sensor reads: none when no check reads
// sensors; else the watched sensors changed since r.SensorsSince (the
// whole window, r.SensorsFrom, when the snapshot kept none: kept false,
// or a full refresh), and whole, by pipeline, the pipelines with a
// trigger whose WatchChangedAt is at or after the last read (r.Since;
// for a whole read the window's start), less RefreshOverlap for clocks.
func PlanSensorReads(r Refresh, kept bool, ps []Pipeline) SensorReads {
	if !ReadsSensors(ps) {
		return SensorReads{}
	}
	out := SensorReads{Read: true, Since: r.SensorsSince}
	changedSince := r.Since
	if !kept || r.Full {
		out.Since = r.SensorsFrom
		changedSince = r.SensorsFrom.Add(-RefreshOverlap)
	}
	for _, wp := range ps {
		if _, ok := WatchKey(wp.P); ok && !wp.WatchChangedAt.Before(changedSince) {
			out.Pipelines = append(out.Pipelines, wp.P.ID)
		}
	}
	return out
}

// ReadsSensors reports whether the checks read Snapshot.Sensors for these
// pipelines. They read trigger data only (pendingTriggers: sensors that
// match the trigger key of a watched pipeline with a trigger), so when no
// watched pipeline has a trigger the snapshot's sensors change no result
// and a runtime need not read them — for cron pipelines, the bulk of a
// full load.
func ReadsSensors(ps []Pipeline) bool {
	for _, wp := range ps {
		if _, ok := WatchKey(wp.P); ok {
			return true
		}
	}
	return false
}
