package pipeline

import (
	"errors"
	"fmt"
	"net/netip"
	"net/url"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/schedule"
)

// Settings is interlock.yaml (product spec §6), validated, defaults
// applied. Paths are as written; the app resolves relative ones.
type Settings struct {
	Store     Store
	Pipelines string // directory or glob, default ./pipelines
	Calendars string // directory, default ./calendars
	Server    Server
	Watchdog  Watchdog
	Rules     RuleSettings
	Triggers  Triggers
	Alerts    []Alert
	Source    Source
}

// Store says which storage backend to use.
type Store struct {
	Driver string // StoreSQLite or StorePostgres
	// DSN is the SQLite file path, or the whole postgres:// URL.
	DSN string
}

// Store drivers.
const (
	StoreSQLite   = "sqlite"
	StorePostgres = "postgres"
)

// ErrStoreUnavailable is wrapped by Available's error.
var ErrStoreUnavailable = errors.New("not available in this version")

// Available reports whether this build can open the store. It is the one
// place that says so, and loading interlock.yaml calls it, so `validate`,
// `serve` and `watchdog --once` refuse a PostgreSQL store with the same
// file:line: store: message. Remove the refusal when the store lands.
func (s Store) Available() error {
	if s.Driver == StorePostgres {
		return fmt.Errorf("the PostgreSQL store is %w: use sqlite:PATH (see the README's status table)", ErrStoreUnavailable)
	}
	return nil
}

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
	// AllowAddresses are the networks HTTP-family jobs may reach despite
	// the SSRF guard.
	AllowAddresses []netip.Prefix
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
		Watchdog: Watchdog{Interval: 5 * time.Minute, StuckRunThreshold: 30 * time.Minute},
		Rules:    RuleSettings{MaxClockSkew: 5 * time.Minute},
	}
}

// PipelineOptions are the Options pipeline documents are checked against
// under these settings.
func (s *Settings) PipelineOptions(cals map[string]schedule.Calendar) Options {
	return Options{Calendars: cals, EnvAllow: slices.Clone(s.Server.EnvAllow)}
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
	Alerts []rawAlert `yaml:"alerts"`
}

type rawWatchdog struct {
	Interval          *time.Duration `yaml:"interval"`
	StuckRunThreshold *time.Duration `yaml:"stuckRunThreshold"`
}

// ParseSettings parses and validates interlock.yaml.
func ParseSettings(file string, data []byte) (*Settings, error) {
	root, err := confdec.ParseDocument(file, data)
	if err != nil {
		return nil, err
	}
	d := confdec.NewDecoder(file)
	s := DecodeSettings(d, root, "")
	if err := d.Err(); err != nil {
		return nil, err
	}
	s.Source.SHA256 = sha256Hex(data)
	return s, nil
}

// DecodeSettings validates the settings document at n, reporting errors
// to d under path; nil when it has errors.
func DecodeSettings(d *confdec.Decoder, n *yaml.Node, path string) *Settings {
	before := d.ErrorCount()
	var raw rawSettings
	if !isMapping(d, n, path, "settings document") {
		return nil
	}
	d.Decode(n, path, &raw)
	b := &builder{d: d, path: path}
	s := DefaultSettings()
	if raw.Store != nil {
		s.Store = b.store(*raw.Store)
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
			if p, ok := parsePrefix(a); ok {
				s.Triggers.AllowAddresses = append(s.Triggers.AllowAddresses, p)
			} else {
				d.ErrorAt(confdec.Index(b.at("triggers.allowAddresses"), i), "%q is not a CIDR (10.20.0.0/16) or an IP address", a)
			}
		}
	}
	for i, a := range raw.Alerts {
		s.Alerts = append(s.Alerts, b.alert(confdec.Index("alerts", i), a))
	}
	if d.ErrorCount() > before {
		return nil
	}
	s.Source.File = d.File
	return s
}

// parsePrefix reads a CIDR, or a single address as its own /32 or /128.
func parsePrefix(s string) (netip.Prefix, bool) {
	if p, err := netip.ParsePrefix(s); err == nil {
		return p.Masked(), true
	}
	if a, err := netip.ParseAddr(s); err == nil {
		return netip.PrefixFrom(a, a.BitLen()), true
	}
	return netip.Prefix{}, false
}

func (b *builder) store(s string) Store {
	if p, ok := strings.CutPrefix(s, "sqlite:"); ok {
		if strings.TrimSpace(p) == "" {
			b.errorf("store", "sqlite: needs a file path, e.g. sqlite:./interlock.db")
		}
		return Store{Driver: StoreSQLite, DSN: p}
	}
	if strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://") {
		u, err := url.Parse(s)
		if err != nil {
			b.errorf("store", "invalid postgres URL: %v", err)
			return Store{Driver: StorePostgres}
		}
		if _, has := u.User.Password(); has {
			b.errorf("store", "a password must not be written in interlock.yaml: use PGPASSWORD or a .pgpass file")
		}
		st := Store{Driver: StorePostgres, DSN: s}
		if err := st.Available(); err != nil {
			b.errorf("store", "%v", err)
		}
		return st
	}
	b.errorf("store", "unknown store %q (want sqlite:PATH or postgres://…)", s)
	return Store{}
}

func (b *builder) dirOrGlob(field, s string) string {
	if strings.TrimSpace(s) == "" {
		b.errorf(field, "must not be empty")
	} else if _, err := filepath.Match(s, ""); err != nil {
		b.errorf(field, "malformed glob %q", s)
	}
	return s
}
