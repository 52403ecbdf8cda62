package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"

	"github.com/interlockhq/interlock/internal/project"
)

func init() {
	register(&command{
		name:    "validate",
		summary: "Check pipelines, calendars, interlock.yaml and scenario files; list every error",
		usage:   "[--config FILE] [--output table|json] [PATH…]",
		examples: []string{
			"interlock validate                      # the project of ./interlock.yaml: it, its calendars and pipelines, and scenarios/",
			"interlock validate pipelines/ calendars/",
			"interlock validate pipelines/gold.yaml --output json",
		},
		flags: runValidate,
	})
}

func runValidate(fs *flag.FlagSet) action {
	config := fs.String("config", "interlock.yaml", "project settings; its calendars resolve calendar names and its envAllow applies")
	output := addOutputFlag(fs)
	return func(_ context.Context, env Env) int {
		rep, err := project.Validate(fs.Args(), project.Options{SettingsFile: *config})
		if err != nil {
			fmt.Fprintf(env.Stderr, "interlock validate: %v\n", err)
			// Nothing to validate, or a path that does not exist: a usage
			// problem, not an invalid file.
			return ExitUsage
		}
		if *output == "json" {
			// Warnings are in each file's "warnings", with a severity.
			enc := json.NewEncoder(env.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(struct {
				Valid bool `json:"valid"`
				project.Report
			}{rep.Valid(), rep})
		} else {
			printValidation(env, rep)
		}
		if !rep.Valid() {
			return ExitFailed
		}
		return ExitOK
	}
}

func printValidation(env Env, rep project.Report) {
	if p := rep.Project; p != nil {
		// Say where the project's files were looked for, so a file in
		// another place is not believed checked.
		fmt.Fprintf(env.Stdout, "project  %s:", p.Settings)
		for i, d := range p.Dirs {
			sep := ","
			if i == 0 {
				sep = ""
			}
			fmt.Fprintf(env.Stdout, "%s %s in %s (%d file(s))", sep, d.What, d.Path, d.Files)
		}
		fmt.Fprintln(env.Stdout)
	}
	errCount := 0
	for _, f := range rep.Files {
		if f.Valid() {
			name := ""
			if f.Name != "" {
				name = " " + f.Name
			}
			fmt.Fprintf(env.Stdout, "ok       %s (%s%s)\n", f.File, f.Kind, name)
		}
		for _, e := range f.Errors {
			errCount++
			fmt.Fprintf(env.Stdout, "%s\n", e.Error())
		}
		for _, w := range f.Warnings {
			fmt.Fprintf(env.Stdout, "%s\n", w)
		}
	}
	warnings := ""
	if n := rep.Warnings(); n > 0 {
		warnings = fmt.Sprintf(", %d warning(s)", n)
	}
	fmt.Fprintf(env.Stdout, "\n%d file(s): %d valid, %d invalid, %d error(s)%s\n", len(rep.Files), len(rep.Files)-rep.Invalid(), rep.Invalid(), errCount, warnings)
}
