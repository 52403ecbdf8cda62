// Package simulate replays a scenario (internal/scenario) on a virtual
// clock through the real engine and a real store; only the clock and the
// job backend are simulated. It is the `interlock simulate` runtime: it
// sequences timeline actions, engine timers and watchdog passes in virtual
// time and decides nothing itself.
package simulate

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/backfill"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/rule"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/scenario"
	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/trigger/simjob"
)

// Watchdog is one watchdog pass at a virtual time. The simulator runs it at
// the start and every settings.watchdog.interval; by default it is the
// engine's own watchdog (EngineWatchdog).
type Watchdog interface {
	Pass(ctx context.Context, eng *engine.Engine, now time.Time) error
}

// EngineWatchdog runs the engine's watchdog pass, as serve and
// `interlock watchdog --once` do.
type EngineWatchdog struct {
	StuckRunThreshold time.Duration
}

// Pass runs one pass.
func (w EngineWatchdog) Pass(ctx context.Context, eng *engine.Engine, _ time.Time) error {
	_, err := eng.WatchdogPass(ctx, w.StuckRunThreshold)
	return err
}

// Options configure a simulation.
type Options struct {
	// OpenStore opens (or reopens, after a restart) the store at path.
	OpenStore func(ctx context.Context, path string) (store.Store, error)
	// Dir holds the temporary store; empty: a new temporary directory,
	// removed at the end.
	Dir string
	// Watchdog replaces the engine's watchdog (nil: EngineWatchdog with the
	// scenario's settings).
	Watchdog Watchdog
	Logger   *slog.Logger
}

// Result is the outcome of one scenario.
type Result struct {
	Scenario *scenario.File
	Events   []event.Event
	// Silenced maps the id of each event a silence or a maintenance
	// window covered (by its time, as the alert worker judges it) to the
	// silence's or window's id.
	Silenced map[string]string
	Checks   []Check
	Errors   []ActionError // timeline actions the engine refused
	// Facts is how the engines' inputs read their facts (summed over the
	// scenario's processes); a late read is a bug in the core's needs.
	Facts engine.FactsStats
}

// Passed reports whether every expectation held.
func (r *Result) Passed() bool {
	for _, c := range r.Checks {
		if !c.OK {
			return false
		}
	}
	return true
}

// ActionError is a timeline action the engine refused (a sensor for an
// unknown pipeline, a malformed date field, …). It is reported, and the
// simulation goes on, as serve would; an action marked refused: true is
// also checked (see Check.Refusal).
type ActionError struct {
	At   time.Time
	Line int
	Err  string
}

// Run plays a scenario to its end and checks its expectations.
func Run(ctx context.Context, sc *scenario.File, opt Options) (*Result, error) {
	defer raiseGC()()
	dir := opt.Dir
	if dir == "" {
		d, err := os.MkdirTemp("", "interlock-simulate-*")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		dir = d
	}
	if opt.Watchdog == nil {
		opt.Watchdog = EngineWatchdog{StuckRunThreshold: sc.Settings.Watchdog.StuckRunThreshold}
	}
	s := &sim{sc: sc, opt: opt, path: filepath.Join(dir, "simulate.db"), clk: clock.NewVirtual(sc.Start)}
	s.jobs = simjob.New(s.clk, Plans(sc))
	if err := s.start(ctx, true); err != nil {
		return nil, err
	}
	defer func() { _ = s.st.Close() }()
	res := &Result{Scenario: sc}
	if err := s.loop(ctx, res); err != nil {
		return nil, err
	}
	page, err := s.st.EventList(ctx, store.EventListParams{})
	if err != nil {
		return nil, err
	}
	evs := page.Events
	res.Events = evs
	s.addFacts()
	res.Facts = s.facts
	ids, _, err := s.eng.SilencedBy(ctx, evs)
	if err != nil {
		return nil, err
	}
	res.Silenced = map[string]string{}
	for i, e := range evs {
		if ids[i] != "" {
			res.Silenced[e.ID] = ids[i]
		}
	}
	res.Checks = append(VerifySilenced(sc.Expect, evs, res.Silenced), refusals(sc.Timeline, res.Errors)...)
	return res, nil
}

type sim struct {
	sc   *scenario.File
	opt  Options
	path string
	clk  *clock.Virtual
	jobs *simjob.Backend
	st   store.Store
	eng  *engine.Engine
	// proc is the context the current process's engine runs timers
	// under; a job plan's crash cancels it (stop) mid trigger call, as
	// kill -9 cuts a process short, and the loop starts a new process.
	proc context.Context
	stop context.CancelFunc
	// silences counts the timeline's silences, naming those without an id.
	silences int
	facts    engine.FactsStats // of the processes stopped so far
}

// addFacts adds the current engine's FactsStats to s.facts.
func (s *sim) addFacts() {
	f := s.eng.FactsStats()
	s.facts.Inputs += f.Inputs
	s.facts.SecondRounds += f.SecondRounds
	s.facts.ExtraRounds += f.ExtraRounds
	s.facts.LateReads += f.LateReads
	if f.LastLate != "" {
		s.facts.LastLate = f.LastLate
	}
}

// start opens the store and an engine on it. The first start loads the
// scenario's pipelines as serve loads its files; a restart only rebuilds
// from the store.
func (s *sim) start(ctx context.Context, first bool) error {
	st, err := s.opt.OpenStore(ctx, s.path)
	if err != nil {
		return fmt.Errorf("simulate: open store: %w", err)
	}
	s.st = st
	s.proc, s.stop = context.WithCancel(ctx)
	s.jobs.OnCrash(s.stop)
	set := s.sc.Settings
	s.eng = engine.New(engine.Options{
		Store:       st,
		Clock:       s.clk,
		Jobs:        s.jobs,
		Logger:      s.opt.Logger,
		Rules:       rule.Options{MaxClockSkew: set.Rules.MaxClockSkew},
		EnvAllow:    set.Server.EnvAllow,
		Maintenance: set.Maintenance,
	})
	if err := s.eng.Open(ctx); err != nil {
		return err
	}
	if err := s.eng.ArmMaintenance(ctx); err != nil {
		return err
	}
	if !first {
		return nil
	}
	// Calendars are stored as serve's reloader stores them: the engine
	// reads them from the store, as every process does.
	if _, err := s.eng.SetCalendars(ctx, s.sc.Calendars); err != nil {
		return fmt.Errorf("simulate: calendars: %w", err)
	}
	for _, d := range s.sc.Docs {
		if _, err := s.eng.ApplyConfig(ctx, d.File, d.Data); err != nil {
			return fmt.Errorf("simulate: load %s: %w", d.File, err)
		}
	}
	return nil
}

func (s *sim) loop(ctx context.Context, res *Result) error {
	tl := s.sc.Timeline
	next := 0
	interval := s.sc.Settings.Watchdog.Interval
	nextWatchdog := s.sc.Start
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		at, have := time.Time{}, false
		consider := func(t time.Time) {
			if !have || t.Before(at) {
				at, have = t, true
			}
		}
		if next < len(tl) {
			consider(tl[next].At)
		}
		if due, ok, err := s.eng.NextDue(ctx); err != nil {
			return err
		} else if ok {
			consider(due)
		}
		if s.opt.Watchdog != nil && interval > 0 {
			consider(nextWatchdog)
		}
		if !have || at.After(s.sc.End) {
			s.clk.Set(s.sc.End)
			return nil
		}
		if at.After(s.clk.Now()) {
			s.clk.Set(at)
		}
		now := s.clk.Now()
		// Same instant: timeline actions (file order), engine timers, then
		// the watchdog.
		for next < len(tl) && !tl[next].At.After(now) {
			if err := s.act(ctx, tl[next], res); err != nil {
				return err
			}
			next++
		}
		if _, err := s.eng.RunDue(s.proc); err != nil {
			if s.proc.Err() == nil || ctx.Err() != nil {
				return err
			}
			// A job plan stopped the process during a trigger call: start
			// a new one on the store, which finds the call in flight.
			if err := s.restart(ctx); err != nil {
				return err
			}
			continue
		}
		if s.opt.Watchdog != nil && interval > 0 && !nextWatchdog.After(now) {
			if err := s.opt.Watchdog.Pass(ctx, s.eng, now); err != nil {
				return err
			}
			for !nextWatchdog.After(now) {
				nextWatchdog = nextWatchdog.Add(interval)
			}
		}
	}
}

// act performs one timeline action. Refusals the engine reports to a
// caller (unknown pipeline, bad sensor) are recorded and the simulation
// goes on; anything else stops it.
func (s *sim) act(ctx context.Context, a scenario.Action, res *Result) error {
	now := s.clk.Now()
	var err error
	switch {
	case a.Sensor != nil:
		data, rerr := a.Sensor.Render(now)
		if rerr != nil {
			err = fmt.Errorf("%w: %v", engine.ErrInvalidSensor, rerr)
			break
		}
		_, err = s.eng.PutSensor(ctx, a.Sensor.Pipeline, a.Sensor.Key, data)
	case a.DeleteSensor != nil:
		err = s.eng.DeleteSensor(ctx, a.DeleteSensor.Pipeline, a.DeleteSensor.Key)
	case a.Rerun != nil:
		_, err = s.eng.RequestRerun(ctx, a.Rerun.Pipeline, a.Rerun.Date, a.Rerun.Reason)
	case a.Config != nil:
		file, data, rerr := configDoc(s.sc.Path, a)
		if rerr != nil {
			err = rerr
			break
		}
		// An invalid document is refused with CONFIG_INVALID, as in serve;
		// that is an outcome to check, not a simulation error.
		_, _ = s.eng.ApplyConfig(ctx, file, data)
	case a.Pause != nil:
		err = s.eng.Pause(ctx, a.Pause.Pipeline, a.Pause.Until, "scenario")
	case a.Resume != nil:
		err = s.eng.Resume(ctx, a.Resume.Pipeline, "scenario")
	case a.Backfill != nil:
		b := a.Backfill
		_, err = s.eng.RequestBackfill(ctx, b.Pipeline, backfill.Request{From: b.From, To: b.To, Only: backfill.Only(b.Only), MaxActive: b.MaxActive, Reverse: b.Reverse}, b.DryRun, "scenario")
	case a.CancelBackfill != nil:
		_, err = s.eng.CancelBackfill(ctx, a.CancelBackfill.Pipeline, "", "scenario")
	case a.Restart:
		return s.restart(ctx)
	case a.Silence != nil:
		s.silences++
		id := a.Silence.ID
		if id == "" {
			id = fmt.Sprintf("silence-%d", s.silences)
		}
		_, err = s.eng.CreateSilence(ctx, engine.SilenceRequest{ID: id, Matchers: a.Silence.Matchers, Until: a.Silence.Until,
			Duration: a.Silence.Duration, Comment: a.Silence.Comment, By: "scenario"})
	case a.ExpireSilence != nil:
		_, err = s.eng.ExpireSilence(ctx, a.ExpireSilence.ID, "scenario")
	}
	if err == nil {
		return nil
	}
	if errors.Is(err, engine.ErrUnknownPipeline) || errors.Is(err, engine.ErrInvalidSensor) || errors.Is(err, engine.ErrInvalidRequest) || errors.Is(err, os.ErrNotExist) ||
		errors.Is(err, engine.ErrBackfillRunning) || errors.Is(err, engine.ErrUnknownBackfill) ||
		errors.Is(err, engine.ErrUnknownSilence) {
		res.Errors = append(res.Errors, ActionError{At: now, Line: a.Line, Err: err.Error()})
		return nil
	}
	return fmt.Errorf("timeline line %d: %w", a.Line, err)
}

// restart stops the current process (it may be stopped already) and
// starts a new one on the same store.
func (s *sim) restart(ctx context.Context) error {
	s.stop()
	s.addFacts()
	if err := s.st.Close(); err != nil {
		return err
	}
	return s.start(ctx, false)
}

func configDoc(scenarioPath string, a scenario.Action) (string, []byte, error) {
	if a.Config.File != "" {
		data, err := os.ReadFile(a.Config.File)
		return a.Config.File, data, err
	}
	data, err := yaml.Marshal(a.Config.Node)
	return fmt.Sprintf("%s:%d#config", scenarioPath, a.Line), data, err
}

// Plans are the simulated job plans of a scenario's jobs, per pipeline id:
// what its jobs do when triggered (simjob), for any runtime playing it.
func Plans(sc *scenario.File) map[string][]simjob.Plan {
	out := map[string][]simjob.Plan{}
	for id, jobs := range sc.Jobs {
		for _, j := range jobs {
			out[id] = append(out[id], simjob.Plan{
				Duration:      j.Duration,
				Result:        simjob.Result(j.Result),
				Category:      run.Category(j.Category),
				TriggerErrors: j.TriggerErrors,
				Crash:         simjob.Crash(j.Crash),
			})
		}
	}
	return out
}
