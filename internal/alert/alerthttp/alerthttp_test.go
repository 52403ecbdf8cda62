package alerthttp_test

import (
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert/alerthttp"
	"github.com/interlockhq/interlock/internal/secret/secrettest"
)

func TestSafeURL(t *testing.T) {
	tests := map[string]string{
		"https://hooks.example.com":                   "https://hooks.example.com",
		"https://hooks.example.com/":                  "https://hooks.example.com",
		"https://hooks.example.com/services/T/B/XYZ":  "https://hooks.example.com/…",
		"https://user:pw@hooks.example.com:8443/?k=v": "https://hooks.example.com:8443/…",
		"not a url":        "(invalid URL)",
		"http://[::1]:9/x": "http://[::1]:9/…",
	}
	for in, want := range tests {
		if got := alerthttp.SafeURL(in); got != want {
			t.Errorf("SafeURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestRetryStatus(t *testing.T) {
	for code, want := range map[int]bool{200: false, 301: false, 400: false, 401: false, 404: false, 408: true, 409: false, 429: true, 500: true, 503: true, 599: true} {
		if got := alerthttp.RetryStatus(code); got != want {
			t.Errorf("RetryStatus(%d) = %v, want %v", code, got, want)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	tests := []struct {
		v    string
		want time.Duration
		ok   bool
	}{
		{"", 0, false}, {"0", 0, true}, {"7", 7 * time.Second, true}, {" 30 ", 30 * time.Second, true},
		{"-1", 0, false}, {"soon", 0, false}, {"Wed, 21 Oct 2015 07:28:00 GMT", 0, false},
	}
	for _, tt := range tests {
		h := http.Header{}
		if tt.v != "" {
			h.Set("Retry-After", tt.v)
		}
		if d, ok := alerthttp.RetryAfter(h); d != tt.want || ok != tt.ok {
			t.Errorf("RetryAfter(%q) = %v, %v, want %v, %v", tt.v, d, ok, tt.want, tt.ok)
		}
	}
}

// A transport error quotes what a broken server sent; it goes through
// the same redaction as every job message (secret.Set.Line), cleaned
// before it is redacted (issue 10): the token split by invisible
// characters, which net/http prints escaped, and its wire forms — as Go
// and other languages' encoders print it (secrettest.Forms: Python's
// quote and repr, lower-case percent hex, PHP's JSON, JSON of JSON,
// HTML, mixtures) — do not show.
func TestTransportErrorCleansThenRedacts(t *testing.T) {
	const token = `xoxb-42"tok\en/+x` // no space: net/http quotes a status line without one whole
	line := strings.Join(append(secrettest.Splits(token), secrettest.Forms(token)...), "|")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Read(make([]byte, 4096))
			_, _ = c.Write([]byte(line + "\r\n\r\n"))
			c.Close()
		}
	}()
	rawURL := "http://" + ln.Addr().String() + "/services/T0/B0/path-secret?k=query-secret"
	_, err = alerthttp.Post(t.Context(), alerthttp.NewClient(), rawURL, []byte("{}"), http.Header{}, token)
	if err == nil {
		t.Fatal("no error from a broken answer")
	}
	msg := err.Error()
	if !strings.Contains(msg, "malformed HTTP") || !strings.Contains(msg, "[redacted]") {
		t.Fatalf("err = %q: not the transport error under test", msg)
	}
	for _, s := range []string{"path-secret", "query-secret", "services"} {
		if strings.Contains(msg, s) {
			t.Errorf("err shows %q: %q", s, msg)
		}
	}
	if leak := secrettest.Leak(msg, token, nil); leak != "" {
		t.Errorf("err shows the token as %q: %q", leak, msg)
	}
}
