// Package http calls a URL as a pipeline's job. It is synchronous: the
// HTTP response is the job's result, so a job is never polled. Every call
// goes through httpx (SSRF guard, timeout, redaction); this package only
// builds the request and says what each response status means.
package http

import (
	"context"
	"encoding/json"
	"errors"
	nethttp "net/http"
	"strings"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/secret"
	"github.com/interlockhq/interlock/internal/trigger"
	"github.com/interlockhq/interlock/internal/trigger/httpx"
)

// Runner calls URLs (its fields: httpx.JobClient).
type Runner httpx.JobClient

var _ trigger.Runner = Runner{}

// Start makes the call; the response is the job's result:
//
//	2xx                  succeeded
//	408, 429, 5xx        error: an infrastructure failure, the engine retries the call
//	network error, timeout error, retried likewise
//	other 3xx and 4xx    failed PERMANENT: the request is wrong, sending it again won't help
//	refused address      failed PERMANENT (SSRF guard)
//	other status         error
//
// A request that cannot be built (an unset ${env:…}) is a failed
// PERMANENT job too: nothing was sent.
func (r Runner) Start(ctx context.Context, req trigger.Request) (trigger.Started, error) {
	x := httpx.NewJobExpander(req, r.LookupEnv)
	call, err := build(req, x)
	if err != nil {
		return done(failed("http: request not sent: " + x.Secrets.Line(err.Error(), secret.MaxError))), nil
	}
	switch _, refused, err := httpx.Start(ctx, r.Client, call, x.Secrets, "http", ""); {
	case refused != nil:
		return done(*refused), nil
	case err != nil:
		return trigger.Started{}, err
	}
	return done(trigger.Result{Status: trigger.StatusSucceeded}), nil
}

// Poll is never needed: the call's response is the job's result.
func (Runner) Poll(context.Context, trigger.Request) (trigger.Result, error) {
	return trigger.Result{}, errors.New("http: jobs are synchronous and are not polled")
}

func done(res trigger.Result) trigger.Started {
	return trigger.Started{JobRunID: "sync", Result: &res}
}

func failed(msg string) trigger.Result {
	return trigger.Result{Status: trigger.StatusFailed, Category: run.Permanent, Message: msg}
}

// build expands the job's config into the call.
func build(req trigger.Request, x *httpx.Expander) (httpx.Call, error) {
	cfg := req.Config
	u, err := x.Str("url", cfg.Str("url"))
	if err != nil {
		return httpx.Call{}, err
	}
	h, err := x.Header("headers", cfg.Map("headers"))
	if err != nil {
		return httpx.Call{}, err
	}
	if h.Get("Content-Type") == "" {
		h.Set("Content-Type", "application/json")
	}
	method := cfg.Str("method")
	if method == "" {
		method = nethttp.MethodPost
	}
	var body []byte
	switch {
	case cfg.Has("body"):
		b, err := x.Str("body", cfg.Str("body"))
		if err != nil {
			return httpx.Call{}, err
		}
		body = []byte(b)
	case method != nethttp.MethodGet && method != nethttp.MethodDelete:
		body = defaultBody(req)
	}
	return httpx.Call{Method: method, URL: u, Header: h, Body: body, Timeout: cfg.Duration("timeout")}, nil
}

// defaultBody is what a POST, PUT or PATCH without a configured body
// sends, as the reference does: the period as {"par_day": "YYYYMMDD"},
// plus "par_hour": "HH" for an hourly period. GET and DELETE send none.
func defaultBody(req trigger.Request) []byte {
	b, _ := json.Marshal(struct {
		Day  string `json:"par_day"`
		Hour string `json:"par_hour,omitempty"`
	}{strings.ReplaceAll(req.Vars.Date, "-", ""), req.Vars.Hour})
	return b
}
