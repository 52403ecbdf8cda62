package dynamodb

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/pipeline"
)

// The project's alert routes and maintenance windows on an AWS deployment
// (docs/aws.md, "The alert dispatcher"): interlock.yaml's alerts: and
// maintenance: sections as `interlock deploy-config` stored them, one
// versioned record in the control table under PROJECT / ALERTS, with no
// ttl. The alert-dispatcher routes by it, and the functions' engines and
// a control plane take its windows; the control table's stream carries
// its changes to the sla-monitor (AlertConfigItem), which arms the
// windows' end timers.

const (
	pkProject     = "PROJECT"
	skAlertConfig = "ALERTS"
)

// AlertConfig is the stored record: the two sections as YAML (what
// pipeline.ParseSettings reads), the file they came from, and when and by
// which version they were stored.
type AlertConfig struct {
	Version  int64 // 1 for the first stored; each change adds one
	YAML     string
	Source   string // the interlock.yaml they came from, as given to deploy-config
	SHA256   string // of YAML
	StoredAt time.Time
}

// Name is how errors and logs name the record: the source file and the
// version.
func (c AlertConfig) Name() string {
	return fmt.Sprintf("%s (stored alert config v%d)", c.Source, c.Version)
}

// Settings parses the record as interlock.yaml is parsed (errors name the
// record, the line and the field). Only alerts: and maintenance: are set.
func (c AlertConfig) Settings() (*pipeline.Settings, error) {
	if strings.TrimSpace(c.YAML) == "" {
		return pipeline.DefaultSettings(), nil
	}
	return pipeline.ParseSettings(c.Name(), []byte(c.YAML))
}

func alertConfigItem(c AlertConfig) *itemWriter {
	w := newItem(pkProject, skAlertConfig)
	w.num(aVersion, c.Version)
	w.str("yaml", c.YAML)
	w.str("source", c.Source)
	w.str("sha256", c.SHA256)
	w.time("storedAt", c.StoredAt)
	return w
}

func decodeAlertConfig(it item) (AlertConfig, error) {
	r := readItem(it)
	c := AlertConfig{Version: r.num(aVersion), YAML: r.str("yaml"), Source: r.str("source"), SHA256: r.str("sha256"), StoredAt: r.time("storedAt")}
	return c, r.err
}

// AlertConfigGet reads the stored alert config; store.ErrNotFound when
// none was ever stored.
func (s *Store) AlertConfigGet(ctx context.Context) (AlertConfig, error) {
	return getAs(ctx, s, s.t.Control, pkProject, skAlertConfig, decodeAlertConfig)
}

// AlertConfigPut stores c as the version after expect (0: none is stored
// yet), on the condition that the stored one is still version expect:
// store.ErrConflict when another writer stored one meanwhile.
func (s *Store) AlertConfigPut(ctx context.Context, c AlertConfig, expect int64) error {
	c.Version = expect + 1
	cond, v := versionCond(expect)
	a, err := put(s.t.Control, "alert config", alertConfigItem(c), cond, v)
	if err != nil {
		return err
	}
	return s.appendEvents(ctx, []action{a}, nil, false)
}
