package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	iofs "io/fs"
	"log/slog"
	"os"
	"sort"
	"time"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/project"
	"github.com/interlockhq/interlock/internal/runtime/awsrt"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/store"
)

func init() {
	register(&command{
		name:    "deploy-config",
		summary: "Validate pipeline and calendar files, then load them into an AWS deployment's control table",
		usage:   "PATH… --server dynamodb://PREFIX[?region=R] [--config FILE] [--prune] [--orchestrator-timeout DURATION]",
		examples: []string{
			"interlock deploy-config pipelines/ calendars/ --server 'dynamodb://prod-interlock?region=eu-west-1'",
			"interlock deploy-config pipelines/ --server dynamodb://prod-interlock --prune   # and stop pipelines no file defines",
		},
		flags: runDeployConfig,
	})
}

// runDeployConfig validates every file under the paths exactly as
// `interlock validate` does and, only if all are valid, applies them to
// the DynamoDB store of an AWS deployment through the engine — calendars
// (SetCalendars) first, then each pipeline (ApplyConfig) — printing what
// changed. Fail closed: one invalid file and nothing is written.
func runDeployConfig(fs *flag.FlagSet) action {
	const name = "deploy-config"
	config := fs.String("config", "interlock.yaml", "project settings; its calendars resolve calendar names and its envAllow applies, as for validate")
	server := fs.String("server", "", "the deployment's store: dynamodb://<table prefix>[?region=R][&endpoint=URL] (required)")
	prune := fs.Bool("prune", false, "stop the stored pipelines no given file defines (their history stays)")
	orchestratorTimeout := fs.Duration("orchestrator-timeout", awsrt.DefaultOrchestratorTimeout, "the orchestrator Lambda's timeout (the module's orchestrator_timeout_seconds): a pipeline whose job call cannot finish inside it, with "+awsrt.RecordMargin.String()+" left to record the answer, is refused")
	return func(ctx context.Context, env Env) int {
		if *server == "" || !awsTarget(*server) {
			return fail(env, name, badFlag("--server must name an AWS deployment: dynamodb://<table prefix>[?region=R]"))
		}
		if fs.NArg() == 0 {
			return fail(env, name, badFlag("name the pipeline and calendar files or directories to load"))
		}
		if *orchestratorTimeout <= awsrt.RecordMargin || *orchestratorTimeout > 15*time.Minute {
			return fail(env, name, badFlag("--orchestrator-timeout %s: the orchestrator Lambda's timeout, more than %s and at most 15m", *orchestratorTimeout, awsrt.RecordMargin))
		}
		if err := app.CheckDynamoDBURL(*server); err != nil {
			return fail(env, name, badFlag("--server %q: %v", *server, err))
		}
		rep, err := project.Validate(fs.Args(), project.Options{SettingsFile: *config, Invocation: *orchestratorTimeout, InvocationMargin: awsrt.RecordMargin})
		if err != nil {
			fmt.Fprintf(env.Stderr, "interlock %s: %v\n", name, err)
			return ExitUsage
		}
		printValidation(env, rep)
		if !rep.Valid() {
			fmt.Fprintf(env.Stderr, "interlock %s: invalid files: nothing was written\n", name)
			return ExitFailed
		}
		var pipelines []string
		cals := map[string]schedule.Calendar{}
		for _, f := range rep.Files {
			switch f.Kind {
			case project.KindPipeline:
				pipelines = append(pipelines, f.File)
			case project.KindCalendar:
				data, err := os.ReadFile(f.File)
				if err != nil {
					return fail(env, name, err)
				}
				cal, err := pipeline.ParseCalendar(f.File, data)
				if err != nil { // validated a moment ago: the file changed since
					return fail(env, name, err)
				}
				cals[cal.Name] = *cal
			default:
				fmt.Fprintf(env.Stdout, "skipped  %s (%s: not loaded into a deployment)\n", f.File, f.Kind)
			}
		}
		// interlock.yaml, when there is one, checked as serve checks it: its
		// envAllow applies, and its alerts: and maintenance: become the
		// deployment's stored alert config. Invalid: nothing is written.
		settings := pipeline.DefaultSettings()
		var alerts *alertConfig
		if data, err := os.ReadFile(*config); err == nil {
			y, s, err := app.AlertConfigOf(*config, data)
			if err != nil {
				fmt.Fprintf(env.Stderr, "%v\ninterlock %s: invalid %s: nothing was written\n", err, name, *config)
				return ExitFailed
			}
			settings, alerts = s, &alertConfig{file: *config, yaml: y, settings: s}
		} else if !errors.Is(err, iofs.ErrNotExist) {
			return fail(env, name, err)
		}

		st, err := app.OpenDynamoDB(ctx, *server, 0)
		if err != nil {
			return fail(env, name, err)
		}
		defer st.Close()
		// A passive engine: it runs no timers and takes no call in flight for
		// interrupted (the deployment's functions make them).
		eng := engine.New(engine.Options{Store: st, Clock: clock.Real{}, Passive: true,
			EnvAllow: settings.Server.EnvAllow, Logger: slog.New(slog.DiscardHandler)})
		if err := eng.Open(ctx); err != nil {
			return fail(env, name, err)
		}
		changed, err := applyDeployConfig(ctx, env, eng, st, cals, pipelines, *prune)
		if err != nil {
			return fail(env, name, err)
		}
		if alerts == nil {
			fmt.Fprintf(env.Stdout, "alert config: no %s: the stored one is left as it is\n", *config)
		} else {
			n, err := storeAlertConfig(ctx, env, st, *alerts, eng.Now())
			if err != nil {
				return fail(env, name, err)
			}
			changed += n
		}
		fmt.Fprintf(env.Stdout, "\n%s: %d change(s)\n", *server, changed)
		return ExitOK
	}
}

// applyDeployConfig stores the calendars (when any file defines one: the
// files given are then the whole set, and a stored calendar none defines
// is marked removed) and the pipelines, printing each change, and with
// prune stops the stored pipelines no file defines.
func applyDeployConfig(ctx context.Context, env Env, eng *engine.Engine, st store.Store, cals map[string]schedule.Calendar, files []string, prune bool) (int, error) {
	changed := 0
	if len(cals) > 0 {
		before := map[string]int64{}
		stored, err := st.CalendarList(ctx)
		if err != nil {
			return changed, err
		}
		for _, c := range stored {
			before[c.Name] = c.Version
		}
		refused, err := eng.SetCalendars(ctx, cals)
		if err != nil {
			return changed, fmt.Errorf("store the calendars: %w", err)
		}
		after, err := st.CalendarList(ctx)
		if err != nil {
			return changed, err
		}
		sort.Slice(after, func(i, j int) bool { return after[i].Name < after[j].Name })
		for _, c := range after {
			v, had := before[c.Name]
			switch {
			case !had:
				fmt.Fprintf(env.Stdout, "calendar %s: created\n", c.Name)
			case v != c.Version && !c.RemovedAt.IsZero():
				fmt.Fprintf(env.Stdout, "calendar %s: removed (no file defines it)\n", c.Name)
			case v != c.Version:
				fmt.Fprintf(env.Stdout, "calendar %s: updated\n", c.Name)
			default:
				continue
			}
			changed++
		}
		if refused > 0 {
			fmt.Fprintf(env.Stdout, "%d stored pipeline(s) name a removed calendar: refused (CONFIG_INVALID), their last version keeps its dates\n", refused)
		}
	}
	defined := map[string]bool{}
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			return changed, err
		}
		id := engine.PipelineIDOf(f, data)
		before, err := st.PipelineGet(ctx, id)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return changed, err
		}
		p, err := eng.ApplyConfig(ctx, f, data)
		if err != nil {
			return changed, fmt.Errorf("%s: %w", f, err)
		}
		defined[p.ID] = true
		after, err := st.PipelineGet(ctx, p.ID)
		if err != nil {
			return changed, err
		}
		switch {
		case before.ID == "":
			fmt.Fprintf(env.Stdout, "pipeline %s: created from %s\n", p.ID, f)
		case !before.RemovedAt.IsZero():
			fmt.Fprintf(env.Stdout, "pipeline %s: restored from %s\n", p.ID, f)
		case before.ConfigVersion != after.ConfigVersion:
			fmt.Fprintf(env.Stdout, "pipeline %s: updated from %s\n", p.ID, f)
		default:
			fmt.Fprintf(env.Stdout, "pipeline %s: unchanged\n", p.ID)
			continue
		}
		changed++
	}
	if !prune {
		return changed, nil
	}
	running, err := eng.Pipelines(ctx)
	if err != nil {
		return changed, err
	}
	for _, id := range running {
		if defined[id] {
			continue
		}
		forgot, err := eng.Forget(ctx, id)
		if err != nil {
			return changed, fmt.Errorf("stop pipeline %s: %w", id, err)
		}
		if forgot {
			fmt.Fprintf(env.Stdout, "pipeline %s: stopped (no file defines it; its history stays)\n", id)
			changed++
		}
	}
	return changed, nil
}

// alertConfig is interlock.yaml's alerts: and maintenance: (app.AlertConfigOf).
type alertConfig struct {
	file     string
	yaml     string
	settings *pipeline.Settings
}

// storeAlertConfig stores a as the deployment's alert config when it
// differs from the stored one (app.StoreAlertConfig), printing what it
// did; it returns the number of changes (0 or 1). The sla-monitor arms
// the windows' end timers from the record's stream record; the
// dispatcher routes by it from its next invocation.
func storeAlertConfig(ctx context.Context, env Env, st app.AlertConfigStore, a alertConfig, now time.Time) (int, error) {
	v, changed, err := app.StoreAlertConfig(ctx, st, a.file, a.yaml, now)
	if err != nil {
		return 0, err
	}
	if !changed {
		fmt.Fprintf(env.Stdout, "alert config: unchanged (v%d)\n", v)
		return 0, nil
	}
	fmt.Fprintf(env.Stdout, "alert config: stored v%d from %s (%d route(s), %d maintenance window(s))\n",
		v, a.file, len(a.settings.Alerts), len(a.settings.Maintenance))
	return 1, nil
}
