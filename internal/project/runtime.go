package project

import (
	"errors"
	"fmt"
	"maps"
	"net/netip"
	"net/url"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/apitoken"
	"github.com/interlockhq/interlock/internal/app/routing"
	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/trigger/httpx"
)

// This file holds the checks that go beyond a file's own content: what
// `serve` would refuse at start in this environment (API tokens), and
// what the SSRF guard would refuse at run time (warnings). Each reuses the
// runtime's own code, so validate and serve cannot disagree.

// Severity says whether a finding makes a file invalid.
type Severity string

// The severities. Errors are FileReport.Errors; only warnings carry a
// Severity field today, so JSON readers can merge both lists.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Warning is a problem that does not make the file invalid, because the
// runtime may still see it differently (a name resolved at run time).
type Warning struct {
	File     string   `json:"file"`
	Line     int      `json:"line,omitempty"`
	Path     string   `json:"path,omitempty"`
	Msg      string   `json:"message"`
	Severity Severity `json:"severity"`
}

// String renders "file:line: path: warning: message".
func (w Warning) String() string {
	return confdec.Error{File: w.File, Line: w.Line, Path: w.Path, Msg: "warning: " + w.Msg}.Error()
}

// envWarnings warns about the ${env:NAME} references of a pipeline's job
// that are unset in this environment: the job would fail PERMANENT at its
// first run. A warning, not an error: serve may run with another
// environment than validate.
func envWarnings(file string, root *yaml.Node, p *pipeline.Pipeline, lookupEnv func(string) (string, bool)) []Warning {
	var out []Warning
	for _, field := range p.Job.Config.Names() {
		var refs []string
		for _, s := range append(append([]string{p.Job.Config.Str(field)}, p.Job.Config.Args(field)...), mapValues(p.Job.Config.Map(field))...) {
			for _, name := range pipeline.EnvRefs(s) {
				if !slices.Contains(refs, name) {
					refs = append(refs, name)
				}
			}
		}
		for _, name := range refs {
			if v, ok := lookupEnv(name); ok && v != "" {
				continue
			}
			out = append(out, Warning{File: file, Line: lineOf(root, "job", "config", field), Path: "job.config." + field, Severity: SeverityWarning,
				Msg: fmt.Sprintf("environment variable %s is not set here: the job fails (PERMANENT) at its first run unless serve's environment sets it", name)})
		}
	}
	return out
}

func mapValues(m map[string]string) []string {
	keys := slices.Sorted(maps.Keys(m))
	out := make([]string, 0, len(keys))
	for _, k := range keys {
		out = append(out, m[k])
	}
	return out
}

// alertSecretErrors resolves the secrets of the alert sinks as serve does
// at start (routing.SecretErrors): a Slack token or a webhook signing
// secret from an unset variable or a missing file refuses the start.
func alertSecretErrors(file string, root *yaml.Node, s *pipeline.Settings, lookupEnv func(string) (string, bool)) []confdec.Error {
	errs := routing.SecretErrors(s.Alerts, routing.Options{LookupEnv: lookupEnv, Path: func(p string) string { return resolve(file, p) }})
	var out []confdec.Error
	for i, a := range s.Alerts {
		err, ok := errs[i]
		if !ok {
			continue
		}
		field := "tokenEnv"
		switch {
		case a.Type == pipeline.AlertWebhook:
			field = "secretEnv"
		case a.TokenEnv == "":
			field = "tokenFile"
		}
		out = append(out, confdec.Error{File: file, Line: lineOf(root, "alerts", i, field), Path: confdec.Join(confdec.Index("alerts", i), field),
			Msg: err.Error() + " (serve would not start)"})
	}
	return out
}

// tokenErrors resolves every API token of settings as serve does at start
// (apitoken.ResolveTokens: the variable must be set and not empty, the file
// readable and not empty, relative to interlock.yaml), one token at a
// time so each problem points at its token's line.
func tokenErrors(file string, root *yaml.Node, s *pipeline.Settings, lookupEnv func(string) (string, bool)) []confdec.Error {
	readFile := func(p string) ([]byte, error) { return os.ReadFile(resolve(file, p)) }
	var out []confdec.Error
	for i, t := range s.Server.Tokens {
		one := &pipeline.Settings{Server: pipeline.Server{Tokens: []pipeline.Token{t}}}
		if _, err := apitoken.ResolveTokens(one, lookupEnv, readFile); err != nil {
			field := "tokenEnv"
			if t.TokenEnv == "" {
				field = "tokenFile"
			}
			path := confdec.Join(confdec.Index("server.tokens", i), field)
			out = append(out, confdec.Error{File: file, Line: lineOf(root, "server", "tokens", i, field), Path: path,
				Msg: err.Error() + " (serve would not start)"})
		}
	}
	if len(out) > 0 || len(s.Server.Tokens) < 2 {
		return out
	}
	// Each token resolves; what is left is what only the whole set can
	// show (two tokens with one value).
	if _, err := apitoken.ResolveTokens(s, lookupEnv, readFile); err != nil {
		for _, e := range unjoin(err) {
			out = append(out, confdec.Error{File: file, Line: lineOf(root, "server", "tokens"), Path: "server.tokens", Msg: e.Error() + " (serve would not start)"})
		}
	}
	return out
}

func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// httpURLField names, for each job type that calls out through
// internal/trigger/httpx (and so through its SSRF guard), the job.config
// field holding the URL it calls. A test pins it against app.Jobs.
var httpURLField = map[pipeline.JobType]string{
	pipeline.JobHTTP:       "url",
	pipeline.JobAirflow:    "url",
	pipeline.JobDatabricks: "workspaceUrl",
}

// ssrfWarnings warns when an HTTP-family job's URL names, literally, an
// address the SSRF guard refuses (an IP, or localhost) and no entry of
// triggers.allowAddresses covers it on the URL's port: every call would
// be refused at run time. A DNS name is not judged (it may resolve
// elsewhere where serve runs), nor is a host built from template
// variables.
func ssrfWarnings(file string, root *yaml.Node, p *pipeline.Pipeline, allow []pipeline.AllowAddress) []Warning {
	field, ok := httpURLField[p.Job.Type]
	if !ok || !p.Job.Config.Has(field) {
		return nil
	}
	raw := p.Job.Config.Str(field)
	host, addrs := literalHost(raw)
	if len(addrs) == 0 {
		return nil
	}
	port := literalPort(raw)
	g := httpx.NewGuard(allow)
	why, byPort := "", false
	for _, a := range addrs {
		ap := netip.AddrPortFrom(a, port)
		w := g.Refusal(ap)
		if w == "" {
			return nil // one reachable address is enough: the dialer tries each
		}
		// Say rather that an entry covers the address on other ports, if
		// one does: that is the likelier mistake.
		if portOnly := w != httpx.NewGuard(nil).Refusal(ap); why == "" || portOnly && !byPort {
			why, byPort = w, portOnly
		}
	}
	what := "host " + host
	if len(addrs) > 1 || addrs[0].String() != host {
		what = fmt.Sprintf("host %s (%s)", host, joinAddrs(addrs))
	}
	if byPort {
		what += fmt.Sprintf(" port %d", port)
	}
	what += " is " + why
	return []Warning{{File: file, Line: lineOf(root, "job", "config", field), Path: "job.config." + field, Severity: SeverityWarning,
		Msg: what + ": the SSRF guard will refuse every call unless interlock.yaml triggers.allowAddresses covers it"}}
}

func joinAddrs(addrs []netip.Addr) string {
	s := make([]string, len(addrs))
	for i, a := range addrs {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// templateVar matches a template variable (${DATE}, ${env:NAME},
// ${file:/PATH}); a file path may hold '/', '@' or ':', so variables are
// replaced before the URL is parsed.
var templateVar = regexp.MustCompile(`\$\{[^}]*\}`)

const hostPlaceholder = "template-variable.invalid"

// literalHost returns the host of a job URL and the addresses it names
// without DNS: an IP literal, or localhost (RFC 6761: always loopback).
// No addresses when the host is a DNS name, is built from template
// variables, or the URL does not parse.
func literalHost(raw string) (string, []netip.Addr) {
	u, err := url.Parse(templateVar.ReplaceAllString(raw, hostPlaceholder))
	if err != nil {
		return "", nil
	}
	host := u.Hostname()
	if host == "" || strings.Contains(host, hostPlaceholder) || strings.Contains(host, "$") {
		return host, nil
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return host, []netip.Addr{a}
	}
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return host, []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}
	}
	return host, nil
}

// literalPort is the port a job URL connects to: the one it names, else
// its scheme's (80, 443); 0 when that cannot be told.
func literalPort(raw string) uint16 {
	u, err := url.Parse(templateVar.ReplaceAllString(raw, hostPlaceholder))
	if err != nil {
		return 0
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return 0
		}
		return uint16(n)
	}
	switch strings.ToLower(u.Scheme) {
	case "http":
		return 80
	case "https":
		return 443
	}
	return 0
}

// lineOf follows mapping keys (string) and list indexes (int) from root
// and returns the line of the node found, or of the deepest node on the
// way when the path ends early; 0 without a root.
func lineOf(root *yaml.Node, path ...any) int {
	n := root
	line := 0
	for n != nil {
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		line = n.Line
		if len(path) == 0 {
			break
		}
		var next *yaml.Node
		switch step := path[0].(type) {
		case string:
			if n.Kind == yaml.MappingNode {
				for i := 0; i+1 < len(n.Content); i += 2 {
					if n.Content[i].Value == step {
						next = n.Content[i+1]
					}
				}
			}
		case int:
			if n.Kind == yaml.SequenceNode && step >= 0 && step < len(n.Content) {
				next = n.Content[step]
			}
		}
		n, path = next, path[1:]
	}
	return line
}

// ErrNotAScenario is wrapped by NotAScenario's error.
var ErrNotAScenario = errors.New("not a scenario")

// NotAScenario tells, from its content, whether data is a configuration
// file of another kind (a pipeline, a calendar, interlock.yaml) given where
// a scenario is expected, with an error that says so plainly. A file that
// does not parse, or is a scenario or of no known kind, gives nil: the
// scenario loader reports its problems.
func NotAScenario(file string, data []byte) error {
	doc, err := confdec.ParseDocument(file, data)
	if err != nil {
		return nil
	}
	what := map[Kind]string{KindPipeline: "a pipeline file", KindCalendar: "a calendar file", KindSettings: "an interlock.yaml settings file"}[DetectKind(doc)]
	if what == "" {
		return nil
	}
	return fmt.Errorf("%s is %s, %w (simulate takes scenario files; see docs/scenarios.md, or the scenarios/example.yaml that `interlock init` creates)", file, what, ErrNotAScenario)
}
