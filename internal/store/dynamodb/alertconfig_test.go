package dynamodb

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/store"
)

// TestAlertConfigIsVersioned: none stored reads as not found; each put
// is the version after the one it expects, and a put expecting a version
// that is no longer stored (another writer came first) is a conflict that
// changes nothing; the record reads back whole and parses.
func TestAlertConfigIsVersioned(t *testing.T) {
	ctx := t.Context()
	s := newStore(t)
	if _, err := s.AlertConfigGet(ctx); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("nothing stored: %v, want ErrNotFound", err)
	}
	at := time.Date(2026, 3, 10, 7, 0, 0, 0, time.UTC)
	v1 := AlertConfig{YAML: "alerts:\n  - {type: console}\n", Source: "interlock.yaml", SHA256: "abc", StoredAt: at}
	if err := s.AlertConfigPut(ctx, v1, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.AlertConfigPut(ctx, AlertConfig{YAML: "alerts: []\n"}, 0); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a second first version: %v, want ErrConflict", err)
	}
	got, err := s.AlertConfigGet(ctx)
	if err != nil || got.Version != 1 || got.YAML != v1.YAML || got.Source != "interlock.yaml" || got.SHA256 != "abc" || !got.StoredAt.Equal(at) {
		t.Fatalf("read back %+v (%v), want v1 as stored", got, err)
	}
	if st, err := got.Settings(); err != nil || len(st.Alerts) != 1 {
		t.Fatalf("v1 parses to %+v (%v)", st, err)
	}
	v2 := AlertConfig{YAML: "maintenance:\n  - {name: m, cron: \"0 2 * * *\", duration: 1h, pipelines: [\"*\"]}\n", Source: "interlock.yaml"}
	if err := s.AlertConfigPut(ctx, v2, 1); err != nil {
		t.Fatal(err)
	}
	if err := s.AlertConfigPut(ctx, v1, 1); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("a put expecting v1 after v2: %v, want ErrConflict", err)
	}
	if got, err := s.AlertConfigGet(ctx); err != nil || got.Version != 2 || got.YAML != v2.YAML {
		t.Fatalf("after v2: %+v (%v)", got, err)
	}
	bad := AlertConfig{Version: 3, YAML: "alerts:\n  - {type: slack}\n", Source: "interlock.yaml"}
	if _, err := bad.Settings(); err == nil || !containsAll(err.Error(), "interlock.yaml (stored alert config v3)", "channel") {
		t.Errorf("a record that does not parse: %v, want an error naming the record and the field", err)
	}
}

func containsAll(s string, parts ...string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}
