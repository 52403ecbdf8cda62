// Package cli is Interlock's command line: argument parsing, help text,
// output formatting and exit codes. It calls into the application packages
// and decides nothing about pipelines itself.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"sort"
	"strings"
)

// Exit codes. They mean the same thing for every command.
const (
	ExitOK      = 0 // success
	ExitFailed  = 1 // the command ran and found a problem (invalid config, failed expectation)
	ExitUsage   = 2 // bad command line, or an input file that cannot be used at all
	ExitRuntime = 3 // the command could not run (store unreachable, server down)
)

// Env is everything a command may touch of the outside world.
type Env struct {
	Args    []string
	Stdin   io.Reader
	Stdout  io.Writer
	Stderr  io.Writer
	Version string
}

type command struct {
	name     string
	summary  string
	usage    string // after "interlock NAME "
	examples []string
	run      func(ctx context.Context, env Env, args []string) int
}

var commands = map[string]*command{}

func register(c *command) { commands[c.name] = c }

// errUsage marks errors that should print the command's usage.
var errUsage = errors.New("usage")

// Main runs the command line and returns the process exit code.
func Main(ctx context.Context, env Env) int {
	if len(env.Args) == 0 {
		printHelp(env.Stderr)
		return ExitUsage
	}
	name, args := env.Args[0], env.Args[1:]
	switch name {
	case "-h", "--help", "help":
		if len(args) > 0 {
			if c, ok := commands[args[0]]; ok {
				printCommandHelp(env.Stdout, c, nil)
				return ExitOK
			}
			fmt.Fprintf(env.Stderr, "interlock help: unknown command %q\n\n", args[0])
			printHelp(env.Stderr)
			return ExitUsage
		}
		printHelp(env.Stdout)
		return ExitOK
	case "-v", "--version":
		name = "version"
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(env.Stderr, "interlock: unknown command %q\n\n", name)
		printHelp(env.Stderr)
		return ExitUsage
	}
	return c.run(ctx, env, args)
}

func printHelp(w io.Writer) {
	fmt.Fprint(w, `Interlock is a safety controller for data pipelines: sensors are pushed,
rules decide when a pipeline may run, jobs are triggered exactly once and held
to their SLA, and a watchdog reports what did not happen.

Usage:
  interlock COMMAND [flags] [args]

Commands:
`)
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
Run 'interlock COMMAND --help' for a command's flags and examples.
Exit codes: 0 ok, 1 a problem was found, 2 bad usage or unusable input, 3 could not run.
`)
}

func printCommandHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  interlock %s %s\n", c.summary, c.name, c.usage)
	if fs != nil {
		var b strings.Builder
		fs.SetOutput(&b)
		fs.PrintDefaults()
		if b.Len() > 0 {
			fmt.Fprintf(w, "\nFlags:\n%s", b.String())
		}
	}
	if len(c.examples) > 0 {
		fmt.Fprintf(w, "\nExamples:\n")
		for _, e := range c.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

// parseFlags parses args with fs, printing help on -h and a short error on
// bad flags. It returns ok=false with the exit code to use when the command
// must stop.
func parseFlags(env Env, c *command, fs *flag.FlagSet, args []string) (code int, ok bool) {
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	if err := fs.Parse(interleave(fs, args)); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printCommandHelp(env.Stdout, c, fs)
			return ExitOK, false
		}
		fmt.Fprintf(env.Stderr, "interlock %s: %v\n\n", c.name, err)
		printCommandHelp(env.Stderr, c, fs)
		return ExitUsage, false
	}
	return 0, true
}

// interleave moves flags that follow positional arguments to the front, so
// `interlock validate pipelines/ --output json` works as people type it.
func interleave(fs *flag.FlagSet, args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		if a == "--" {
			pos = append(pos, args[i+1:]...)
			break
		}
		if !strings.HasPrefix(a, "-") || a == "-" {
			pos = append(pos, a)
			continue
		}
		flags = append(flags, a)
		name := strings.TrimLeft(a, "-")
		if strings.Contains(name, "=") {
			continue
		}
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) && i+1 < len(args) {
			flags = append(flags, args[i+1])
			i++
		}
	}
	return append(flags, append([]string{"--"}, pos...)...)
}

func isBoolFlag(f *flag.Flag) bool {
	b, ok := f.Value.(interface{ IsBoolFlag() bool })
	return ok && b.IsBoolFlag()
}

// outputFlag registers --output and validates it after parsing.
type outputFlag string

func (o *outputFlag) String() string { return string(*o) }
func (o *outputFlag) Set(s string) error {
	switch s {
	case "table", "json":
		*o = outputFlag(s)
		return nil
	}
	return fmt.Errorf("--output must be table or json, got %q", s)
}

func addOutputFlag(fs *flag.FlagSet) *outputFlag {
	o := outputFlag("table")
	fs.Var(&o, "output", "output format: table or json")
	return &o
}
