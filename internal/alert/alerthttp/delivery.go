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

// Post makes d as the sink's delivery: with its kind, host and credential
// (d sets URL, EventID, Body, Header and Authorize), with its client.
func (p Poster) Post(ctx context.Context, d Delivery) (retry bool, err error) {
	d.Kind, d.Host, d.Credential, d.CredentialName = p.kind, p.host, p.credential, p.credentialName
	return d.Post(ctx, p.client)
}

// Delivery is one alert as the webhook and openlineage sinks post it:
// their body, encoded as JSON, with their own headers and, when the sink
// has a credential, what it proves (a signature, a bearer token).
type Delivery struct {
	Kind, Host string // name the sink in errors: "webhook", SafeURL(URL); Poster.Post sets them
	URL        string // where the body is posted
	EventID    string
	Body       any         // encoded as JSON
	Header     http.Header // the sink's own headers (nil: none); Content-Type and User-Agent are set here
	// Credential, when not nil, is read for each delivery, named in
	// errors as CredentialName (Poster.Post sets both); Authorize adds it
	// to the header, and its value is kept out of every error.
	Credential     alert.Secret
	CredentialName string
	Authorize      func(h http.Header, key string, body []byte)
}

// Post makes the delivery with c and reports it as alert.Sink.Deliver
// does: an encoding failure is not worth retrying; a credential that
// cannot be read, a transport failure and the answers Outcome classifies
// so are.
func (d Delivery) Post(ctx context.Context, c *http.Client) (retry bool, err error) {
	body, err := json.Marshal(d.Body)
	if err != nil {
		return false, fmt.Errorf("%s %s: encode event %s: %v", d.Kind, d.Host, d.EventID, err)
	}
	h := d.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Content-Type", "application/json")
	h.Set("User-Agent", "interlock")
	var secrets []string
	if d.Credential != nil {
		key, err := d.Credential()
		if err != nil {
			return true, fmt.Errorf("%s %s: %s: %w", d.Kind, d.Host, d.CredentialName, err)
		}
		d.Authorize(h, key, body)
		secrets = append(secrets, key)
	}
	resp, err := Post(ctx, c, d.URL, body, h, secrets...)
	if err != nil {
		return true, fmt.Errorf("%s: %w", d.Kind, err)
	}
	return Outcome(d.Kind+" "+d.Host, resp)
}
