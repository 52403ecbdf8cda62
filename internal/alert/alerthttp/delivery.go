package alerthttp

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/interlockhq/interlock/internal/alert"
)

// Poster is what the webhook and openlineage sinks share: a checked URL
// (CheckSink at start), the sink's name (default SinkName), its credential
// (nil: none) and its client (default NewClient()). A sink embeds it for
// its Name and posts each alert's Delivery with Post.
type Poster struct {
	kind, name, host string
	credential       alert.Secret
	credentialName   string
	client           *http.Client
}

// NewPoster checks a sink of kind posting to rawURL with credential
// (named what in errors) and returns its Poster; name and client, when
// empty, take their defaults.
func NewPoster(kind, name, rawURL string, credential alert.Secret, what string, client *http.Client) (Poster, error) {
	if err := CheckSink(kind, rawURL, credential, what); err != nil {
		return Poster{}, err
	}
	if name == "" {
		name = SinkName(kind, rawURL)
	}
	if client == nil {
		client = NewClient()
	}
	return Poster{kind: kind, name: name, host: SafeURL(rawURL), credential: credential, credentialName: what, client: client}, nil
}

// Name implements alert.Sink's Name for the sink embedding p.
func (p Poster) Name() string { return p.name }

// Delivery is one alert as the webhook and openlineage sinks post it
// (Poster.Post): their body, encoded as JSON, with their own headers and,
// when the sink has a credential, what it proves (a signature, a bearer
// token).
type Delivery struct {
	URL     string // where the body is posted
	EventID string
	Body    any         // encoded as JSON
	Header  http.Header // the sink's own headers (nil: none); Content-Type and User-Agent are set here
	// Authorize adds the sink's credential, read for each delivery, to
	// the header; its value is kept out of every error.
	Authorize func(h http.Header, key string, body []byte)
}

// Post makes d as the sink's delivery, with its client, and reports it as
// alert.Sink.Deliver does: an encoding failure is not worth retrying; a
// credential that cannot be read, a transport failure and the answers
// Outcome classifies so are. Errors name the sink by its kind and host.
func (p Poster) Post(ctx context.Context, d Delivery) (retry bool, err error) {
	body, err := json.Marshal(d.Body)
	if err != nil {
		return false, fmt.Errorf("%s %s: encode event %s: %v", p.kind, p.host, d.EventID, err)
	}
	h := d.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "interlock")
	var secrets []string
	if p.credential != nil {
		key, err := p.credential()
		if err != nil {
			return true, fmt.Errorf("%s %s: %s: %w", p.kind, p.host, p.credentialName, err)
		}
		d.Authorize(h, key, body)
		secrets = append(secrets, key)
	}
	resp, err := Post(ctx, p.client, d.URL, body, h, secrets...)
	if err != nil {
		return true, fmt.Errorf("%s: %w", p.kind, err)
	}
	return Outcome(p.kind+" "+p.host, resp)
}
