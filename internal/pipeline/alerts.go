package pipeline

import (
	"maps"
	"net/url"
	"path"
	"slices"
	"strings"

	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/event"
)

// AlertType names an alert sink.
type AlertType string

// The alert sinks.
const (
	AlertSlack   AlertType = "slack"
	AlertWebhook AlertType = "webhook"
	AlertConsole AlertType = "console"
	AlertFile    AlertType = "file"
	// AlertOpenLineage posts OpenLineage RunEvents (docs/openlineage.md).
	AlertOpenLineage AlertType = "openlineage"
)

// AlertTypes lists the alert sinks.
func AlertTypes() []AlertType {
	return []AlertType{AlertSlack, AlertWebhook, AlertConsole, AlertFile, AlertOpenLineage}
}

// Alert is one alert sink and what it receives. Which fields a type uses
// is fixed (alertFields); the others must be empty.
type Alert struct {
	Type      AlertType
	Channel   string // slack
	TokenEnv  string // slack: bot token from this variable …, openlineage: api key (optional) …
	TokenFile string // … or from this file
	URL       string // webhook; openlineage: the backend's base URL
	Namespace string // openlineage: the jobs' namespace (default "interlock")
	SecretEnv string // webhook: signing secret, optional
	Path      string // file
	Match     AlertMatch
}

// AlertMatch filters the events an alert sink receives; an empty list
// matches everything.
type AlertMatch struct {
	Types     []event.Type
	Pipelines []string // pipeline ids or globs (path.Match syntax)
	Levels    []event.Level
}

type rawAlert struct {
	Type      string `yaml:"type,required"`
	Channel   string `yaml:"channel"`
	TokenEnv  string `yaml:"tokenEnv"`
	TokenFile string `yaml:"tokenFile"`
	URL       string `yaml:"url"`
	SecretEnv string `yaml:"secretEnv"`
	Path      string `yaml:"path"`
	Namespace string `yaml:"namespace"`
	Match     *struct {
		Types     []string `yaml:"types"`
		Pipelines []string `yaml:"pipelines"`
		Levels    []string `yaml:"levels"`
	} `yaml:"match"`
}

// alertFields lists, per alert type, the fields it uses; required ones
// are marked. tokenEnv/tokenFile are checked as a pair.
var alertFields = map[AlertType]map[string]bool{
	AlertSlack:       {"channel": true, "tokenEnv": false, "tokenFile": false},
	AlertWebhook:     {"url": true, "secretEnv": false},
	AlertConsole:     {},
	AlertFile:        {"path": true},
	AlertOpenLineage: {"url": true, "tokenEnv": false, "tokenFile": false, "namespace": false},
}

func (b *builder) alert(p string, raw rawAlert) Alert {
	a := Alert{Type: AlertType(raw.Type), Channel: raw.Channel, TokenEnv: raw.TokenEnv, TokenFile: raw.TokenFile,
		URL: raw.URL, SecretEnv: raw.SecretEnv, Path: raw.Path, Namespace: raw.Namespace}
	fields, known := alertFields[a.Type]
	if !known {
		if raw.Type != "" {
			var names []string
			for _, t := range AlertTypes() {
				names = append(names, string(t))
			}
			b.errorf(p+".type", "%s", confdec.Unknown("alert type", raw.Type, names))
		}
	} else {
		set := map[string]string{"channel": raw.Channel, "tokenEnv": raw.TokenEnv, "tokenFile": raw.TokenFile,
			"url": raw.URL, "secretEnv": raw.SecretEnv, "path": raw.Path, "namespace": raw.Namespace}
		for _, name := range slices.Sorted(maps.Keys(set)) {
			required, used := fields[name]
			switch {
			case set[name] != "" && !used:
				b.errorf(p+"."+name, "not used by alert type %s", a.Type)
			case set[name] == "" && required:
				b.errorf(p+"."+name, "missing required field for alert type %s", a.Type)
			}
		}
		switch a.Type {
		case AlertSlack:
			b.secretSource(p, "tokenEnv", raw.TokenEnv, "tokenFile", raw.TokenFile)
		case AlertOpenLineage:
			b.alertURL(p, raw.URL)
			if raw.TokenEnv != "" || raw.TokenFile != "" {
				b.secretSource(p, "tokenEnv", raw.TokenEnv, "tokenFile", raw.TokenFile)
			}
		case AlertWebhook:
			b.alertURL(p, raw.URL)
			if raw.SecretEnv != "" && !envName.MatchString(raw.SecretEnv) {
				b.errorf(p+".secretEnv", "%q is not an environment variable name", raw.SecretEnv)
			}
		}
	}
	if m := raw.Match; m != nil {
		mp := p + ".match"
		for i, t := range m.Types {
			if _, ok := event.Lookup(event.Type(t)); !ok {
				var names []string
				for _, et := range event.Types() {
					names = append(names, string(et))
				}
				if s := confdec.Suggest(t, names); s != "" {
					b.d.ErrorAt(confdec.Index(b.at(mp+".types"), i), "unknown event type %q, did you mean %q?", t, s)
				} else {
					b.d.ErrorAt(confdec.Index(b.at(mp+".types"), i), "unknown event type %q", t)
				}
				continue
			}
			a.Match.Types = append(a.Match.Types, event.Type(t))
		}
		for i, pat := range m.Pipelines {
			if _, err := path.Match(pat, ""); err != nil || pat == "" {
				b.d.ErrorAt(confdec.Index(b.at(mp+".pipelines"), i), "malformed pipeline pattern %q", pat)
				continue
			}
			a.Match.Pipelines = append(a.Match.Pipelines, pat)
		}
		for i, l := range m.Levels {
			lv := event.Level(strings.ToLower(l))
			if !slices.Contains(event.Levels(), lv) {
				b.d.ErrorAt(confdec.Index(b.at(mp+".levels"), i), "unknown level %q (want one of info, warning, error)", l)
				continue
			}
			a.Match.Levels = append(a.Match.Levels, lv)
		}
	}
	return a
}

// alertURL checks a sink's url: absolute http or https.
func (b *builder) alertURL(p, raw string) {
	if raw == "" {
		return
	}
	if u, err := url.Parse(raw); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		b.errorf(p+".url", "want an absolute http or https URL, got %q", raw)
	}
}
