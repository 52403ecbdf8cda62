package storetest

import (
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/silence"
	"github.com/interlockhq/interlock/internal/store"
)

// testSilences: a silence is a versioned record (created once, expired
// at the version read, so two operators expiring it at once record one
// expiry); the list keeps those ending at or after its bound, by their
// end — EndsAt, or ExpiredAt when earlier — and retention deletes a
// silence by that end, like an event of its time.
func testSilences(t *testing.T, o Options) {
	mk := func(id string, created, ends time.Duration) store.Silence {
		return store.Silence{Silence: silence.Silence{ID: id,
			Matchers: silence.Matchers{Pipelines: []string{"gold-*", "silver"}, Types: []event.Type{event.SLABreach},
				Levels: []event.Level{event.LevelError}, Owners: []string{"analytics"}},
			StartsAt: at(created), EndsAt: at(ends), Comment: "warehouse migration — ünïcode", CreatedBy: "token:ops",
			CreatedAt: at(created)}}
	}
	put := func(x store.Silence, expect int64) store.Change {
		return store.Change{Silences: []store.SilenceWrite{{Silence: x, ExpectVersion: expect}}}
	}
	ids := func(ss []store.Silence) []string {
		out := []string{}
		for _, s := range ss {
			out = append(out, s.ID)
		}
		return out
	}

	t.Run("RoundTripsAndVersions", func(t *testing.T) {
		s := o.New(t)
		_, err := s.SilenceGet(t.Context(), "s1")
		notFound(t, "SilenceGet before any write", err)
		x := mk("s1", 0, 2*time.Hour+7)
		commit(t, s, put(x, 0))
		x.Version = 1
		mustMatch(t, "SilenceGet", must(s.SilenceGet(t.Context(), "s1")).get(t), x)
		conflict(t, s, put(x, 0))
		x.ExpiredAt = at(time.Hour + 3)
		commit(t, s, put(x, 1))
		x.Version = 2
		mustMatch(t, "SilenceGet after expiry", must(s.SilenceGet(t.Context(), "s1")).get(t), x)
		conflict(t, s, put(x, 1))
		min := store.Silence{Silence: silence.Silence{ID: "s2", Matchers: silence.Matchers{Owners: []string{"o"}}, StartsAt: at(0), EndsAt: at(time.Hour), CreatedAt: at(0)}}
		commit(t, s, put(min, 0))
		min.Version = 1
		mustMatch(t, "SilenceGet of a silence with one matcher", must(s.SilenceGet(t.Context(), "s2")).get(t), min)
	})

	t.Run("OneExpiryAmongRacingOperators", func(t *testing.T) {
		s := o.New(t)
		commit(t, s, put(mk("s1", 0, time.Hour), 0))
		errs := race(t, 6, func(i int) error {
			x := mk("s1", 0, time.Hour)
			x.ExpiredAt = at(time.Duration(i+1) * time.Minute)
			return s.Commit(t.Context(), put(x, 1))
		})
		w := oneWinner(t, errs)
		got := must(s.SilenceGet(t.Context(), "s1")).get(t)
		if !got.ExpiredAt.Equal(at(time.Duration(w+1)*time.Minute)) || got.Version != 2 {
			t.Errorf("after the race: %+v, want the winner %d's expiry", got, w)
		}
	})

	t.Run("ListByEnd", func(t *testing.T) {
		s := o.New(t)
		a := mk("a", 2*time.Minute, time.Hour)    // ends at +1h
		b := mk("b", time.Minute, 3*time.Hour)    // ends at +3h, created first
		c := mk("c", 3*time.Minute, 5*time.Hour)  // expired at +30m
		d := mk("d", 3*time.Minute, 10*time.Hour) // created with c: by id
		c.ExpiredAt = at(30 * time.Minute)
		commit(t, s, store.Change{Silences: []store.SilenceWrite{{Silence: a}, {Silence: c}, {Silence: b}, {Silence: d}}})
		list := func(since time.Time) []string {
			return ids(must(s.SilenceList(t.Context(), store.SilenceListParams{EndedSince: since})).get(t))
		}
		mustMatch(t, "every silence", list(time.Time{}), []string{"b", "a", "c", "d"})
		mustMatch(t, "ending at or after +30m", list(at(30*time.Minute)), []string{"b", "a", "c", "d"})
		mustMatch(t, "ending after +30m (the expired one ended)", list(at(30*time.Minute+1)), []string{"b", "a", "d"})
		mustMatch(t, "ending at or after +1h (end inclusive)", list(at(time.Hour)), []string{"b", "a", "d"})
		mustMatch(t, "ending after +1h", list(at(time.Hour+1)), []string{"b", "d"})
		mustMatch(t, "none left", list(at(11*time.Hour)), []string{})
	})

	t.Run("ChangeTouchesASilenceOnce", func(t *testing.T) {
		s := o.New(t)
		x := mk("s1", 0, time.Hour)
		err := s.Commit(t.Context(), store.Change{Silences: []store.SilenceWrite{{Silence: x}, {Silence: x}}})
		if err == nil {
			t.Fatal("a change writing one silence twice was accepted")
		}
	})

	t.Run("Retention", func(t *testing.T) {
		s := o.New(t)
		old := mk("old", -50*time.Hour, -49*time.Hour)
		expired := mk("expired-early", -50*time.Hour, time.Hour) // ended long before its end
		expired.ExpiredAt = at(-49 * time.Hour)
		live := mk("live", -50*time.Hour, time.Hour)
		commit(t, s, store.Change{Silences: []store.SilenceWrite{{Silence: old}, {Silence: expired}, {Silence: live}}})
		cutoff := at(-48 * time.Hour)
		if o.TTL != nil {
			tc := ttlCheck{o.TTL}
			for _, x := range []store.Silence{old, expired, live} {
				tc.expiresLike(t, s, Record{Kind: "silence", Name: x.ID}, ofTime(x.End()))
			}
			return
		}
		res := must(s.Expire(t.Context(), store.ExpireParams{Before: cutoff, Limit: 100})).get(t)
		if res.Deleted["silences"] != 2 {
			t.Errorf("Expire deleted %v, want 2 silences", res.Deleted)
		}
		mustMatch(t, "silences kept", ids(must(s.SilenceList(t.Context(), store.SilenceListParams{})).get(t)), []string{"live"})
	})
}
