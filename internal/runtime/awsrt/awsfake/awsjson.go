// Package awsfake holds local fakes of the AWS services the AWS runtime
// talks to — EventBridge (PutEvents), Secrets Manager (GetSecretValue),
// SQS (SendMessage, ReceiveMessage, DeleteMessage, ChangeMessageVisibility),
// Step Functions (StartExecution) — and of the Lambda platform around a function: an SQS event source
// mapping and the Lambda Runtime API a real lambda.Start process polls.
//
// Each service fake is an httptest server speaking the service's real wire
// protocol (AWS JSON 1.0 or 1.1: POST /, X-Amz-Target "<prefix>.<op>",
// JSON bodies, errors as {"__type", "message"} with HTTP 400), so tests
// reach it through the real AWS SDK v2 client pointed at it with
// BaseEndpoint (Config). Nothing here is a mock: a fake keeps the state
// the service would (queues, receive counts, published events) and
// answers from it.
package awsfake

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
)

// Region is the region the fakes claim to be in.
const Region = "us-east-1"

// Account is the account id the fakes put in ARNs and events.
const Account = "123456789012"

// Config is an SDK configuration that reaches the fake at url: a fixed
// region, static dummy credentials (requests are signed as usual; the
// fakes do not check signatures) and url as the base endpoint of every
// service.
func Config(url string) aws.Config {
	return aws.Config{
		Region:       Region,
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDFAKE", "fake-secret", ""),
		BaseEndpoint: aws.String(url),
	}
}

// apiError is an error answer of an AWS JSON service.
type apiError struct {
	status int    // HTTP status; 0: 400
	code   string // the __type
	msg    string
	query  string // SQS: the x-amzn-query-error header ("<code>;Sender")
}

func (e *apiError) Error() string { return e.code + ": " + e.msg }

func validation(format string, args ...any) *apiError {
	return &apiError{code: "ValidationException", msg: fmt.Sprintf(format, args...)}
}

// jsonService serves one AWS JSON protocol service: POST / with
// X-Amz-Target "<prefix>.<operation>", dispatched to ops.
type jsonService struct {
	version string // "1.0" or "1.1": the Content-Type's x-amz-json-<version>
	prefix  string // the X-Amz-Target prefix, e.g. "AWSEvents"
	ops     map[string]func(ctx context.Context, body []byte) (any, *apiError)
}

func (s jsonService) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		s.fail(w, &apiError{status: http.StatusBadRequest, code: "SerializationException", msg: "cannot read the body"})
		return
	}
	target := r.Header.Get("X-Amz-Target")
	op, ok := strings.CutPrefix(target, s.prefix+".")
	switch {
	case r.Method != http.MethodPost || r.URL.Path != "/":
		s.fail(w, &apiError{status: http.StatusNotFound, code: "UnknownOperationException", msg: r.Method + " " + r.URL.Path})
		return
	case !strings.HasPrefix(r.Header.Get("Content-Type"), "application/x-amz-json-"+s.version):
		s.fail(w, &apiError{code: "SerializationException", msg: "Content-Type must be application/x-amz-json-" + s.version})
		return
	case !ok || s.ops[op] == nil:
		s.fail(w, &apiError{code: "UnknownOperationException", msg: "unknown operation " + target})
		return
	}
	out, aerr := s.ops[op](r.Context(), body)
	if aerr != nil {
		s.fail(w, aerr)
		return
	}
	b, err := json.Marshal(out)
	if err != nil {
		s.fail(w, &apiError{status: http.StatusInternalServerError, code: "InternalFailure", msg: err.Error()})
		return
	}
	w.Header().Set("Content-Type", "application/x-amz-json-"+s.version)
	_, _ = w.Write(b)
}

func (s jsonService) fail(w http.ResponseWriter, e *apiError) {
	status := e.status
	if status == 0 {
		status = http.StatusBadRequest
	}
	w.Header().Set("Content-Type", "application/x-amz-json-"+s.version)
	w.Header().Set("X-Amzn-ErrorType", e.code)
	if e.query != "" {
		w.Header().Set("x-amzn-query-error", e.query)
	}
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"__type": e.code, "message": e.msg})
	_, _ = w.Write(b)
}

// decode reads a request body strictly enough to catch a client sending
// something else than the service's shape.
func decode(body []byte, v any) *apiError {
	if err := json.Unmarshal(body, v); err != nil {
		return &apiError{code: "SerializationException", msg: err.Error()}
	}
	return nil
}
