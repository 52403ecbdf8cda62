package alerthttp_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/alert/alerthttp"
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
