package pipeline

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/schedule"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store/pgurl"
)

// Settings is interlock.yaml (product spec §6), validated, defaults
// applied. Paths are as written; the app resolves relative ones.
type Settings struct {
	Store Store
	// StoreLine is the line of the store: field in Source.File (0: not
	// written), where the app reports what the driver finds wrong with it
	// (the pure core checks only the URL's form; app.CheckStore).
	StoreLine int
	Pipelines string // directory or glob, default ./pipelines
	Calendars string // directory, default ./calendars
	Server    Server
	Watchdog  Watchdog
	Rules     RuleSettings
	Triggers  Triggers
	Alerts    []Alert
	Source    Source
	// Retention is how long per-period history is kept (retention.go).
	Retention time.Duration
	// Maintenance are the recurring maintenance windows (maintenance.go).
	Maintenance []silence.Window
	// Telemetry is where traces go (telemetry.go).
	Telemetry Telemetry
}

// Store says which storage backend to use.
type Store struct {
	Driver string // StoreSQLite, StorePostgres or StoreDynamoDB
	// DSN is the SQLite file path, or the whole postgres:// or
	// dynamodb:// URL.
	DSN string
}

// Store drivers.
const (
	StoreSQLite   = "sqlite"
	StorePostgres = "postgres"
	// StoreDynamoDB is an AWS deployment's tables: a serve on them is
	// its control plane (the app checks the URL and the settings).
	StoreDynamoDB = "dynamodb"
)

// Watchdog configures the watchdog loop.
type Watchdog struct {
	Interval          time.Duration // default 5m
	StuckRunThreshold time.Duration // default 30m; job.stuckAfter overrides it
}

// RuleSettings configures the rules engine.
type RuleSettings struct {
	// MaxClockSkew: a timestamp further in the future fails age checks.
	MaxClockSkew time.Duration // default 5m
}

// Triggers configures the job triggers.
type Triggers struct {
	// AllowAddresses are the networks (and ports) HTTP-family jobs may
	// reach despite the SSRF guard.
	AllowAddresses []AllowAddress
}

// Settings defaults.
const (
	DefaultStore        = "sqlite:./interlock.db"
	DefaultPipelines    = "./pipelines"
	DefaultCalendars    = "./calendars"
	DefaultAddr         = "127.0.0.1:7070"
	DefaultMaxBodyBytes = 1 << 20
)

// DefaultSettings is what an empty interlock.yaml ({}) means.
func DefaultSettings() *Settings {
	return &Settings{
		Store:     Store{Driver: StoreSQLite, DSN: "./interlock.db"},
		Pipelines: DefaultPipelines,
		Calendars: DefaultCalendars,
		Server: Server{
			Addr:         DefaultAddr,
			EnvAllow:     slices.Clone(DefaultEnvAllow),
			MaxBodyBytes: DefaultMaxBodyBytes,
		},
		Watchdog:  Watchdog{Interval: 5 * time.Minute, StuckRunThreshold: 30 * time.Minute},
		Rules:     RuleSettings{MaxClockSkew: 5 * time.Minute},
		Retention: DefaultRetention,
	}
}

// PipelineOptions are the Options pipeline documents are checked against
// under these settings.
func (s *Settings) PipelineOptions(cals map[string]schedule.Calendar) Options {
	return Options{Calendars: cals, EnvAllow: slices.Clone(s.Server.EnvAllow), Retention: s.Retention}
}

type rawSettings struct {
	Store     *string      `yaml:"store"`
	Pipelines *string      `yaml:"pipelines"`
	Calendars *string      `yaml:"calendars"`
	Server    *rawServer   `yaml:"server"`
	Watchdog  *rawWatchdog `yaml:"watchdog"`
	Rules     *struct {
		MaxClockSkew *time.Duration `yaml:"maxClockSkew"`
	} `yaml:"rules"`
	Triggers *struct {
		AllowAddresses []string `yaml:"allowAddresses"`
	} `yaml:"triggers"`
	Alerts      []rawAlert       `yaml:"alerts"`
	Retention   *time.Duration   `yaml:"retention"`
	Maintenance []rawMaintenance `yaml:"maintenance"`
	Telemetry   *rawTelemetry    `yaml:"telemetry"`
}

type rawWatchdog struct {
	Interval          *time.Duration `yaml:"interval"`
	StuckRunThreshold *time.Duration `yaml:"stuckRunThreshold"`
}

// ParseSettings parses and validates interlock.yaml.
func ParseSettings(file string, data []byte) (*Settings, error) {
	s, err := parseFile(file, data, func(d *confdec.Decoder, root *yaml.Node) *Settings { return DecodeSettings(d, root, "") })
	if err != nil {
		return nil, err
	}
	s.Source.SHA256 = sha256Hex(data)
	return s, nil
}

// DecodeSettings validates the settings document at n, reporting errors
// to d under path; nil when it has errors.
func DecodeSettings(d *confdec.Decoder, n *yaml.Node, path string) *Settings {
	s := decodeDoc(d, n, path, "settings document", Options{}, (*builder).settings)
	if s == nil {
		return nil
	}
	s.Source.File = d.File
	return s
}

func (b *builder) settings(raw *rawSettings) *Settings {
	d := b.d
	s := DefaultSettings()
	if raw.Store != nil {
		s.Store = b.store(*raw.Store)
		s.StoreLine = d.Line(b.at("store"))
	}
	if raw.Pipelines != nil {
		s.Pipelines = b.dirOrGlob("pipelines", *raw.Pipelines)
	}
	if raw.Calendars != nil {
		s.Calendars = b.dirOrGlob("calendars", *raw.Calendars)
	}
	if raw.Server != nil {
		b.server(raw.Server, &s.Server)
	}
	if w := raw.Watchdog; w != nil {
		if w.Interval != nil {
			s.Watchdog.Interval = *w.Interval
			b.durationIn("watchdog.interval", *w.Interval, 10*time.Second, 24*time.Hour)
		}
		if w.StuckRunThreshold != nil {
			s.Watchdog.StuckRunThreshold = *w.StuckRunThreshold
			b.durationIn("watchdog.stuckRunThreshold", *w.StuckRunThreshold, minStuckAfter, maxLongDuration)
		}
	}
	if raw.Rules != nil && raw.Rules.MaxClockSkew != nil {
		s.Rules.MaxClockSkew = *raw.Rules.MaxClockSkew
		b.durationIn("rules.maxClockSkew", *raw.Rules.MaxClockSkew, 0, time.Hour)
	}
	if raw.Triggers != nil {
		for i, a := range raw.Triggers.AllowAddresses {
			if e, err := ParseAllowAddress(a); err == nil {
				s.Triggers.AllowAddresses = append(s.Triggers.AllowAddresses, e)
			} else {
				d.ErrorAt(confdec.Index(b.at("triggers.allowAddresses"), i), "%v", err)
			}
		}
	}
	if raw.Retention != nil {
		s.Retention = *raw.Retention
		b.retention(*raw.Retention)
	}
	for i, a := range raw.Alerts {
		s.Alerts = append(s.Alerts, b.alert(confdec.Index("alerts", i), a))
	}
	s.Maintenance = b.maintenance(raw.Maintenance)
	if raw.Telemetry != nil {
		s.Telemetry = b.telemetry(raw.Telemetry)
	}
	return s
}

// AllowAddress is one entry of triggers.allowAddresses: a network that
// HTTP-family jobs may reach despite the SSRF guard, on one port or on
// all of them. The guard (internal/trigger/httpx) also keeps a redirect
// within the entry that allowed the call's first request.
type AllowAddress struct {
	Prefix netip.Prefix // masked; a single address is its own /32 or /128
	Port   uint16       // 0: every port
}

// String is the entry as interlock.yaml writes it: 10.0.0.5,
// 10.20.0.0/16:443, fd00::/8, [::1]:8080, [fd00::/8]:443.
func (a AllowAddress) String() string {
	network := a.Prefix.String()
	if a.Prefix.IsSingleIP() {
		network = a.Prefix.Addr().String()
	}
	switch {
	case a.Port == 0:
		return network
	case a.Prefix.Addr().Is6():
		return "[" + network + "]:" + strconv.Itoa(int(a.Port))
	}
	return network + ":" + strconv.Itoa(int(a.Port))
}

// allowAddressForms is how an invalid entry's error says what is wanted.
const allowAddressForms = `want IP, IP:PORT, CIDR or CIDR:PORT, e.g. 10.0.0.5, 10.0.0.5:8080, 10.20.0.0/16, 10.20.0.0/16:443; ` +
	`IPv6 with a port in brackets, quoted: "[::1]:8080", "[fd00::/8]:443"`

// ParseAllowAddress reads an entry of triggers.allowAddresses. The forms
// are IP, IP:PORT, CIDR and CIDR:PORT; an IPv6 address or CIDR takes a
// port only in brackets ([::1]:8080, [fd00::/8]:443), so that a bare IPv6
// entry is always all address (::1:8080 is an address, not ::1 port 8080).
// A host part with bits set past the prefix length is masked
// (10.1.2.3/8 is 10.0.0.0/8). The error quotes the entry and says what is
// wanted.
func ParseAllowAddress(s string) (AllowAddress, error) {
	bad := func(why string) (AllowAddress, error) {
		return AllowAddress{}, fmt.Errorf("%q: %s", s, why)
	}
	if strings.Contains(s, "%") {
		return bad("an address with a zone (%eth0) cannot be allowed: write it without the zone")
	}
	if p, ok := parseNet(s); ok {
		return AllowAddress{Prefix: p}, nil
	}
	network, port, bracketed := s, "", false
	if rest, ok := strings.CutPrefix(s, "["); ok {
		inner, after, ok := strings.Cut(rest, "]")
		if !ok {
			return bad(allowAddressForms)
		}
		if after == "" {
			return bad("brackets are only for an IPv6 entry with a port: write " + inner + ", or [" + inner + "]:PORT")
		}
		if port, ok = strings.CutPrefix(after, ":"); !ok {
			return bad(allowAddressForms)
		}
		network, bracketed = inner, true
	} else if i := strings.LastIndexByte(s, ':'); i >= 0 {
		network, port = s[:i], s[i+1:]
	} else {
		return bad("not an IP address or CIDR: " + allowAddressForms)
	}
	p, ok := parseNet(network)
	switch {
	case !ok:
		return bad("not an IP address or CIDR: " + allowAddressForms)
	case bracketed && !p.Addr().Is6():
		return bad("brackets are for IPv6 only: write " + network + ":" + port)
	case !bracketed && p.Addr().Is6():
		return bad("an IPv6 entry with a port is written in brackets: \"[" + network + "]:" + port + "\"")
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 {
		return bad("port " + strconv.Quote(port) + " is not a port number (want 1 to 65535)")
	}
	return AllowAddress{Prefix: p, Port: uint16(n)}, nil
}

// parseNet reads a CIDR, or a single address as its own /32 or /128.
func parseNet(s string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(s); err == nil && a.Zone() == "" {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

func (b *builder) store(s string) Store {
	st, err := ParseStore(s)
	if err != nil {
		b.errorf("store", "%v", err)
	}
	return st
}

// ParseStore reads a store's text, as interlock.yaml's store: and serve's
// --store take it: sqlite:PATH, a dynamodb:// URL (an AWS deployment's
// tables, checked by the app that opens them), or a postgres://
// (postgresql://) URL whose form is checked without connecting
// (pgurl.Check: a scheme, a host, a database; the parameters only the
// driver knows are the app's to check, app.CheckStore, since the core
// links no driver). A password is refused: the text is in a
// file or on a command line others can read; the driver takes it from
// PGPASSWORD or a .pgpass file instead. On error the Store names the
// driver the text meant, if any.
func ParseStore(s string) (Store, error) {
	if p, ok := strings.CutPrefix(s, "sqlite:"); ok {
		if strings.TrimSpace(p) == "" {
			return Store{Driver: StoreSQLite}, errors.New("sqlite: needs a file path, e.g. sqlite:./interlock.db")
		}
		return Store{Driver: StoreSQLite, DSN: p}, nil
	}
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		if u, err := url.Parse(s); err == nil {
			if _, has := u.User.Password(); has || u.Query().Has("password") {
				return Store{Driver: StorePostgres}, errors.New("a password must not be written in the store URL: use PGPASSWORD or a .pgpass file")
			}
		}
		if err := pgurl.Check(s); err != nil {
			return Store{Driver: StorePostgres}, err
		}
		return Store{Driver: StorePostgres, DSN: s}, nil
	}
	if strings.HasPrefix(s, "dynamodb://") {
		return Store{Driver: StoreDynamoDB, DSN: s}, nil
	}
	return Store{}, fmt.Errorf("unknown store %q (want sqlite:PATH, postgres://user@host:port/database or dynamodb://PREFIX)", pgurl.Redact(s))
}

func (b *builder) dirOrGlob(field, s string) string {
	if strings.TrimSpace(s) == "" {
		b.errorf(field, "must not be empty")
	} else if _, err := filepath.Match(s, ""); err != nil {
		b.errorf(field, "malformed glob %q", s)
	}
	return s
}
