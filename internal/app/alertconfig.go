package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/alert"
	"github.com/interlockhq/interlock/internal/app/routing"
	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
)

// AlertSections are the parts of interlock.yaml an AWS deployment keeps
// as its stored alert config (ddbstore.AlertConfig).
var AlertSections = []string{"alerts", "maintenance"}

// AlertConfigOf checks the interlock.yaml file (data) exactly as serve
// does (pipeline.ParseSettings: errors name the file, the line and the
// field), refuses what a function cannot deliver (a file route: a
// function's disk is not kept), and returns its alerts: and maintenance:
// sections alone as YAML — what `interlock deploy-config` stores — with
// the settings they parse to. A file with neither section gives "" (no
// routes, no windows).
func AlertConfigOf(file string, data []byte) (string, *pipeline.Settings, error) {
	s, err := pipeline.ParseSettings(file, data)
	if err != nil {
		return "", nil, err
	}
	root, err := confdec.ParseDocument(file, data)
	if err != nil {
		return "", nil, err
	}
	var errs confdec.Errors
	keep := &yaml.Node{Kind: yaml.MappingNode}
	if root.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(root.Content); i += 2 {
			k, v := root.Content[i], root.Content[i+1]
			for _, name := range AlertSections {
				if k.Value == name {
					keep.Content = append(keep.Content, k, v)
				}
			}
			if k.Value == "alerts" && v.Kind == yaml.SequenceNode {
				for j, r := range v.Content {
					if line, ok := fileRoute(r); ok {
						errs = append(errs, confdec.Error{File: file, Line: line, Path: fmt.Sprintf("alerts[%d].type", j),
							Msg: "type file cannot be delivered on AWS (the alert-dispatcher's disk is not kept): use slack, webhook or console"})
					}
				}
			}
		}
	}
	if len(errs) > 0 {
		return "", nil, errs
	}
	if len(keep.Content) == 0 {
		return "", pipeline.DefaultSettings(), nil
	}
	var b bytes.Buffer
	enc := yaml.NewEncoder(&b)
	enc.SetIndent(2)
	if err := enc.Encode(keep); err != nil {
		return "", nil, fmt.Errorf("%s: alerts and maintenance: %w", file, err)
	}
	if err := enc.Close(); err != nil {
		return "", nil, err
	}
	// The sections alone must read as they did in the file (an alias to
	// an anchor elsewhere in it would not).
	if _, err := pipeline.ParseSettings(file+" (alerts: and maintenance: alone)", b.Bytes()); err != nil {
		return "", nil, err
	}
	return b.String(), s, nil
}

// fileRoute reports whether an alerts: entry is a file route, and the
// line of its type.
func fileRoute(n *yaml.Node) (int, bool) {
	if n.Kind != yaml.MappingNode {
		return 0, false
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == "type" && n.Content[i+1].Value == string(pipeline.AlertFile) {
			return n.Content[i+1].Line, true
		}
	}
	return 0, false
}

// StoredAlertConfig reads an AWS deployment's alert routes and
// maintenance windows: the record `interlock deploy-config` stored
// (ddbstore.AlertConfig), read at each call (one GetItem) and parsed once
// per version, or, while none is stored, Fallback (the functions'
// ALERTS_CONFIG; nil: no routes, no windows). It answers from the record
// it just read, never from memory: the cache saves a parse.
type StoredAlertConfig struct {
	Store    *ddbstore.Store
	Fallback *pipeline.Settings

	mu      sync.Mutex
	version int64
	parsed  *pipeline.Settings
}

// Settings returns the alerts: and maintenance: in force and the stored
// version they are (0: none is stored; the fallback's). A stored record
// that does not parse is an error naming it.
func (c *StoredAlertConfig) Settings(ctx context.Context) (*pipeline.Settings, int64, error) {
	rec, err := c.Store.AlertConfigGet(ctx)
	if errors.Is(err, store.ErrNotFound) {
		if c.Fallback != nil {
			return c.Fallback, 0, nil
		}
		return pipeline.DefaultSettings(), 0, nil
	}
	if err != nil {
		return nil, 0, fmt.Errorf("stored alert config: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.parsed != nil && c.version == rec.Version {
		return c.parsed, rec.Version, nil
	}
	s, err := rec.Settings()
	if err != nil {
		return nil, 0, err
	}
	c.parsed, c.version = s, rec.Version
	return s, rec.Version, nil
}

// Maintenance returns the windows in force (engine.Options.MaintenanceFrom).
func (c *StoredAlertConfig) Maintenance(ctx context.Context) ([]silence.Window, error) {
	s, _, err := c.Settings(ctx)
	if err != nil {
		return nil, err
	}
	return s.Maintenance, nil
}

// SinkStatus reports the deployment's alert sinks from its tables (a
// control plane delivers nothing): the stored routes' sinks first, then
// every other sink the dispatcher recorded (alert.StoredStatus).
func (c *StoredAlertConfig) SinkStatus(ctx context.Context) ([]alert.SinkStatus, error) {
	s, _, err := c.Settings(ctx)
	if err != nil {
		return nil, err
	}
	return alert.StoredStatus(ctx, c.Store, routing.Names(s.Alerts))
}

// DeadLetters lists the dead letters the deployment's dispatcher recorded.
func (c *StoredAlertConfig) DeadLetters(ctx context.Context) ([]alert.DeadLetter, error) {
	return alert.DeadLettersOf(ctx, c.Store)
}

// AlertConfigStore is where a deployment's alert config is kept (the
// DynamoDB store).
type AlertConfigStore interface {
	AlertConfigGet(context.Context) (ddbstore.AlertConfig, error)
	AlertConfigPut(context.Context, ddbstore.AlertConfig, int64) error
}

// StoreAlertConfig stores yaml (AlertConfigOf's, from file) as the
// deployment's alert config when it differs from the stored one: a new
// version, on the condition that the stored one is still the version
// read (another writer meanwhile: an error saying to run again). It
// returns the version in force and whether it stored one.
func StoreAlertConfig(ctx context.Context, st AlertConfigStore, file, yaml string, now time.Time) (int64, bool, error) {
	cur, err := st.AlertConfigGet(ctx)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return 0, false, fmt.Errorf("read the stored alert config: %w", err)
	}
	if err == nil && cur.YAML == yaml {
		return cur.Version, false, nil
	}
	sum := sha256.Sum256([]byte(yaml))
	next := ddbstore.AlertConfig{YAML: yaml, Source: file, SHA256: hex.EncodeToString(sum[:]), StoredAt: now}
	if err := st.AlertConfigPut(ctx, next, cur.Version); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return 0, false, fmt.Errorf("store the alert config: another deploy-config stored one meanwhile; run again: %w", err)
		}
		return 0, false, fmt.Errorf("store the alert config: %w", err)
	}
	return cur.Version + 1, true, nil
}
