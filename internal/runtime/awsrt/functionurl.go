package awsrt

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/aws/aws-lambda-go/events"
)

// The adapter between a Lambda function URL's payload (version 2.0) and
// net/http: no maintained adapter is in the module graph, and this one is
// small. A function URL is HTTPS only, sends header names in lower case
// with repeated headers joined by commas, carries cookies in a list of
// their own, and takes a response's Set-Cookie headers in "cookies".

// functionURLRequest is the http.Request a function URL received.
func functionURLRequest(ctx context.Context, req events.LambdaFunctionURLRequest) (*http.Request, error) {
	method := req.RequestContext.HTTP.Method
	if method == "" {
		return nil, fmt.Errorf("the request has no requestContext.http.method: not a function URL payload")
	}
	path := req.RawPath
	if path == "" {
		path = "/"
	}
	if !strings.HasPrefix(path, "/") {
		return nil, fmt.Errorf("rawPath %q does not start with /", path)
	}
	host := req.Headers["host"]
	if host == "" {
		host = req.RequestContext.DomainName
	}
	u, err := url.Parse("https://" + host + path)
	if err != nil {
		return nil, fmt.Errorf("rawPath %q: %v", path, err)
	}
	u.RawQuery = req.RawQueryString
	body := []byte(req.Body)
	if req.IsBase64Encoded {
		if body, err = base64.StdEncoding.DecodeString(req.Body); err != nil {
			return nil, fmt.Errorf("body: not base64 although isBase64Encoded: %v", err)
		}
	}
	r, err := http.NewRequestWithContext(ctx, method, u.String(), bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	for k, v := range req.Headers {
		r.Header.Set(k, v)
	}
	if len(req.Cookies) > 0 {
		r.Header.Set("Cookie", strings.Join(req.Cookies, "; "))
	}
	r.Host = host
	r.RequestURI = u.RequestURI()
	r.RemoteAddr = net.JoinHostPort(req.RequestContext.HTTP.SourceIP, "0")
	// The browser reached the URL over TLS (a session cookie is then
	// Secure).
	r.TLS = &tls.ConnectionState{ServerName: host}
	return r, nil
}

// serveFunctionURL serves r with h and returns the whole response as a
// function URL takes it: Set-Cookie headers as cookies, other repeated
// headers joined by commas, a body that is not UTF-8 in base64.
func serveFunctionURL(h http.Handler, r *http.Request) events.LambdaFunctionURLResponse {
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	res := rec.Result()
	out := events.LambdaFunctionURLResponse{StatusCode: res.StatusCode, Headers: map[string]string{}}
	for k, vs := range res.Header {
		if k == "Set-Cookie" {
			out.Cookies = append(out.Cookies, vs...)
			continue
		}
		out.Headers[k] = strings.Join(vs, ",")
	}
	b := rec.Body.Bytes()
	if utf8.Valid(b) {
		out.Body = string(b)
	} else {
		out.Body, out.IsBase64Encoded = base64.StdEncoding.EncodeToString(b), true
	}
	return out
}

// errorResponse is an answer in the API's error shape ({"error": {"code",
// "message"}}), for requests refused before the handler.
func errorResponse(status int, code, msg string) events.LambdaFunctionURLResponse {
	b, _ := json.Marshal(map[string]map[string]string{"error": {"code": code, "message": msg}})
	return events.LambdaFunctionURLResponse{StatusCode: status, Headers: map[string]string{"Content-Type": "application/json"}, Body: string(b) + "\n"}
}
