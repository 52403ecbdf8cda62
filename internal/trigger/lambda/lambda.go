// Package lambda invokes an AWS Lambda function synchronously as a
// pipeline's job: the trigger call returns when the function has
// finished, so the job is never polled.
package lambda

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsmiddleware "github.com/aws/aws-sdk-go-v2/aws/middleware"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/awsjob"
)

// MetaFunctionName is the Meta key of the invoked function, besides
// awsjob.MetaRegion.
const MetaFunctionName = "lambda_function_name"

// DefaultInvokeTimeout bounds a synchronous invocation. Lambda stops a
// function after at most 15 minutes and then answers with its timeout
// error, so a call with no answer a minute later is an infrastructure
// failure, not a slow function.
const DefaultInvokeTimeout = 16 * time.Minute

// maxPayload is how much of a failed function's answer a message keeps.
const maxPayload = 200

// ErrorTypeTimeout is the errorType the Lambda runtime reports when the
// function ran past its configured timeout.
const ErrorTypeTimeout = "Sandbox.Timedout"

// Runner invokes Lambda functions.
type Runner struct {
	AWS *awsjob.Session
	// InvokeTimeout bounds one invocation; 0 means DefaultInvokeTimeout.
	InvokeTimeout time.Duration
}

var _ trigger.Runner = Runner{}

const jobType = "lambda"

// Start invokes the function (RequestResponse) with job.config.payload,
// template-expanded (default {}), and waits for its answer:
//
//	answer without a function error                      succeeded
//	function error, errorType Sandbox.Timedout           failed, TIMEOUT
//	any other function error (Handled or Unhandled)      failed, PERMANENT
//
// A function error is the function's own failure on this input, so
// running it again is expected to fail the same way; maxCodeRetries
// decides whether it is tried again. The message is "function error:
// <type>: <answer, at most 200 bytes, control characters removed>", with
// environment values redacted. A refused invocation (unknown function,
// invalid payload, permissions) is a PERMANENT failure; throttling and
// service faults are errors for the engine to retry. Lambda has no
// idempotency token for invocations: a call whose answer was lost (no
// answer within InvokeTimeout) and that the engine retries invokes the
// function again.
func (r Runner) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	j := r.AWS.Job(jobType, req)
	fn, err := j.Required("functionName")
	if err != nil {
		return trigger.Started{}, err
	}
	payload := "{}"
	if req.Config.Has("payload") {
		if payload, err = j.Field("payload"); err != nil {
			return trigger.Started{}, err
		}
	}
	if !json.Valid([]byte(payload)) {
		// A value from a template broke the JSON (a quote in an
		// environment variable, say). The payload itself is not shown:
		// it may hold those values.
		return j.Refused("lambda: job.config.payload is not valid JSON once its template variables are replaced"), nil
	}
	client, cfg, err := service.Client(ctx, j, awsjob.ARNRegion(fn))
	if err != nil {
		return trigger.Started{}, err
	}
	timeout := r.InvokeTimeout
	if timeout <= 0 {
		timeout = DefaultInvokeTimeout
	}
	if d := req.Config.Duration("timeout"); d > 0 {
		// The function's own timeout, as the pipeline says it: Lambda
		// answers by then (pipeline.JobCallBound).
		timeout = d + pipeline.LambdaAnswerSlack
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out, err := client.Invoke(ctx, &awslambda.InvokeInput{
		FunctionName:   aws.String(fn),
		InvocationType: types.InvocationTypeRequestResponse,
		Payload:        []byte(payload),
	})
	if err != nil {
		return j.StartFailed("Invoke", err)
	}
	id, _ := awsmiddleware.GetRequestIDMetadata(out.ResultMetadata)
	if id == "" {
		id = "sync"
	}
	started := trigger.Started{JobRunID: id, Meta: awsjob.Meta(cfg, MetaFunctionName, fn)}
	res := result(j, out)
	started.Result = &res
	return started, nil
}

func result(j *awsjob.Job, out *awslambda.InvokeOutput) trigger.Result {
	if out.FunctionError == nil {
		return trigger.Result{Status: trigger.StatusSucceeded}
	}
	var answer struct {
		ErrorType string `json:"errorType"`
	}
	_ = json.Unmarshal(out.Payload, &answer) // not JSON: no errorType
	c := run.Permanent
	if answer.ErrorType == ErrorTypeTimeout {
		c = run.Timeout
	}
	msg := "function error: " + j.Line(*out.FunctionError, 40) + ": " + j.Line(string(out.Payload), maxPayload)
	return trigger.Result{Status: trigger.StatusFailed, Category: c, Message: msg}
}

// Poll is never needed: invocations finish within Start.
func (Runner) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{}, errors.New("lambda: invocations are synchronous and are not polled")
}

// service is the Lambda client of a job (awsjob.Service).
var service = awsjob.NewService(awslambda.NewFromConfig, func(o *awslambda.Options) (*aws.Retryer, **string) { return &o.Retryer, &o.BaseEndpoint })
