package awsrt

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
)

// The api function's tokens, as its secret holds them.
const (
	apiReaderToken   = "reader-token-0123456789"
	apiOperatorToken = "operator-token-0123456789"
	apiTokensJSON    = `[{"name": "viewer", "role": "reader", "token": "` + apiReaderToken + `"},
	                     {"name": "oncall", "role": "operator", "token": "` + apiOperatorToken + `"}]`
	apiDomain = "abcdefgh.lambda-url.eu-west-1.on.aws"
)

// apiFn is the api function built as its main builds it (APIFromEnv), on
// a deployment's tables on DynamoDB Local holding the pipeline orders
// (loaded as deploy-config loads it), its tokens in a Secrets Manager
// secret; invoke sends it a function-URL payload through the Lambda
// entry point.
type apiFn struct {
	env    ddbEnv
	h      lambda.Handler
	reader *engine.Engine // reads the tables back, as another process
}

func newAPIFn(t *testing.T) apiFn {
	t.Helper()
	env, eng, sm, arn := apiDeployment(t)
	awsEnv(t, map[string]string{"AWS_ENDPOINT_URL_DYNAMODB": ddblocal.Endpoint(t), "AWS_ENDPOINT_URL_SECRETS_MANAGER": sm.URL})
	h, err := APIFromEnv(t.Context(), EnvOf(map[string]string{
		EnvControlTable: env.tables.Control, EnvJobLogTable: env.tables.JobLog, EnvRerunTable: env.tables.Rerun, EnvEventsTable: env.tables.Events,
		EnvAPITokensSecretARN: arn,
	}))
	if err != nil {
		t.Fatal(err)
	}
	if sm.Reads() != 1 {
		t.Fatalf("the token secret was read %d times at start, want 1", sm.Reads())
	}
	return apiFn{env: env, h: lambda.NewHandler(h), reader: eng}
}

// apiDeployment is what the api function serves: a deployment's tables
// on DynamoDB Local holding the pipeline orders (loaded as deploy-config
// loads it, by eng, which reads the tables back as another process), and
// its tokens in a Secrets Manager secret (sm; arn).
func apiDeployment(t *testing.T) (ddbEnv, *engine.Engine, *awsfake.SecretsManager, string) {
	t.Helper()
	env := newDDBEnv(t, 0)
	eng := engine.New(engine.Options{Store: env.store, Clock: clock.Real{}, Jobs: noJobs{}, Passive: true})
	if err := eng.Open(t.Context()); err != nil {
		t.Fatal(err)
	}
	if _, err := eng.ApplyConfig(t.Context(), "orders.yaml", []byte(routerPipeline)); err != nil {
		t.Fatal(err)
	}
	sm := awsfake.NewSecretsManager(t)
	return env, eng, sm, sm.Put("prod/interlock-api-tokens", apiTokensJSON)
}

// signed is a function-URL payload as Lambda delivers it for a request an
// IAM principal signed (AWS_IAM auth).
func signed(method, path, query string) events.LambdaFunctionURLRequest {
	req := unsigned(method, path, query)
	req.RequestContext.Authorizer = &events.LambdaFunctionURLRequestContextAuthorizerDescription{IAM: &events.LambdaFunctionURLRequestContextAuthorizerIAMDescription{
		AccessKey: "ASIAFAKE", AccountID: awsfake.Account, CallerID: "AROAFAKE:ops", UserARN: "arn:aws:sts::" + awsfake.Account + ":assumed-role/ops/alice", UserID: "AROAFAKE:alice",
	}}
	return req
}

// unsigned is the payload of a URL with auth NONE: no IAM caller.
func unsigned(method, path, query string) events.LambdaFunctionURLRequest {
	return events.LambdaFunctionURLRequest{
		Version: "2.0", RawPath: path, RawQueryString: query,
		Headers: map[string]string{"host": apiDomain, "user-agent": "test", "x-forwarded-proto": "https"},
		RequestContext: events.LambdaFunctionURLRequestContext{
			AccountID: awsfake.Account, RequestID: "req-1", APIID: "abcdefgh", DomainName: apiDomain, DomainPrefix: "abcdefgh",
			HTTP: events.LambdaFunctionURLRequestContextHTTPDescription{Method: method, Path: path, Protocol: "HTTP/1.1", SourceIP: "203.0.113.7", UserAgent: "test"},
		},
	}
}

func bearerOf(req events.LambdaFunctionURLRequest, token string) events.LambdaFunctionURLRequest {
	req.Headers["authorization"] = "Bearer " + token
	return req
}

func (f apiFn) invoke(t *testing.T, req events.LambdaFunctionURLRequest) events.LambdaFunctionURLResponse {
	t.Helper()
	payload, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	out, err := f.h.Invoke(context.Background(), payload)
	if err != nil {
		t.Fatalf("%s %s: invoke: %v", req.RequestContext.HTTP.Method, req.RawPath, err)
	}
	var res events.LambdaFunctionURLResponse
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("answer %s: %v", out, err)
	}
	return res
}

func (f apiFn) paused(t *testing.T) bool {
	t.Helper()
	_, row, err := f.reader.Pipeline(t.Context(), "orders")
	if err != nil {
		t.Fatal(err)
	}
	return row.Paused
}

// TestAPIFunctionServesTheControlPlane: the api function answers the /v1
// API through function-URL payloads with an IAM caller, with the roles of
// its tokens; an operator's pause is committed to the tables.
func TestAPIFunctionServesTheControlPlane(t *testing.T) {
	f := newAPIFn(t)

	res := f.invoke(t, bearerOf(signed("GET", "/v1/pipelines", ""), apiReaderToken))
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Body, `"orders"`) || !strings.HasPrefix(res.Headers["Content-Type"], "application/json") {
		t.Fatalf("GET /v1/pipelines: %d %v %s", res.StatusCode, res.Headers, res.Body)
	}
	res = f.invoke(t, signed("GET", "/v1/pipelines", ""))
	if res.StatusCode != http.StatusUnauthorized {
		t.Fatalf("GET /v1/pipelines without a token: %d %s, want 401", res.StatusCode, res.Body)
	}

	pause := bearerOf(signed("POST", "/v1/pipelines/orders/pause", ""), apiReaderToken)
	pause.Headers["content-type"] = "application/json"
	pause.Body = `{}`
	if res = f.invoke(t, pause); res.StatusCode != http.StatusForbidden || f.paused(t) {
		t.Fatalf("a reader's pause: %d %s, want 403 and nothing paused", res.StatusCode, res.Body)
	}
	pause = bearerOf(signed("POST", "/v1/pipelines/orders/pause", ""), apiOperatorToken)
	pause.Headers["content-type"] = "application/json"
	pause.Body, pause.IsBase64Encoded = base64.StdEncoding.EncodeToString([]byte(`{}`)), true
	if res = f.invoke(t, pause); res.StatusCode != http.StatusOK || !f.paused(t) {
		t.Fatalf("an operator's pause: %d %s, want 200 and the pipeline paused in the tables", res.StatusCode, res.Body)
	}
	res = f.invoke(t, bearerOf(signed("GET", "/v1/events", "pipeline=orders&type=PIPELINE_PAUSED"), apiReaderToken))
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Body, "PIPELINE_PAUSED") || !strings.Contains(res.Body, `oncall`) {
		t.Fatalf("GET /v1/events?…: %d %s, want the pause by oncall", res.StatusCode, res.Body)
	}

	res = f.invoke(t, bearerOf(signed("GET", "/v1/events/stream", ""), apiReaderToken))
	if res.StatusCode != http.StatusNotImplemented || !strings.Contains(res.Body, "poll GET /v1/events") {
		t.Fatalf("the event stream: %d %s, want 501 saying to poll", res.StatusCode, res.Body)
	}
}

// TestAPIFunctionSignIn: the dashboard's sign-in works through the
// function URL — the session comes back in the response's cookies
// (Secure: the URL is HTTPS), and the cookie opens the dashboard, whose
// pages open no event stream.
func TestAPIFunctionSignIn(t *testing.T) {
	f := newAPIFn(t)
	res := f.invoke(t, signed("GET", "/", ""))
	if res.StatusCode != http.StatusSeeOther || !strings.HasPrefix(res.Headers["Location"], "/sign-in") {
		t.Fatalf("GET / signed out: %d %v, want a redirect to sign in", res.StatusCode, res.Headers)
	}
	form := signed("POST", "/sign-in", "")
	form.Headers["content-type"] = "application/x-www-form-urlencoded"
	form.Headers["origin"] = "https://" + apiDomain
	form.Body = url.Values{"token": {apiReaderToken}, "next": {"/ui/pipelines/orders"}}.Encode()
	res = f.invoke(t, form)
	if res.StatusCode != http.StatusSeeOther || res.Headers["Location"] != "/ui/pipelines/orders" || len(res.Cookies) != 1 {
		t.Fatalf("POST /sign-in: %d %v cookies %q", res.StatusCode, res.Headers, res.Cookies)
	}
	if _, ok := res.Headers["Set-Cookie"]; ok {
		t.Errorf("Set-Cookie is in the headers; a function URL takes it in cookies")
	}
	c, err := http.ParseSetCookie(res.Cookies[0])
	if err != nil || c.Name != "interlock_session" || !c.Secure || !c.HttpOnly {
		t.Fatalf("cookie %q: %+v %v, want a Secure HttpOnly session", res.Cookies[0], c, err)
	}
	page := signed("GET", "/ui/pipelines/orders", "")
	page.Cookies = []string{"theme=dark", c.Name + "=" + c.Value}
	res = f.invoke(t, page)
	if res.StatusCode != http.StatusOK || !strings.Contains(res.Body, "orders") || !strings.Contains(res.Body, "viewer") {
		t.Fatalf("the pipeline page with the session: %d %.300s", res.StatusCode, res.Body)
	}
	if strings.Contains(res.Body, `name="live-stream"`) {
		t.Errorf("the page names an event stream, which the function cannot serve")
	}
	css := f.invoke(t, signed("GET", "/ui/assets/app.css", ""))
	if css.StatusCode != http.StatusOK || css.IsBase64Encoded || !strings.Contains(css.Body, "{") {
		t.Fatalf("app.css: %d base64 %v", css.StatusCode, css.IsBase64Encoded)
	}
}

// TestAPIFunctionRefusesARequestWithoutIAMCaller: a payload whose request
// context names no IAM principal (a URL with auth NONE) is refused before
// the API sees it, even with a valid operator token.
func TestAPIFunctionRefusesARequestWithoutIAMCaller(t *testing.T) {
	f := newAPIFn(t)
	for _, req := range []events.LambdaFunctionURLRequest{
		bearerOf(unsigned("GET", "/v1/pipelines", ""), apiReaderToken),
		bearerOf(unsigned("POST", "/v1/pipelines/orders/pause", ""), apiOperatorToken),
		unsigned("GET", "/healthz", ""),
	} {
		req.Headers["content-type"] = "application/json"
		req.Body = "{}"
		res := f.invoke(t, req)
		if res.StatusCode != http.StatusForbidden || !strings.Contains(res.Body, "AWS_IAM") {
			t.Errorf("%s %s without an IAM caller: %d %s, want 403", req.RequestContext.HTTP.Method, req.RawPath, res.StatusCode, res.Body)
		}
	}
	if f.paused(t) {
		t.Fatal("a request without an IAM caller paused the pipeline")
	}
}

// TestAPITokensSecret: the secret's tokens are checked as server.tokens
// are; every refusal names the secret and never a value.
func TestAPITokensSecret(t *testing.T) {
	const arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:api-AbCdEf"
	toks, err := parseAPITokens(arn, apiTokensJSON)
	if err != nil || len(toks) != 2 || toks[1].Name != "oncall" || toks[1].Role != "operator" {
		t.Fatalf("%+v %v", toks, err)
	}
	for doc, want := range map[string]string{
		``:   "empty",
		`[]`: "holds no token",
		`[{"name": "a", "role": "boss", "token": "s3cret-value-1"}]`:                                                              `unknown role "boss"`,
		`[{"name": "a", "role": "reader", "token": "s3cret value"}]`:                                                              "contains spaces",
		`[{"name": "a", "role": "reader", "value": "s3cret-value-1"}]`:                                                            `unknown field "value"`,
		`[{"name": "", "role": "reader", "token": "s3cret-value-1"}]`:                                                             "needs a name",
		`[{"name": "a", "role": "reader", "token": ""}]`:                                                                          "needs a value",
		`[{"name": "a", "role": "reader", "token": "s3cret-value-1"}, {"name": "b", "role": "admin", "token": "s3cret-value-1"}]`: "same value",
		`{"tokens": "s3cret-value-1"}`:                                                                                            "want",
		`[{"name": "a", "role": "reader", "token": s3cret-value-1}]`:                                                              "not JSON",
	} {
		_, err := parseAPITokens(arn, doc)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), arn) || strings.Contains(err.Error(), "s3cret") {
			t.Errorf("%s: %v, want an error naming the secret and %q, without the value", doc, err, want)
		}
	}
}
