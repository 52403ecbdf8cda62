package trigger

import (
	"context"
	"errors"
)

// NoJobs is the job system of a process that makes no job calls: a control
// plane, and the AWS functions other than the orchestrator. Their decisions
// commit runs and their step timers; the deployment's orchestrator takes
// the steps that call job systems. Every call is an error.
type NoJobs struct{}

var _ Runner = NoJobs{}

var errNoJobs = errors.New("this process makes no job calls: the deployment's orchestrator does")

// Start refuses: this process makes no job calls.
func (NoJobs) Start(context.Context, Request) (Started, error) { return Started{}, errNoJobs }

// Poll refuses: this process makes no job calls.
func (NoJobs) Poll(context.Context, Request) (Result, error) { return Result{}, errNoJobs }
