// Package trigger is the job port: how Interlock starts a pipeline's job
// and asks how it is doing. Each job type (command, http, airflow, glue, …)
// implements Runner in its own subpackage; the engine only sees this
// contract. The port is also where dry-run is enforced for jobs: Guard
// refuses to start anything for a dry-run pipeline, whatever the caller.
package trigger

import (
	"context"
	"errors"
	"fmt"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
)

// Status is what a job reports.
type Status string

// Job statuses.
const (
	StatusRunning   Status = "running"
	StatusSucceeded Status = run.JobStatusSucceeded // the core's words: run.AfterJobReport
	StatusFailed    Status = run.JobStatusFailed
)

// Result is a job's reported status. Category and Message are set when it
// failed; the category is decided explicitly by the job type, never guessed
// from free text.
type Result struct {
	Status   Status
	Category run.Category
	Message  string
	// Output is the end of what the job printed (a command's stdout and
	// stderr; other job types may fill it from their logs), shown in the
	// JOB_COMPLETED and JOB_FAILED detail as "output" and by explain. The
	// runner makes it safe: control characters removed (line breaks
	// kept), every secret of the job's config redacted after that, at most
	// MaxOutput bytes. Empty: the job printed nothing, or its type does
	// not report output.
	Output string
}

// MaxOutput bounds Result.Output; the engine cuts anything longer.
const MaxOutput = 8 << 10

// Done reports whether the job has finished.
func (r Result) Done() bool { return r.Status == StatusSucceeded || r.Status == StatusFailed }

// Request identifies the job to start or poll.
type Request struct {
	PipelineID string
	ScheduleID string
	Period     string
	RunID      string // Interlock's id for this trigger: pipeline/schedule/period/generation/attempt
	Attempt    int
	DryRun     bool
	Type       string             // job.type
	Config     pipeline.JobConfig // job.config, checked against the type's schema at load
	Vars       pipeline.TemplateVars
	JobRunID   string // the job system's run id (polls only)
	Meta       map[string]string
}

// Started is the answer to a successful trigger call. Result is set when
// the job ran synchronously and has already finished.
type Started struct {
	JobRunID string
	Meta     map[string]string
	Result   *Result
}

// Runner starts and polls jobs of one type.
//
// Start returns an error only when the trigger call itself failed (network,
// throttling, 5xx): the engine retries it with backoff. A job that started
// and failed is a Started with a failed Result. Poll returns an error when
// the status could not be read; the engine keeps polling until the poll
// window closes.
type Runner interface {
	Start(ctx context.Context, req Request) (Started, error)
	Poll(ctx context.Context, req Request) (Result, error)
}

// Finder is implemented by the job types whose jobs can be looked up by
// the identity Interlock gives a trigger call, which each type derives
// from Request.RunID (one id per run, generation and attempt): Airflow's
// dag_run_id, Databricks' idempotency token, Step Functions' execution
// name, EMR Serverless' client token. When a process stopped during a
// trigger call (its result was never recorded), the engine asks instead
// of waiting out the call's lease: a job that started is adopted, and a
// call that started nothing is made again under the same identity.
//
// Find returns the job a trigger call for req started (found true), or
// found false when no job holds req's identity. An error means the job
// system could not be asked (network, throttling, 5xx, a refusal that says
// nothing about the job): the engine asks again with backoff, and gives
// up (outcome unknown) when the lookup window closes. A type whose only
// way to ask is to repeat its idempotent start (Databricks, EMR
// Serverless) answers with that start's job — which may have been started
// by the repeated call itself, exactly once under the identity — and so
// never answers "not found"; a refusal of that start is an error. A found
// job is polled as usual: Find's Started carries no Result.
type Finder interface {
	Find(ctx context.Context, req Request) (st Started, found bool, err error)
}

// ErrNotFindable is returned by Find of a Registry or a Guard for a job
// type that cannot be looked up.
var ErrNotFindable = errors.New("trigger: jobs of this type cannot be looked up by the identity Interlock gave them")

// Findable reports whether r can look up jobs of type typ: r dispatches
// by type (a Registry, a Guard: its Finds method answers), or r is itself
// a Finder.
func Findable(r Runner, typ string) bool {
	if m, ok := r.(interface{ Finds(typ string) bool }); ok {
		return m.Finds(typ)
	}
	_, ok := r.(Finder)
	return ok
}

// ErrDryRun is returned by Guard for a dry-run pipeline.
var ErrDryRun = errors.New("trigger: dry-run pipelines never start jobs")

// ErrUnknownType is returned by a Registry for a job type it does not have.
var ErrUnknownType = errors.New("trigger: unknown job type")

// Registry maps job types to runners.
type Registry map[string]Runner

// Start starts req's job with the runner of its type.
func (r Registry) Start(ctx context.Context, req Request) (Started, error) {
	rn, ok := r[req.Type]
	if !ok {
		return Started{}, fmt.Errorf("%w %q", ErrUnknownType, req.Type)
	}
	return rn.Start(ctx, req)
}

// Poll polls req's job with the runner of its type.
func (r Registry) Poll(ctx context.Context, req Request) (Result, error) {
	rn, ok := r[req.Type]
	if !ok {
		return Result{}, fmt.Errorf("%w %q", ErrUnknownType, req.Type)
	}
	return rn.Poll(ctx, req)
}

// Finds reports whether the runner of typ can look up its jobs.
func (r Registry) Finds(typ string) bool {
	rn, ok := r[typ]
	return ok && Findable(rn, typ)
}

// Find looks up req's job with the runner of its type (ErrNotFindable
// when that type cannot be asked).
func (r Registry) Find(ctx context.Context, req Request) (Started, bool, error) {
	rn, ok := r[req.Type]
	if !ok {
		return Started{}, false, fmt.Errorf("%w %q", ErrUnknownType, req.Type)
	}
	return find(ctx, rn, req)
}

func find(ctx context.Context, r Runner, req Request) (Started, bool, error) {
	f, ok := r.(Finder)
	if !ok || !Findable(r, req.Type) {
		return Started{}, false, fmt.Errorf("%w (%s)", ErrNotFindable, req.Type)
	}
	return f.Find(ctx, req)
}

// Guard wraps a Runner so that no job of a dry-run pipeline is ever
// started, whichever code path asks. It is the actuator half of dry-run
// enforcement (the notifier half is in the engine's emitter).
type Guard struct{ Next Runner }

// Start refuses dry-run requests and passes the rest on.
func (g Guard) Start(ctx context.Context, req Request) (Started, error) {
	if req.DryRun {
		return Started{}, ErrDryRun
	}
	return g.Next.Start(ctx, req)
}

// Poll passes through: polling starts nothing.
func (g Guard) Poll(ctx context.Context, req Request) (Result, error) {
	return g.Next.Poll(ctx, req)
}

// Finds reports whether the wrapped runner can look up jobs of typ.
func (g Guard) Finds(typ string) bool { return Findable(g.Next, typ) }

// Find refuses dry-run requests, like Start: a lookup of some types
// repeats the idempotent start (see Finder).
func (g Guard) Find(ctx context.Context, req Request) (Started, bool, error) {
	if req.DryRun {
		return Started{}, false, ErrDryRun
	}
	return find(ctx, g.Next, req)
}
