package postgres

import (
	"testing"

	"github.com/interlockhq/interlock/internal/store/storetest"
)

// TestFactsSnapshot: the batch of Facts reads one snapshot (its REPEATABLE
// READ transaction) while commits land between its statements.
func TestFactsSnapshot(t *testing.T) {
	storetest.FactsSnapshot(t, open(t, schemaURL(t)))
}
