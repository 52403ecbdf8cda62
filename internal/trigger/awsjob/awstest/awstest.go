// Package awstest serves fake AWS endpoints for the AWS job types' tests.
// The fakes speak the wire protocols the SDK uses — awsJson 1.0/1.1 RPC
// with X-Amz-Target, and REST-JSON — and check each request's SigV4
// signature against the test secret key, so a test shows the SDK really
// signed with the configured credentials. The job systems' behaviour
// (states, idempotency) lives in each job type's test, next to its fake.
package awstest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"

	"github.com/interlockhq/interlock/internal/trigger/awsjob"
)

// The test credentials and region. SecretKey must never appear, in any
// form, in an error, a message or a Meta value. It holds characters JSON
// and URL escaping change (so the contract kit checks those forms too),
// written so that it stays valid inside a JSON string: a Lambda payload
// template puts it there as it is.
const (
	AccessKey = "AKIAINTERLOCKTEST01"
	SecretKey = `wJalrXUtnFEMI/K7MDENG/\"interlock\\TEST KEY01`
	Region    = "eu-west-1"
)

// LoadOptions make config.LoadDefaultConfig use the test credentials and
// nothing from the machine: no shared config or credentials files, no
// instance metadata service.
func LoadOptions() []func(*config.LoadOptions) error {
	return []func(*config.LoadOptions) error{
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(AccessKey, SecretKey, "")),
		config.WithSharedConfigFiles([]string{}),
		config.WithSharedCredentialsFiles([]string{}),
		config.WithEC2IMDSClientEnableState(imds.ClientDisabled),
	}
}

// Session is an awsjob.Session on the test credentials whose templates
// read env (nil: nothing is set), with a short call timeout.
func Session(env map[string]string) *awsjob.Session {
	return &awsjob.Session{
		LookupEnv: func(name string) (string, bool) {
			v, ok := env[name]
			return v, ok
		},
		LoadOptions: LoadOptions(),
		Timeout:     5 * time.Second,
	}
}

// Reply is a fake's answer to one call.
type Reply struct {
	Status int               // 0: 200, or 400 with ErrorCode
	Body   any               // encoded as JSON; a []byte is sent as is
	Header map[string]string // extra response headers
	// ErrorCode makes the reply an AWS error with this code and
	// ErrorMessage, encoded the way the protocol encodes errors.
	ErrorCode    string
	ErrorMessage string
}

// Error is an AWS error reply.
func Error(status int, code, message string) Reply {
	return Reply{Status: status, ErrorCode: code, ErrorMessage: message}
}

// Call is one request a fake received.
type Call struct {
	Op        string // the operation (RPC) or "METHOD path" (REST)
	AccessKey string // from the SigV4 credential scope
	Region    string // from the SigV4 credential scope
	Service   string // from the SigV4 credential scope
	Header    http.Header
	Body      []byte
}

// Server is a fake AWS endpoint.
type Server struct {
	*httptest.Server
	t       testing.TB
	service string // SigV4 signing name

	mu    sync.Mutex
	calls []Call
}

// Calls returns the calls received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// AccessKeys returns the access keys that signed the calls to op, in order.
func (s *Server) AccessKeys(op string) []string {
	var out []string
	for _, c := range s.Calls() {
		if c.Op == op {
			out = append(out, c.AccessKey)
		}
	}
	return out
}

// Count is the number of calls to op.
func (s *Server) Count(op string) int { return len(s.AccessKeys(op)) }

// NewRPC starts a fake for an awsJson protocol (version "1.0" or "1.1")
// whose X-Amz-Target is "<target>.<Operation>", signed for service.
func NewRPC(t testing.TB, version, target, service string, handle func(op string, body []byte) Reply) *Server {
	s := &Server{t: t, service: service}
	contentType := "application/x-amz-json-" + version
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, sc, ok := s.receive(w, r, func(code, msg string) { writeRPCError(w, contentType, 403, code, msg) })
		if !ok {
			return
		}
		op, found := strings.CutPrefix(r.Header.Get("X-Amz-Target"), target+".")
		switch {
		case r.Method != http.MethodPost || r.URL.Path != "/":
			writeRPCError(w, contentType, 404, "UnknownOperationException", r.Method+" "+r.URL.Path)
			return
		case !found:
			writeRPCError(w, contentType, 400, "UnknownOperationException", "X-Amz-Target "+r.Header.Get("X-Amz-Target"))
			return
		case r.Header.Get("Content-Type") != contentType:
			writeRPCError(w, contentType, 400, "SerializationException", "Content-Type "+r.Header.Get("Content-Type"))
			return
		case !json.Valid(body):
			writeRPCError(w, contentType, 400, "SerializationException", "body is not JSON")
			return
		}
		s.record(Call{Op: op, AccessKey: sc.accessKey, Region: sc.region, Service: sc.service, Header: r.Header.Clone(), Body: body})
		rep := handle(op, body)
		if rep.ErrorCode != "" {
			for k, v := range rep.Header {
				w.Header().Set(k, v)
			}
			writeRPCError(w, contentType, orDefault(rep.Status, 400), rep.ErrorCode, rep.ErrorMessage)
			return
		}
		w.Header().Set("Content-Type", contentType)
		writeReply(w, rep)
	}))
	t.Cleanup(s.Close)
	return s
}

// NewREST starts a fake for the REST-JSON protocol signed for service;
// handle routes by method and path itself (op is "METHOD path").
func NewREST(t testing.TB, service string, handle func(r *http.Request, body []byte) Reply) *Server {
	s := &Server{t: t, service: service}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, sc, ok := s.receive(w, r, func(code, msg string) { writeRESTError(w, 403, code, msg) })
		if !ok {
			return
		}
		s.record(Call{Op: r.Method + " " + r.URL.EscapedPath(), AccessKey: sc.accessKey, Region: sc.region, Service: sc.service, Header: r.Header.Clone(), Body: body})
		rep := handle(r, body)
		for k, v := range rep.Header {
			w.Header().Set(k, v)
		}
		if rep.ErrorCode != "" {
			writeRESTError(w, orDefault(rep.Status, 400), rep.ErrorCode, rep.ErrorMessage)
			return
		}
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", "application/json")
		}
		writeReply(w, rep)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *Server) record(c Call) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, c)
}

// receive reads the body and checks the signature; a bad signature is
// answered as AWS answers it.
func (s *Server) receive(w http.ResponseWriter, r *http.Request, deny func(code, msg string)) ([]byte, scope, bool) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		deny("SerializationException", err.Error())
		return nil, scope{}, false
	}
	sc, err := verify(r, body, s.service)
	if err != nil {
		deny("InvalidSignatureException", err.Error())
		return nil, scope{}, false
	}
	return body, sc, true
}

// scope is the SigV4 credential scope of a request.
type scope struct{ accessKey, region, service string }

func orDefault(v, d int) int {
	if v == 0 {
		return d
	}
	return v
}

func writeReply(w http.ResponseWriter, rep Reply) {
	var data []byte
	switch b := rep.Body.(type) {
	case nil:
		data = []byte("{}")
	case []byte:
		data = b
	default:
		var err error
		if data, err = json.Marshal(b); err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
	}
	w.Header().Set("X-Amzn-Requestid", "req-0001")
	w.WriteHeader(orDefault(rep.Status, 200))
	_, _ = w.Write(data)
}

// writeRPCError encodes an error as awsJson does: the code in "__type".
func writeRPCError(w http.ResponseWriter, contentType string, status int, code, msg string) {
	w.Header().Set("Content-Type", contentType)
	w.Header().Set("X-Amzn-Requestid", "req-0001")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"__type": code, "message": msg})
}

// writeRESTError encodes an error as REST-JSON does: the code in the
// X-Amzn-ErrorType header.
func writeRESTError(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Amzn-Errortype", code)
	w.Header().Set("X-Amzn-Requestid", "req-0001")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"Type": "User", "message": msg})
}

// verify checks r's SigV4 signature with SecretKey, signing again the
// headers the client signed, and returns the access key.
func verify(r *http.Request, body []byte, service string) (scope, error) {
	auth := r.Header.Get("Authorization")
	rest, ok := strings.CutPrefix(auth, "AWS4-HMAC-SHA256 ")
	if !ok {
		return scope{}, errors.New("request is not signed with SigV4")
	}
	fields := map[string]string{}
	for _, part := range strings.Split(rest, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		fields[k] = v
	}
	parts := strings.Split(fields["Credential"], "/")
	if len(parts) != 5 || parts[4] != "aws4_request" {
		return scope{}, fmt.Errorf("malformed credential scope %q", fields["Credential"])
	}
	sc := scope{accessKey: parts[0], region: parts[2], service: parts[3]}
	ak, region, svc := sc.accessKey, sc.region, sc.service
	if svc != service {
		return sc, fmt.Errorf("signed for service %q, want %q", svc, service)
	}
	when, err := time.Parse("20060102T150405Z", r.Header.Get("X-Amz-Date"))
	if err != nil {
		return sc, fmt.Errorf("X-Amz-Date: %v", err)
	}
	u := *r.URL
	u.Scheme, u.Host = "http", r.Host
	again, err := http.NewRequest(r.Method, u.String(), bytes.NewReader(body))
	if err != nil {
		return sc, err
	}
	again.URL.Path, again.URL.RawPath = r.URL.Path, r.URL.RawPath
	again.Host = r.Host
	again.Header = http.Header{}
	again.ContentLength = 0
	for _, h := range strings.Split(fields["SignedHeaders"], ";") {
		switch h {
		case "host":
		case "content-length":
			again.ContentLength = int64(len(body))
		default:
			again.Header[http.CanonicalHeaderKey(h)] = r.Header.Values(h)
		}
	}
	hash := r.Header.Get("X-Amz-Content-Sha256")
	if hash == "" {
		sum := sha256.Sum256(body)
		hash = hex.EncodeToString(sum[:])
	}
	creds := aws.Credentials{AccessKeyID: ak, SecretAccessKey: SecretKey}
	if err := v4.NewSigner().SignHTTP(context.Background(), creds, again, hash, service, region, when); err != nil {
		return sc, err
	}
	if again.Header.Get("Authorization") != auth {
		return sc, errors.New("the request signature we calculated does not match the signature you provided")
	}
	return sc, nil
}
