package alerthttp_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/interlockhq/interlock/internal/alert/alerthttp"
	"github.com/interlockhq/interlock/internal/secret/secrettest"
)

// echoingTransport fails every request with an error that quotes the
// request's Authorization header, as a proxy or a broken TLS middlebox
// may: the failure text is from outside and can carry what was sent.
type echoingTransport struct{}

func (echoingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return nil, errors.New("proxy refused request with header Authorization: " + r.Header.Get("Authorization"))
}

// TestDeliveryKeepsTheCredentialOutOfATransportError: the credential a
// delivery read is among the secrets its transport error is redacted of,
// whatever shape the failure quotes it in.
func TestDeliveryKeepsTheCredentialOutOfATransportError(t *testing.T) {
	const key = "cred-7f3a9c2e51d84b06"
	p, err := alerthttp.NewPoster("webhook", "", "https://hooks.example.com/in", func() (string, error) { return key, nil },
		"secretEnv WEBHOOK_TOKEN", &http.Client{Transport: echoingTransport{}})
	if err != nil {
		t.Fatal(err)
	}
	retry, err := p.Post(context.Background(), alerthttp.Delivery{URL: "https://hooks.example.com/in", EventID: "e1",
		Body:      map[string]string{"type": "JOB_FAILED"},
		Authorize: func(h http.Header, k string, _ []byte) { h.Set("Authorization", "Bearer "+k) },
	})
	if err == nil || !retry {
		t.Fatalf("a transport failure: retry %v, err %v; want a retried error", retry, err)
	}
	if leak := secrettest.Leak(err.Error(), key, nil); leak != "" {
		t.Fatalf("the credential is in the error %q: %s", err, leak)
	}
}
