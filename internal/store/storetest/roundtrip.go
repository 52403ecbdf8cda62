package storetest

import (
	"testing"

	"github.com/interlockhq/interlock/internal/store"
)

// testRoundTrip is a group's RoundTripsEveryField case, the same for each
// kind of record: want, built by the fixture function named fixture, must
// set every field (requireAllSet), is committed to a new store by write
// and must come back whole from read. stored, when not nil, sets on want
// what the store itself sets on that first write (a Version of 1).
func testRoundTrip[T any](t *testing.T, o Options, fixture string, want T, write func(T) store.Change,
	read func(t *testing.T, s store.Store) (T, error), stored func(*T)) {
	t.Run("RoundTripsEveryField", func(t *testing.T) {
		requireAllSet(t, fixture, want)
		s := o.New(t)
		commit(t, s, write(want))
		if stored != nil {
			stored(&want)
		}
		mustMatch(t, "the "+fixture+" read back", must(read(t, s)).get(t), want)
	})
}
