package cli

import (
	"context"
	"embed"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
)

//go:embed scaffold
var scaffold embed.FS

func init() {
	register(&command{
		name:    "init",
		summary: "Create a project: interlock.yaml, an example pipeline, a calendar and a scenario",
		usage:   "[--force] [DIR]",
		examples: []string{
			"interlock init my-project && cd my-project",
			"interlock validate && interlock simulate scenarios/example.yaml",
			"interlock serve",
		},
		flags: runInit,
	})
}

func runInit(fs *flag.FlagSet) action {
	force := fs.Bool("force", false, "overwrite files that already exist")
	return func(_ context.Context, env Env) int {
		dir := "."
		if fs.NArg() > 1 {
			fmt.Fprintf(env.Stderr, "interlock init: at most one directory\n")
			return ExitUsage
		}
		if fs.NArg() == 1 {
			dir = fs.Arg(0)
		}
		files, err := scaffoldFiles()
		if err != nil {
			fmt.Fprintf(env.Stderr, "interlock init: %v\n", err)
			return ExitRuntime
		}
		if !*force {
			var exist []string
			for _, f := range files {
				if _, err := os.Stat(filepath.Join(dir, f)); err == nil {
					exist = append(exist, filepath.Join(dir, f))
				}
			}
			if len(exist) > 0 {
				fmt.Fprintf(env.Stderr, "interlock init: these files exist and would be overwritten (use --force):\n")
				for _, f := range exist {
					fmt.Fprintf(env.Stderr, "  %s\n", f)
				}
				return ExitFailed
			}
		}
		for _, f := range files {
			data, err := scaffold.ReadFile("scaffold/" + f)
			if err == nil {
				target := filepath.Join(dir, f)
				if err = os.MkdirAll(filepath.Dir(target), 0o755); err == nil {
					err = os.WriteFile(target, data, 0o644)
				}
			}
			if err != nil {
				fmt.Fprintf(env.Stderr, "interlock init: %v\n", err)
				return ExitRuntime
			}
			fmt.Fprintf(env.Stdout, "created %s\n", filepath.Join(dir, f))
		}
		fmt.Fprintf(env.Stdout, `
	Next:
	  cd %s
	  interlock validate                          # check the project
	  interlock simulate scenarios/example.yaml   # try the pipeline on a virtual clock
	  interlock serve                             # run it; then push sensors:
	  interlock sensor put example row-count '{"count": 15432}'
	  interlock sensor put example upstream-ready '{"status": "ready"}'
	  interlock status example
	`, dir)
		return ExitOK
	}
}

func scaffoldFiles() ([]string, error) {
	var out []string
	err := fs.WalkDir(scaffold, "scaffold", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel("scaffold", p)
		if err != nil {
			return err
		}
		out = append(out, rel)
		return nil
	})
	if len(out) == 0 && err == nil {
		err = errors.New("no scaffold files embedded")
	}
	sort.Strings(out)
	return out, err
}
