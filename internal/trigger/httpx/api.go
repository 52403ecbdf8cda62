package httpx

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
)

// API is a job system's REST API (Airflow, Databricks) as one Start or
// Poll sees it: where it is, and the headers and timeout every call sends.
type API struct {
	Base    *url.URL // scheme, host, an optional path prefix and user info
	Header  http.Header
	Timeout time.Duration
}

// NewAPI builds the API of a polled job type from its config: the base URL
// in job.config.<urlField>, job.config.headers and job.config.timeout, all
// expanded with x. A poll passes the base URL kept in the job's Meta as
// stored: the job is polled where it was started even if the config has
// changed since, while headers and the URL's user info come from the
// current config (a rotated credential applies at once) — that is how
// status polls send the same auth as the trigger.
func NewAPI(x *Expander, cfg pipeline.JobConfig, urlField, stored string) (API, error) {
	raw, err := x.Str(urlField, cfg.Str(urlField))
	if err != nil {
		return API{}, err
	}
	base, err := parseBase(raw)
	if err != nil {
		return API{}, fmt.Errorf("job.config.%s: %w", urlField, err)
	}
	if stored != "" {
		s, err := parseBase(stored)
		if err != nil {
			return API{}, fmt.Errorf("stored base URL: %w", err)
		}
		s.User = base.User
		base = s
	}
	h, err := x.Header("headers", cfg.Map("headers"))
	if err != nil {
		return API{}, err
	}
	return API{Base: base, Header: h, Timeout: cfg.Duration("timeout")}, nil
}

func parseBase(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("not an absolute http or https URL")
	}
	u.RawQuery, u.Fragment, u.RawFragment = "", "", ""
	return u, nil
}

// Stored is the base URL as a job's Meta keeps it: without user info, so
// no credential is ever stored.
func (a API) Stored() string {
	return Endpoint(a.Base)
}

// Call is a request to Base followed by path segments, each escaped as
// one segment, with query (nil: none).
func (a API) Call(method string, query url.Values, body []byte, segments ...string) Call {
	u := *a.Base
	p := strings.TrimRight(u.EscapedPath(), "/")
	for _, s := range segments {
		p += "/" + url.PathEscape(s)
	}
	u.Path, _ = url.PathUnescape(p)
	u.RawPath = p
	u.RawQuery = query.Encode()
	h := a.Header.Clone()
	if h == nil {
		h = http.Header{}
	}
	h.Set("Accept", "application/json")
	if body != nil {
		h.Set("Content-Type", "application/json")
	}
	return Call{Method: method, URL: u.String(), Header: h, Body: body, Timeout: a.Timeout}
}
