// Package routing turns the alerts section of interlock.yaml into routes:
// one sink per entry, built by the sink's package, with the entry's match.
// It is the one place that knows every sink type, and belongs to the app
// (which alone builds adapters): serve, the AWS alert dispatcher and
// validate call it and hand the routes to an alert.Deliverer.
//
// Sink names are derived from the destination, not the entry's position,
// so reordering the config keeps every sink's cursor: "console",
// "file:<path>", "slack:<channel>", "webhook:<host>#<hash of the URL>",
// "openlineage:<host>#<hash of the URL>".
// Two entries with the same destination get "#2", "#3", … in config order.
package routing

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"strconv"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/alert/console"
	"github.com/interlockhq/interlock/internal/alert/file"
	"github.com/interlockhq/interlock/internal/alert/openlineage"
	"github.com/interlockhq/interlock/internal/alert/slack"
	"github.com/interlockhq/interlock/internal/alert/webhook"
	"github.com/interlockhq/interlock/internal/pipeline"
)

// Options are what the sinks need from the process.
type Options struct {
	// LookupEnv reads tokenEnv and secretEnv (nil: os.LookupEnv).
	LookupEnv func(string) (string, bool)
	// Path resolves a configured path (file sink, tokenFile) against the
	// project directory (nil: as written).
	Path func(string) string
	// Console is where the console sink writes (nil: os.Stdout).
	Console io.Writer
	// Threads keeps Slack threads (nil: Slack alerts do not thread).
	Threads alert.Threads
	// Client is the HTTP client of Slack and webhook sinks (nil: each
	// sink's default, 10 s timeout, no redirects).
	Client *http.Client
	// SlackAPIURL overrides Slack's API address (tests).
	SlackAPIURL string
	Logger      *slog.Logger
}

// Routes are built routes. Close releases what their sinks hold (files).
type Routes []alert.Route

// Close closes every sink that holds a resource.
func (rs Routes) Close() error {
	var errs []error
	for _, r := range rs {
		if c, ok := r.Sink.(io.Closer); ok {
			errs = append(errs, c.Close())
		}
	}
	return errors.Join(errs...)
}

// Build builds a route per entry. Every entry is checked: a missing token,
// a missing secret or an unwritable file is reported, all at once, naming
// the entry (alerts[i]) and never showing a secret. On error nothing stays
// open.
func Build(entries []pipeline.Alert, o Options) (Routes, error) {
	if o.Path == nil {
		o.Path = func(p string) string { return p }
	}
	if o.Console == nil {
		o.Console = os.Stdout
	}
	var routes Routes
	var errs []error
	names := Names(entries)
	for i, a := range entries {
		s, err := build(a, names[i], o)
		if err != nil {
			errs = append(errs, fmt.Errorf("alerts[%d] (%s): %w", i, a.Type, err))
			continue
		}
		m := alert.Match{Types: a.Match.Types, Pipelines: a.Match.Pipelines, Levels: a.Match.Levels}
		if a.Type == pipeline.AlertOpenLineage && m.Default() {
			// A lineage backend wants the runs, not the default selection's
			// problems and all-clears.
			m.Types = openlineage.DefaultTypes()
		}
		routes = append(routes, alert.Route{Sink: s, Match: m})
	}
	if err := errors.Join(errs...); err != nil {
		routes.Close()
		return nil, err
	}
	return routes, nil
}

// SecretErrors resolves the secrets of the slack and webhook entries as
// Build does at serve's start (a token or signing secret from an unset
// variable or an unreadable file refuses the start), without opening
// anything else: `interlock validate` reports what serve would refuse.
// The result maps an entry's index to its problem.
func SecretErrors(entries []pipeline.Alert, o Options) map[int]error {
	if o.Path == nil {
		o.Path = func(p string) string { return p }
	}
	out := map[int]error{}
	for i, a := range entries {
		if a.Type != pipeline.AlertSlack && a.Type != pipeline.AlertWebhook && a.Type != pipeline.AlertOpenLineage {
			continue
		}
		s, err := build(a, baseName(a), o)
		if err != nil {
			out[i] = err
			continue
		}
		_ = Routes{{Sink: s}}.Close()
	}
	return out
}

// SlackOnly is the one route of a deployment without an alerts section
// (the AWS alert dispatcher's): every alert to one Slack channel, with a
// token already read (from a secret). The sink keeps Slack's default name.
func SlackOnly(channel, token string, o Options) (Routes, error) {
	sink, err := slack.New(slack.Config{
		Channel: channel, Token: alert.StaticSecret(token), APIURL: o.SlackAPIURL, Client: o.Client,
		Threads: o.Threads, Logger: o.Logger,
	})
	if err != nil {
		return nil, err
	}
	return Routes{{Sink: sink}}, nil
}

// Names are the sink names Build gives entries, in order, without
// building anything (no secret is read): what a process that delivers
// nothing itself lists as the configured sinks.
func Names(entries []pipeline.Alert) []string {
	used := map[string]int{}
	out := make([]string, 0, len(entries))
	for _, a := range entries {
		base := baseName(a)
		used[base]++
		name := base
		if n := used[base]; n > 1 {
			name = base + "#" + strconv.Itoa(n)
		}
		out = append(out, name)
	}
	return out
}

func baseName(a pipeline.Alert) string {
	switch a.Type {
	case pipeline.AlertSlack:
		return "slack:" + a.Channel
	case pipeline.AlertWebhook:
		return webhook.Name(a.URL)
	case pipeline.AlertOpenLineage:
		return openlineage.Name(a.URL)
	case pipeline.AlertFile:
		// The path as written in interlock.yaml, not as resolved: the name
		// keys the sink's delivery marks, which must not change with how
		// --config is spelled (./interlock.yaml, an absolute path, a link).
		return "file:" + a.Path
	}
	return string(a.Type)
}

// tokenOf is the token an entry names: tokenEnv's, else tokenFile's;
// nil when it names none.
func tokenOf(a pipeline.Alert, o Options) alert.Secret {
	switch {
	case a.TokenEnv != "":
		return alert.EnvSecret(a.TokenEnv, o.LookupEnv)
	case a.TokenFile != "":
		return alert.FileSecret(o.Path(a.TokenFile))
	}
	return nil
}

func build(a pipeline.Alert, name string, o Options) (alert.Sink, error) {
	switch a.Type {
	case pipeline.AlertConsole:
		return console.Named(name, o.Console), nil
	case pipeline.AlertFile:
		return file.Open(file.Config{Name: name, Path: o.Path(a.Path)})
	case pipeline.AlertSlack:
		token := tokenOf(a, o)
		if token == nil {
			return nil, errors.New("tokenEnv or tokenFile is required")
		}
		return slack.New(slack.Config{Name: name, Channel: a.Channel, Token: token, APIURL: o.SlackAPIURL,
			Client: o.Client, Threads: o.Threads, Logger: o.Logger})
	case pipeline.AlertWebhook:
		var secret alert.Secret
		if a.SecretEnv != "" {
			secret = alert.EnvSecret(a.SecretEnv, o.LookupEnv)
		}
		return webhook.New(webhook.Config{Name: name, URL: a.URL, Secret: secret, Client: o.Client})
	case pipeline.AlertOpenLineage:
		return openlineage.New(openlineage.Config{Name: name, URL: a.URL, Namespace: a.Namespace, APIKey: tokenOf(a, o), Client: o.Client})
	}
	return nil, fmt.Errorf("unknown alert type %q", a.Type)
}
