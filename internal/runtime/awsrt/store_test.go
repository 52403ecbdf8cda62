package awsrt

import (
	"testing"

	"github.com/interlockhq/interlock/internal/store"
)

// newStore is the store the AWS functions use in tests.
func newStore(t *testing.T) store.Store { return sqliteStore(t) }
