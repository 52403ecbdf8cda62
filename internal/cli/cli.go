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
	"maps"
	"regexp"
	"slices"
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
	// args lists the words the first argument may be (sensor: put), for
	// shell completion; nil: anything (a file, a pipeline id).
	args func() []string
	// flags defines the command's flags on fs, named for the command, and
	// returns what runs once they are parsed (the arguments left are
	// fs.Args()). Help and completion read a command's flags from the
	// very definitions it parses, so they cannot drift from it.
	flags func(fs *flag.FlagSet) action
}

// action is a command run on its parsed flags.
type action func(ctx context.Context, env Env) int

// exec parses args with the command's flags, then runs it.
func (c *command) exec(ctx context.Context, env Env, args []string) int {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	act := c.flags(fs)
	if code, ok := parseFlags(env, c, fs, args); !ok {
		return code
	}
	return act(ctx, env)
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
	case "-h", "--help":
		name = "help"
	case "-v", "--version":
		name = "version"
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(env.Stderr, "interlock: unknown command %q\n\n", name)
		printHelp(env.Stderr)
		return ExitUsage
	}
	return c.exec(ctx, env, args)
}

func init() {
	register(&command{
		name:    "help",
		summary: "Show the commands, or one command's flags and examples",
		usage:   "[COMMAND]",
		examples: []string{
			"interlock help",
			"interlock help status      # the same as interlock status --help",
		},
		args:  commandNames,
		flags: runHelp,
	})
}

// runHelp prints the overview, or exactly what `COMMAND --help` prints:
// it runs the command with --help, so the two cannot differ.
func runHelp(fs *flag.FlagSet) action {
	return func(ctx context.Context, env Env) int {
		switch fs.NArg() {
		case 0:
			printHelp(env.Stdout)
			return ExitOK
		case 1:
		default:
			return usageError(env, fs, "at most one COMMAND")
		}
		target, ok := commands[fs.Arg(0)]
		if !ok {
			fmt.Fprintf(env.Stderr, "interlock help: unknown command %q\n\n", fs.Arg(0))
			printHelp(env.Stderr)
			return ExitUsage
		}
		return target.exec(ctx, env, []string{"--help"})
	}
}

// commandNames lists the registered commands in order.
func commandNames() []string { return slices.Sorted(maps.Keys(commands)) }

func printHelp(w io.Writer) {
	fmt.Fprint(w, `Interlock is a safety controller for data pipelines: sensors are pushed,
rules decide when a pipeline may run, jobs are triggered exactly once and held
to their SLA, and a watchdog reports what did not happen.

Usage:
  interlock COMMAND [flags] [args]

Commands:
`)
	for _, n := range commandNames() {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
Run 'interlock help COMMAND' (the same as 'interlock COMMAND --help') for a
command's flags and examples; 'interlock completion bash|zsh|fish' prints a
completion script for your shell.
Exit codes: 0 ok, 1 a problem was found, 2 bad usage or unusable input, 3 could not run.
`)
}

func printCommandHelp(w io.Writer, c *command, fs *flag.FlagSet) {
	fmt.Fprintf(w, "%s\n\nUsage:\n  interlock %s %s\n", c.summary, c.name, c.usage)
	if fs != nil {
		if d := flagDefaults(fs); d != "" {
			fmt.Fprintf(w, "\nFlags:\n%s", d)
		}
	}
	if len(c.examples) > 0 {
		fmt.Fprintf(w, "\nExamples:\n")
		for _, e := range c.examples {
			fmt.Fprintf(w, "  %s\n", e)
		}
	}
}

// flagDefaults is fs.PrintDefaults with the flags spelled as the README
// and the usage lines spell them, --name (the flag package accepts -name
// and --name alike). PrintDefaults starts each flag's line with "  -" and
// indents the usage under it with "    \t", so only flag lines match.
func flagDefaults(fs *flag.FlagSet) string {
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(io.Discard)
	lines := strings.SplitAfter(b.String(), "\n")
	for i, l := range lines {
		if rest, ok := strings.CutPrefix(l, "  -"); ok {
			lines[i] = "  --" + rest
		}
	}
	return strings.Join(lines, "")
}

// flagsOf returns the flags c parses.
func flagsOf(c *command) *flag.FlagSet {
	fs := flag.NewFlagSet(c.name, flag.ContinueOnError)
	c.flags(fs)
	return fs
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
		fmt.Fprintf(env.Stderr, "interlock %s: %s\n\n", c.name, twoDashes(err.Error()))
		printCommandHelp(env.Stderr, c, fs)
		return ExitUsage, false
	}
	return 0, true
}

// usageError says what is wrong with the command line of the command fs
// is named for, then shows its help: the usage exit code.
func usageError(env Env, fs *flag.FlagSet, format string, a ...any) int {
	fmt.Fprintf(env.Stderr, "interlock %s: %s\n\n", fs.Name(), fmt.Sprintf(format, a...))
	printCommandHelp(env.Stderr, commands[fs.Name()], fs)
	return ExitUsage
}

// flagInMessage finds a flag name as the flag package writes it in its
// errors ("flag needs an argument: -period", "… for flag -until: …").
var flagInMessage = regexp.MustCompile(`(^|[\s:])-([A-Za-z][\w-]*)`)

// twoDashes writes the flags in a flag-package error as the help and the
// README do, with two dashes.
func twoDashes(msg string) string { return flagInMessage.ReplaceAllString(msg, "$1--$2") }

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
		if f := fs.Lookup(name); f != nil && !isBoolFlag(f) {
			if i+1 == len(args) {
				// The value is missing: let the flag package say so,
				// rather than have the flag take the "--" added below.
				return flags
			}
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

// choices are the values --output takes, for shell completion.
func (o *outputFlag) choices() []string { return []string{"table", "json"} }

func addOutputFlag(fs *flag.FlagSet) *outputFlag {
	o := outputFlag("table")
	fs.Var(&o, "output", "`format` of the results: table or json")
	return &o
}
