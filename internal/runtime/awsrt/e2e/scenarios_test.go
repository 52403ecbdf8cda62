// Package e2e runs Interlock's AWS deployment end to end on local
// emulators (see world): DynamoDB Local with its real streams, the state
// machine under aws-local-stepfunctions, the functions' handlers, and
// fakes of Step Functions' StartExecution, EventBridge Scheduler and
// EventBridge spoken to by the real SDK. `make test-aws` runs it.
package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/scenario"
	"github.com/interlockhq/interlock/internal/simulate"
	"github.com/interlockhq/interlock/internal/store"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
	"github.com/interlockhq/interlock/internal/store/sqlite"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
	"github.com/interlockhq/interlock/internal/testenv/sfnlocal"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/simjob"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

// sharedOnAWS are the product's example scenarios played on the AWS
// wiring by default (make test, CI): a sensor-triggered run within its SLA,
// a failure retried, and post-run drift with a rerun. Each costs about
// 2.5 s per virtual hour here — the watchdog's rule runs every 5 virtual
// minutes, and a pass is some hundred DynamoDB Local calls — so the rest
// run with INTERLOCK_E2E_SCENARIOS=all (make test-aws-all): 02 a cron
// period in New York time whose data never comes (20 hours), 04 retries
// exhausted, 05 a weekend exclusion over three days (about 4 minutes
// alone), 07 dry-run.
// 06-restart-mid-job is not played: its point is a process stopped during
// a trigger call and restarted, which has no counterpart here (a Lambda
// invocation that dies is retried by the state machine: the agreement
// test's lambda-retried case).
var sharedOnAWS = []string{
	"01-sensor-trigger-sla-met",
	"03-retry-then-success",
	"08-post-run-drift-rerun",
}

// moreOnAWS are the scenarios INTERLOCK_E2E_SCENARIOS=all adds.
var moreOnAWS = []string{
	"02-cron-data-never-arrives",
	"04-retries-exhausted",
	"05-weekend-exclusion",
	"07-dry-run",
}

// EnvScenarios set to "all" plays every scenario of sharedOnAWS and
// moreOnAWS.
const EnvScenarios = "INTERLOCK_E2E_SCENARIOS"

// TestSharedScenariosOnAWS plays shared scenarios through the AWS wiring
// and through simulate (the local runtime on SQLite), and requires the same
// events — type, instant, pipeline, schedule and period — from both, and
// every expectation of the scenario to hold on AWS's. The AWS side's events
// are the ones the outbox put on the bus.
func TestSharedScenariosOnAWS(t *testing.T) {
	sfnlocal.Driver(t)
	dir := filepath.Join(sfnlocal.RepoRoot(t), "testdata", "scenarios", "shared")
	t.Parallel()
	names := sharedOnAWS
	if os.Getenv(EnvScenarios) == "all" {
		names = append(append([]string{}, sharedOnAWS...), moreOnAWS...)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			agreeOnAWS(t, filepath.Join(dir, name+".yaml"))
		})
	}
}

// TestUpstreamOnAWS plays pipelines that depend on pipelines on the AWS
// wiring: the upstream's success opens its downstreams' periods through
// the downstreams and upstream timers, which are Scheduler schedules
// there, at the same instants as locally. (A downstream run that already
// waits in its execution's evaluation Wait is decided at once too, but
// its trigger call waits for the execution to wake: docs/aws.md.)
func TestUpstreamOnAWS(t *testing.T) {
	sfnlocal.Driver(t)
	t.Parallel()
	agreeOnAWS(t, filepath.Join(sfnlocal.RepoRoot(t), "testdata", "scenarios", "upstream-chain-starts-at-once.yaml"))
}

// TestSilencesOnAWS plays silences made as a control plane makes them on
// the AWS wiring: the alerts they cover are on the bus, marked silenced,
// and not posted to Slack; at a silence's end the condition that still
// holds is alerted once (its end timer is a Scheduler schedule into the
// sla-monitor), and a silence expired early ends at once; a maintenance
// window likewise — stored as the deployment's alert config once the
// functions run (storedSettings), its end timer armed by the sla-monitor
// from the record's stream record and re-armed by each end; a silence on the root
// of a chain pages nothing, then the root's failure once — the same
// events as locally, and the dispatcher's posts those of a local default
// route (world.checkAlerts).
func TestSilencesOnAWS(t *testing.T) {
	sfnlocal.Driver(t)
	t.Parallel()
	names := []string{"silence-sla-breach-alerted-at-end", "silence-maintenance-window-end-alerts-once", "silence-on-root-of-chain"}
	if os.Getenv(EnvScenarios) == "all" {
		// A day and a half across a time change: the window's next end
		// re-armed by the first (about 100 s here); and an early expiry
		// watched for a day (12 virtual hours, about 30 s).
		names = append(names, "silence-maintenance-window-dst", "silence-expired-early")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			agreeOnAWS(t, filepath.Join(sfnlocal.RepoRoot(t), "testdata", "scenarios", name+".yaml"))
		})
	}
}

// TestOperatorActionsOnAWS plays pauses, resumes and a backfill made as a
// control plane makes them on the AWS wiring (docs/aws.md, "Control
// plane"): a timed pause holds a run the deployment is evaluating (no
// trigger while paused, PIPELINE_PAUSED on the bus) and ends by itself
// through its Scheduler schedule, releasing it; a backfill of three days
// runs on the executions with maxActive 2 honoured — the same events at
// the same instants as locally, every expectation holding. With
// INTERLOCK_E2E_SCENARIOS=all, a resume action and a five-day backfill too.
func TestOperatorActionsOnAWS(t *testing.T) {
	sfnlocal.Driver(t)
	t.Parallel()
	names := []string{"pause-until-resumes-by-itself", "backfill-three-days-two-at-a-time"}
	if os.Getenv(EnvScenarios) == "all" {
		names = append(names, "pause-holds-evaluating-run", "backfill-missing-days-max-active")
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			agreeOnAWS(t, filepath.Join(sfnlocal.RepoRoot(t), "testdata", "scenarios", name+".yaml"))
		})
	}
}

// agreeOnAWS plays a scenario through the AWS wiring and through
// simulate, and requires the same events from both and every
// expectation to hold on AWS.
func agreeOnAWS(t *testing.T, path string) {
	t.Helper()
	sc, err := scenario.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	local, err := simulate.Run(t.Context(), sc, simulate.Options{Dir: t.TempDir(),
		OpenStore: func(ctx context.Context, path string) (store.Store, error) { return sqlite.Open(ctx, path) }})
	if err != nil {
		t.Fatal(err)
	}
	onAWS, silenced, w := playOnAWS(t, sc, storedSettings(t, path, sc))
	for _, c := range simulate.VerifySilenced(sc.Expect, onAWS, silenced) {
		if !c.OK {
			t.Errorf("on AWS: line %d: %s %s: %s", c.Matcher.Line, c.Kind(), c.What(), c.Why)
		}
	}
	// A backfill's progress, as `interlock backfill list` shows it through
	// the control plane: what the deployment ran.
	for _, a := range sc.Timeline {
		if b := a.Backfill; b != nil && !b.DryRun && !a.Refused {
			code, out := w.cli("backfill", "list", b.Pipeline)
			if code != 0 || !strings.Contains(out, "completed") || strings.Contains(out, " 0 succeeded") || !strings.Contains(out, "0 running, 0 pending") {
				t.Errorf("interlock backfill list %s: exit %d, want it completed with its periods run:\n%s", b.Pipeline, code, out)
			}
		}
	}
	got, want := eventLines(onAWS), eventLines(local.Events)
	if !slices.Equal(got, want) {
		t.Errorf("events on AWS:\n  %s\nlocal (simulate):\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	t.Logf("%d events, the same on AWS and locally", len(got))
}

// playOnAWS plays a scenario on a world (alerts, when set: the
// interlock.yaml stored as the deployment's alert config): its calendars and pipelines
// deployed, its jobs simulated by the orchestrator's job runner, its
// timeline's sensors written with the SDK and its reruns as rerun-request
// items, the watchdog every settings.watchdog.interval; it returns the
// events the bus received, and which of them a silence covered (by id:
// the silence's, as the API marks them).
func playOnAWS(t *testing.T, sc *scenario.File, alerts string) ([]event.Event, map[string]string, *world) {
	t.Helper()
	w := newWorld(t, worldOptions{start: sc.Start, settings: scenarioSettings{
		maxClockSkew: sc.Settings.Rules.MaxClockSkew, envAllow: sc.Settings.Server.EnvAllow, stuckRunThreshold: sc.Settings.Watchdog.StuckRunThreshold,
		maintenance: sc.Settings.Maintenance, alerts: alerts,
	}, jobsOf: func(w *world) trigger.Runner { return simjob.New(w.clk, simulate.Plans(sc)) }})
	w.deploy(sc.Calendars, sc.Docs)
	var acts []action
	for _, a := range sc.Timeline {
		switch {
		case a.Sensor != nil:
			acts = append(acts, action{at: a.At, do: func() {
				data, err := a.Sensor.Render(w.clk.Now())
				if err != nil {
					t.Fatalf("timeline line %d: %v", a.Line, err)
				}
				w.putSensor(a.Sensor.Pipeline, a.Sensor.Key, data)
			}})
		case a.Rerun != nil:
			acts = append(acts, action{at: a.At, do: func() {
				if err := w.writer.PutRerunRequest(w.ctx, ddbstore.RerunRequest{PipelineID: a.Rerun.Pipeline, Period: a.Rerun.Date, Reason: a.Rerun.Reason}); err != nil {
					t.Fatal(err)
				}
			}})
		// Operator actions go through the deployment's control plane
		// (serve --store dynamodb://…: its /v1 API on the deployment's
		// tables; a backfill by the CLI against it): what they arm is the
		// deployment's to realise — a resume's step timers become
		// executions, a timed pause's end, a silence's end and a
		// backfill's steps Scheduler schedules into the sla-monitor.
		case a.Silence != nil:
			acts = append(acts, action{at: a.At, do: func() {
				m := a.Silence.Matchers
				body := map[string]any{"id": a.Silence.ID, "pipelines": m.Pipelines, "types": m.Types, "levels": m.Levels, "owners": m.Owners,
					"until": rfc3339(a.Silence.Until), "comment": a.Silence.Comment}
				if a.Silence.Duration > 0 {
					body["duration"] = a.Silence.Duration.String()
				}
				if code, out := w.api("POST", "/v1/silences", body); refusedAs(code) != a.Refused || (!a.Refused && code != 201) {
					t.Fatal(apiFailed(a.Line, "silence", code, out))
				}
			}})
		case a.ExpireSilence != nil:
			acts = append(acts, action{at: a.At, do: func() {
				if code, out := w.api("DELETE", "/v1/silences/"+a.ExpireSilence.ID, nil); refusedAs(code) != a.Refused || (!a.Refused && code != 200) {
					t.Fatal(apiFailed(a.Line, "expire silence", code, out))
				}
			}})
		case a.Pause != nil:
			acts = append(acts, action{at: a.At, do: func() {
				body := map[string]any{}
				if !a.Pause.Until.IsZero() {
					body["until"] = rfc3339(a.Pause.Until)
				}
				if code, out := w.api("POST", "/v1/pipelines/"+a.Pause.Pipeline+"/pause", body); refusedAs(code) != a.Refused || (!a.Refused && code != 200) {
					t.Fatal(apiFailed(a.Line, "pause", code, out))
				}
			}})
		case a.Resume != nil:
			acts = append(acts, action{at: a.At, do: func() {
				if code, out := w.api("POST", "/v1/pipelines/"+a.Resume.Pipeline+"/resume", nil); refusedAs(code) != a.Refused || (!a.Refused && code != 200) {
					t.Fatal(apiFailed(a.Line, "resume", code, out))
				}
			}})
		case a.Backfill != nil:
			acts = append(acts, action{at: a.At, do: func() {
				b := a.Backfill
				args := []string{"backfill", b.Pipeline, "--from", b.From, "--to", b.To, "--max-active", fmt.Sprint(max(b.MaxActive, 1)), "--detach"}
				if b.Only != "" {
					args = append(args, "--only", string(b.Only))
				}
				if b.Reverse {
					args = append(args, "--reverse")
				}
				if b.DryRun {
					args = append(args, "--dry-run")
				}
				if code, out := w.cli(args...); (code != 0) != a.Refused {
					t.Fatalf("timeline line %d: interlock %s: exit %d, refused %v:\n%s", a.Line, strings.Join(args, " "), code, a.Refused, out)
				}
			}})
		case a.CancelBackfill != nil:
			acts = append(acts, action{at: a.At, do: func() {
				if _, err := w.engine(engine.Options{}).CancelBackfill(w.ctx, a.CancelBackfill.Pipeline, "", "scenario"); (err != nil) != a.Refused {
					t.Fatalf("timeline line %d: refused %v: %v", a.Line, a.Refused, err)
				}
			}})
		default:
			t.Fatalf("timeline line %d: restarts, config changes and sensor deletions are not played on AWS", a.Line)
		}
	}
	w.play(acts, sc.End, sc.Settings.Watchdog.Interval)
	w.check()
	evs := w.events()
	ids, _, err := w.engine(engine.Options{}).SilencedBy(w.ctx, evs)
	if err != nil {
		t.Fatal(err)
	}
	silenced := map[string]string{}
	for i, e := range evs {
		if ids[i] != "" {
			silenced[e.ID] = ids[i]
		}
	}
	return evs, silenced, w
}

// storedSettings is, for a scenario with maintenance windows, its
// settings: section as an interlock.yaml, which the world stores as the
// deployment's alert config (as deploy-config does): the functions and
// the dispatcher read the windows from the tables, and the sla-monitor
// arms their ends from the record's stream record. "" without windows.
func storedSettings(t *testing.T, path string, sc *scenario.File) string {
	t.Helper()
	if len(sc.Settings.Maintenance) == 0 {
		return ""
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Settings yaml.Node `yaml:"settings"`
	}
	if err := yaml.Unmarshal(data, &doc); err != nil {
		t.Fatal(err)
	}
	out, err := yaml.Marshal(&doc.Settings)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
