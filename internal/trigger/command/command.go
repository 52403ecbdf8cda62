// Package command runs a local program as a pipeline's job. The program is
// executed directly — never through a shell — with a timeout; it is
// synchronous: the trigger call returns when the program has exited.
package command

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/secret"
	"github.com/interlockhq/interlock/internal/trigger"
)

// DefaultTimeout bounds a command that sets no timeout.
const DefaultTimeout = time.Hour

// maxMessage is how much of the program's output a failure message
// quotes (its last line; the tail is in Result.Output).
const maxMessage = 512

// Runner runs commands.
type Runner struct {
	// LookupEnv reads ${env:NAME} values; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
}

var _ trigger.Runner = Runner{}

// Start runs the program to completion, in a process group of its own:
// at its timeout, or when ctx is cancelled, the whole group is killed
// (SIGKILL), so nothing it started goes on; on Linux the program is also
// killed when the process running it dies. A program that cannot be started
// (not found, not executable) is an infrastructure error; one that exits
// non-zero is a failed job (PERMANENT: running it again with the same
// input is expected to fail the same way) and one killed by the timeout is
// a TIMEOUT failure. The end of its stdout and stderr is the Result's
// Output, whatever the outcome (see output.go for the bounds).
func (r Runner) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	// Every ${env:…} and ${file:…} value of the command's config is a
	// secret, with its cleaned and wire forms: it is redacted from the
	// output and the failure message. Templates are expanded with the
	// values the scan read, so what is redacted is what the program got.
	secrets, lookup := secret.FromJob(pipeline.JobCommand, req.Config, req.Vars, r.lookup())
	r.LookupEnv = lookup
	argv, timeout, err := r.parse(req)
	if err != nil {
		return trigger.Started{}, err
	}
	extra, err := r.environ(req)
	if err != nil {
		return trigger.Started{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = req.Config.Str("dir")
	cmd.Env = append(os.Environ(), extra...)
	stdout, stderr := newRing(captureBytes), newRing(captureBytes)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	// The program leads a process group of its own, which a timeout or
	// a cancellation kills whole, and on Linux it dies with serve
	// (proc_*.go).
	cmd.SysProcAttr = sysProcAttr()
	cmd.Cancel = func() error { return killGroup(cmd.Process) }
	cmd.WaitDelay = 5 * time.Second
	err = cmd.Run()
	outTail, errTail := tail(stdout, secrets), tail(stderr, secrets)
	res := trigger.Result{Output: output(outTail, errTail)}
	var exitErr *exec.ExitError
	switch {
	case err == nil:
		res.Status = trigger.StatusSucceeded
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		res.Status, res.Category, res.Message = trigger.StatusFailed, run.Timeout, fmt.Sprintf("%s timed out after %s", argv[0], timeout)
	case ctx.Err() != nil:
		// Stopped from outside (serve shutting down past its drain): the
		// group was killed by us, which says nothing of the job. Not a
		// result: the call stays in flight for the crash rules.
		return trigger.Started{}, fmt.Errorf("command: %s stopped before it finished: %w", argv[0], ctx.Err())
	case errors.As(err, &exitErr):
		res.Status, res.Category, res.Message = trigger.StatusFailed, run.Permanent, fmt.Sprintf("%s exited with status %d", argv[0], exitErr.ExitCode())
		if l := quote(lastLine(errTail, outTail), secrets); l != "" {
			res.Message += ": " + l
		}
	default:
		return trigger.Started{}, fmt.Errorf("command: cannot run %s: %w", argv[0], err)
	}
	return trigger.Started{JobRunID: "sync", Result: &res}, nil
}

// Poll is never needed: commands finish within Start.
func (Runner) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{}, errors.New("command: jobs are synchronous and are not polled")
}

func (r Runner) lookup() func(string) (string, bool) {
	if r.LookupEnv == nil {
		return os.LookupEnv
	}
	return r.LookupEnv
}

func (r Runner) parse(req trigger.Request) ([]string, time.Duration, error) {
	env := r.lookup()
	args := req.Config.Args("command")
	if len(args) == 0 {
		return nil, 0, fmt.Errorf("command: job.config.command is empty")
	}
	for i, a := range args {
		x, err := pipeline.ExpandTemplate(a, req.Vars, env)
		if err != nil {
			return nil, 0, fmt.Errorf("command: argument %d: %w", i, err)
		}
		args[i] = x
	}
	timeout := DefaultTimeout
	if d := req.Config.Duration("timeout"); d > 0 {
		timeout = d
	}
	return args, timeout, nil
}

// environ expands job.config.env, sorted by name for a stable order.
func (r Runner) environ(req trigger.Request) ([]string, error) {
	env := r.lookup()
	m := req.Config.Map("env")
	names := make([]string, 0, len(m))
	for k := range m {
		names = append(names, k)
	}
	sort.Strings(names)
	out := make([]string, 0, len(names))
	for _, k := range names {
		v, err := pipeline.ExpandTemplate(m[k], req.Vars, env)
		if err != nil {
			return nil, fmt.Errorf("command: env %s: %w", k, err)
		}
		out = append(out, k+"="+v)
	}
	return out, nil
}

// quote makes a line of the output (already cleaned and redacted) fit a
// failure message: one line, at most maxMessage bytes, so a program's
// output cannot forge log lines or flood an alert (secret.Set.Line:
// redaction comes after collapsing spaces, which could form a secret, and
// before and after the cut, which could leave half of one).
func quote(line string, secrets *secret.Set) string {
	return secrets.Line(line, maxMessage)
}
