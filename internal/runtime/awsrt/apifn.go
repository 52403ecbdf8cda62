package awsrt

import (
	"context"
	"fmt"
	"net/http"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/runtime/local"
)

// FnAPI is the api function: the control plane's HTTP handler (the /v1
// API and the dashboard) behind a Lambda function URL.
const FnAPI = "api"

// EnvAPITokensSecretARN names the Secrets Manager secret holding the api
// function's bearer tokens (a JSON list, SecretAPITokens).
const EnvAPITokensSecretARN = "API_TOKENS_SECRET_ARN"

// APIFromEnv is the api function: the four tables and
// API_TOKENS_SECRET_ARN are required, EVENTS_TTL_DAYS is optional. At
// cold start it reads the tokens, opens the tables and builds the handler
// `interlock serve` builds on them in control-plane mode (no timers,
// watchdog or alert delivery: the deployment's functions run those); each
// invocation is one function-URL request through it (APIHandler).
func APIFromEnv(ctx context.Context, env Env) (any, error) {
	cfg, err := setUpTables(ctx, env, FnAPI, EnvAPITokensSecretARN)
	if err != nil {
		return nil, err
	}
	tokens, err := SecretAPITokens(ctx, secretsmanager.NewFromConfig(cfg), env.Get(EnvAPITokensSecretARN))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", FnAPI, err)
	}
	st, err := OpenStore(ctx, cfg, env, FnAPI)
	if err != nil {
		return nil, err
	}
	a, err := app.OpenControlPlane(ctx, st, "dynamodb tables "+env.Get(EnvControlTable)+", …", app.Options{Logger: Logger()})
	if err != nil {
		_ = st.Close()
		return nil, fmt.Errorf("%s: %w", FnAPI, err)
	}
	h, err := local.ControlPlaneHandler(ctx, a, tokens)
	if err != nil {
		_ = a.Close()
		return nil, fmt.Errorf("%s: %w", FnAPI, err)
	}
	return APIHandler(h), nil
}

// APIHandler serves function-URL requests with h: a request whose
// context names no IAM caller is refused (403) before h sees it — the
// URL's AWS_IAM auth makes Lambda refuse an unsigned request before any
// invocation, and this keeps a URL misconfigured with auth NONE closed
// too. GET /v1/events/stream is answered 501: a buffered response cannot
// stream.
func APIHandler(h http.Handler) func(context.Context, events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
	return func(ctx context.Context, req events.LambdaFunctionURLRequest) (events.LambdaFunctionURLResponse, error) {
		if iam := iamCaller(req); iam == "" {
			return errorResponse(http.StatusForbidden, "forbidden", "the request carries no IAM caller: the api function's URL must use AWS_IAM auth (sign requests with SigV4)"), nil
		}
		if req.RequestContext.HTTP.Method == http.MethodGet && req.RawPath == eventStreamPath {
			return errorResponse(http.StatusNotImplemented, "not_implemented", "the api function answers through a buffered Lambda function URL response, which cannot stream events: poll GET /v1/events?after=<cursor>, or follow the events through a control plane (interlock serve --store dynamodb://…)"), nil
		}
		r, err := functionURLRequest(ctx, req)
		if err != nil {
			return errorResponse(http.StatusBadRequest, "bad_request", err.Error()), nil
		}
		return serveFunctionURL(h, r), nil
	}
}

// eventStreamPath is the API's event stream (server-sent events).
const eventStreamPath = "/v1/events/stream"

// iamCaller is the IAM principal that signed req ("" when none: the URL
// is not AWS_IAM, or the payload did not come through a function URL).
func iamCaller(req events.LambdaFunctionURLRequest) string {
	a := req.RequestContext.Authorizer
	if a == nil || a.IAM == nil {
		return ""
	}
	if a.IAM.UserARN != "" {
		return a.IAM.UserARN
	}
	return a.IAM.CallerID
}
