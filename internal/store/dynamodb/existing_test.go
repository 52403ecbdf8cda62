//go:build terraformtables

// Built only with the tag terraformtables, which deploy's
// TestTerraformModule passes when it runs this test on the tables
// Terraform made: in an ordinary run it is not there to be skipped.

package dynamodb

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/store"
	"github.com/interlockhq/interlock/internal/store/storetest"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
)

// EnvExistingTables names the prefix of four tables made by someone else
// (the Terraform module, in deploy's TestTerraformModule) for
// TestConformanceOnTables.
const EnvExistingTables = "INTERLOCK_TEST_DYNAMODB_TABLES"

// TestConformanceOnTables runs the conformance suite on existing tables
// (TablesFor(prefix)), creating none: each subtest empties them first.
// It proves tables made outside CreateTables are the ones the code needs.
// INTERLOCK_TEST_DYNAMODB_TABLES names the prefix.
func TestConformanceOnTables(t *testing.T) {
	prefix := os.Getenv(EnvExistingTables)
	if prefix == "" {
		t.Fatal(EnvExistingTables + " names no tables (deploy's TestTerraformModule sets it)")
	}
	c := ddblocal.Client(t)
	tables := TablesFor(prefix)
	newStore := func(t *testing.T) store.Store {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := emptyTables(ctx, c, tables); err != nil {
			t.Fatalf("empty the tables of %s: %v", prefix, err)
		}
		return openOn(t, c, tables)
	}
	storetest.RunWithOptions(t, storetest.Options{
		New: newStore,
		Reopen: func(t *testing.T, s store.Store) store.Store {
			if err := s.Close(); err != nil {
				t.Fatalf("Close: %v", err)
			}
			return openOn(t, c, tables)
		},
		TTL: &storetest.TTLOptions{Retention: testRetention, ExpiresAt: expiresAt},
	})
}
