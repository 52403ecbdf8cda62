package pipeline

import (
	"fmt"
	"time"
)

// How long a job's trigger call may take. The call (the job type's Start)
// is made inside one invocation of a runtime whose time is bounded (on AWS,
// the orchestrator Lambda's timeout): a call that can outlast it is killed
// with the invocation, and its outcome is unknown until the crash rules
// settle it. CallBound says, from the pipeline alone, how long the call
// can last; CallFits judges it against an invocation's time.

// The defaults the trigger packages apply when a job sets no timeout
// (tests in those packages' users check that they agree).
const (
	// DefaultRequestTimeout bounds one HTTP request of the HTTP-family
	// jobs (httpx.DefaultTimeout).
	DefaultRequestTimeout = 30 * time.Second
	// DefaultCommandTimeout bounds a command job (command.DefaultTimeout).
	DefaultCommandTimeout = time.Hour
	// LambdaMaxTimeout is the longest a Lambda function runs: a lambda
	// job that does not say its function's timeout may wait that long.
	LambdaMaxTimeout = 15 * time.Minute
	// LambdaAnswerSlack is how long past its function's timeout a lambda
	// job waits for the answer (Lambda stops the function at its timeout
	// and answers Sandbox.Timedout).
	LambdaAnswerSlack = 10 * time.Second
)

// CallBound is the longest a job's trigger call can take.
type CallBound struct {
	// Max is the bound; zero: the call only asks a job system to start
	// the job and answers at once (the AWS SDK job types), bounded by
	// nothing the pipeline sets.
	Max time.Duration
	// Field is the job.config field that sets Max ("" when no field can).
	Field string
	// Set reports whether Field is set (false: Max is the type's default).
	Set bool
}

// JobCallBound is the bound of j's trigger call:
//
//	http, airflow   one request: job.config.timeout, default 30s
//	databricks      one request: 30s (no timeout field)
//	command         the program's run: job.config.timeout, default 1h
//	lambda          a synchronous Invoke: the function's run, job.config.timeout (the
//	                function's own timeout, default Lambda's 15m) plus 10s for the answer
//	glue, emr, emr-serverless, step-function
//	                a start request answered at once: no bound of the pipeline's
func JobCallBound(j Job) CallBound {
	timeout := func(def time.Duration) CallBound {
		if d := j.Config.Duration("timeout"); d > 0 {
			return CallBound{Max: d, Field: "timeout", Set: true}
		}
		return CallBound{Max: def, Field: "timeout"}
	}
	switch j.Type {
	case JobHTTP, JobAirflow:
		return timeout(DefaultRequestTimeout)
	case JobDatabricks:
		return CallBound{Max: DefaultRequestTimeout}
	case JobCommand:
		return timeout(DefaultCommandTimeout)
	case JobLambda:
		b := timeout(LambdaMaxTimeout)
		b.Max += LambdaAnswerSlack
		return b
	}
	return CallBound{}
}

// CallFits judges whether j's trigger call finishes inside an invocation
// of the given timeout with margin left to record its answer. When it
// does not, it returns the config path to name ("job.config.timeout", or
// "job.type" when no field sets the bound) and why.
func CallFits(j Job, invocation, margin time.Duration) (path, why string, ok bool) {
	b := JobCallBound(j)
	if b.Max == 0 || b.Max+margin <= invocation {
		return "", "", true
	}
	limit := invocation - margin
	path = "job.type"
	if b.Field != "" {
		path = "job.config." + b.Field
	}
	what := fmt.Sprintf("a %s job's trigger call may take %s", j.Type, b.Max)
	switch {
	case b.Set && j.Type == JobLambda:
		what = fmt.Sprintf("a lambda job waits for its function's timeout (%s) plus %s", b.Max-LambdaAnswerSlack, LambdaAnswerSlack)
	case b.Set:
		what = fmt.Sprintf("the %s job's trigger call may take its timeout, %s", j.Type, b.Max)
	case b.Field != "" && j.Type == JobLambda:
		what = fmt.Sprintf("a lambda job with no timeout waits up to Lambda's limit, %s, plus %s", LambdaMaxTimeout, LambdaAnswerSlack)
	case b.Field != "":
		what = fmt.Sprintf("a %s job with no timeout may take the default, %s", j.Type, b.Max)
	}
	fix := fmt.Sprintf("set %s to %s or less", path, limit)
	switch {
	case limit <= 0:
		fix = "raise the orchestrator's timeout"
	case j.Type == JobLambda:
		fix = fmt.Sprintf("set %s to the function's timeout, at most %s, or raise the orchestrator's timeout", path, limit-LambdaAnswerSlack)
	case b.Field == "":
		fix = "raise the orchestrator's timeout"
	}
	return path, fmt.Sprintf("%s, and the orchestrator's invocation ends after %s (%s kept to record the answer): the call could be cut with its outcome unknown; %s", what, invocation, margin, fix), false
}
