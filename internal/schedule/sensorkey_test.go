package schedule

import (
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/sensor"
)

func TestSplitPeriodKey(t *testing.T) {
	cases := []struct {
		key    string
		base   string
		period string // "" when ok is false
	}{
		{"hourly-status#20260303T07", "hourly-status", "2026-03-03T07"},
		{"hourly-status#2026-03-03T07", "hourly-status", "2026-03-03T07"},
		{"daily-status#20260303", "daily-status", "2026-03-03"},
		{"daily-status#2026-03-03", "daily-status", "2026-03-03"},
		{"a#b#2026-03-03", "a#b", "2026-03-03"},
		{"daily-status", "", ""},
		{"daily-status#", "", ""},
		{"#2026-03-03", "", ""},
		{"daily-status#latest", "", ""},
		{"daily-status#2026-02-30", "", ""},
		{"hourly-status#20260303T24", "", ""},
	}
	for _, c := range cases {
		t.Run(c.key, func(t *testing.T) {
			base, p, ok := SplitPeriodKey(c.key)
			if ok != (c.period != "") {
				t.Fatalf("SplitPeriodKey(%q) ok = %v", c.key, ok)
			}
			if ok && (base != c.base || p.String() != c.period) {
				t.Fatalf("SplitPeriodKey(%q) = %q, %s; want %q, %s", c.key, base, p, c.base, c.period)
			}
		})
	}
}

func TestRemapForPeriod(t *testing.T) {
	t0 := time.Date(2026, 3, 3, 8, 0, 0, 0, time.UTC)
	rec := func(key string, count int64, age time.Duration) sensor.Record {
		return sensor.Record{
			Key:        key,
			Data:       sensor.NewObject(map[string]sensor.Value{"count": sensor.IntValue(count)}),
			ReceivedAt: t0.Add(-age),
		}
	}
	records := []sensor.Record{
		rec("hourly-status", 1, 0),
		rec("hourly-status#20260303T07", 7, 0),
		rec("hourly-status#2026-03-03T08", 8, 0),
		rec("daily-status#20260303", 30, 0),
		rec("daily-status#2026-03-02", 20, 0),
		rec("plain", 99, 0),
	}
	cases := []struct {
		name   string
		period string
		want   map[string]string // exposed key → original key
		absent []string
	}{
		{
			name:   "hourly period: alias overrides the base record",
			period: "2026-03-03T07",
			want: map[string]string{
				"hourly-status": "hourly-status#20260303T07", "hourly-status#20260303T07": "hourly-status#20260303T07",
				"hourly-status#2026-03-03T08": "hourly-status#2026-03-03T08", "plain": "plain",
			},
			absent: []string{"daily-status"},
		},
		{
			name:   "dashed suffix",
			period: "2026-03-03T08",
			want:   map[string]string{"hourly-status": "hourly-status#2026-03-03T08"},
			absent: []string{"daily-status"},
		},
		{
			name:   "daily period ignores hourly suffixes",
			period: "2026-03-03",
			want:   map[string]string{"hourly-status": "hourly-status", "daily-status": "daily-status#20260303"},
		},
		{
			name:   "other periods are not exposed",
			period: "2026-03-04",
			want:   map[string]string{"hourly-status": "hourly-status", "daily-status#2026-03-02": "daily-status#2026-03-02"},
			absent: []string{"daily-status"},
		},
		{
			name:   "hourly period ignores daily suffixes of its date",
			period: "2026-03-03T09",
			want:   map[string]string{"hourly-status": "hourly-status"},
			absent: []string{"daily-status"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := RemapForPeriod(records, mustPeriod(t, c.period))
			for key, from := range c.want {
				r, ok := got[key]
				if !ok || r.Key != from {
					t.Errorf("%s exposes %q from %q, want from %q", c.period, key, r.Key, from)
				}
			}
			for _, key := range c.absent {
				if r, ok := got[key]; ok {
					t.Errorf("%s exposes %q (from %q), want nothing", c.period, key, r.Key)
				}
			}
			for _, r := range records {
				if _, ok := got[r.Key]; !ok {
					t.Errorf("record %q is missing under its own key", r.Key)
				}
			}
		})
	}
}

func TestRemapForPeriodBothSpellings(t *testing.T) {
	t0 := time.Date(2026, 3, 3, 8, 0, 0, 0, time.UTC)
	older := sensor.Record{Key: "s#2026-03-03", ReceivedAt: t0}
	newer := sensor.Record{Key: "s#20260303", ReceivedAt: t0.Add(time.Minute)}
	for _, order := range [][]sensor.Record{{older, newer}, {newer, older}} {
		got := RemapForPeriod(order, mustPeriod(t, "2026-03-03"))
		if got["s"].Key != newer.Key {
			t.Fatalf("base key exposes %q, want the later-received %q", got["s"].Key, newer.Key)
		}
	}
}

// TestPeriodShaped pins which key suffixes are read as periods: those
// that start like a date (six or more digits, or four digits, a
// separator and a digit). Anything else after '#' is part of a plain key.
func TestPeriodShaped(t *testing.T) {
	for _, c := range []struct {
		suffix string
		want   bool
	}{
		{"20260310", true},
		{"2026-03-10", true},
		{"20260310T07", true},
		{"2026-03-10T07", true},
		{"20260230", true},    // shaped, not a date
		{"20260310T24", true}, // shaped, not an hour
		{"20260310T7", true},  // one-digit hour
		{"2026-3-9", true},    // one-digit month and day
		{"20260310t07", true}, // lowercase t
		{"99991231", true},    // a real date, far ahead
		{"12345678", true},    // eight digits are read as a date
		// Near misses of a period, found by a black-box review: each
		// was a plain key, so today's run started.
		{"2026-11-23T05:00", true},
		{"2026-11-25T", true},
		{"20261125T05Z", true},
		{"2026-11-25 05", true},
		{"2026112", true},   // seven digits
		{"202611250", true}, // nine digits
		{"2026/11/25", true},
		{"2026.11.25", true},
		{"2026_11_25", true},
		{"202603", true},     // a month: no period, refused
		{"2026-03", true},    // the same, dashed
		{"2026031007", true}, // ten digits, no T
		{"20260310T", true},
		{"20260310T123", true},
		{"2026-03-10-eu", true},
		{"20260310-eu", true},
		{"eu", false},      // a region
		{"v2", false},      // a version
		{"42", false},      // a shard
		{"12345", false},   // five digits
		{"2026", false},    // a year alone
		{"2026-Q1", false}, // a quarter
		{"2026-W05", false},
		{"2026-", false},
		{"eu-20260310", false},
		{"", false},
		{"T07", false},
		{"latest", false},
		{"２０２６０３１０", false}, // full-width digits are not digits here
	} {
		t.Run(c.suffix, func(t *testing.T) {
			if got := PeriodShaped(c.suffix); got != c.want {
				t.Fatalf("PeriodShaped(%q) = %v, want %v", c.suffix, got, c.want)
			}
		})
	}
}

// TestPeriodKey: a key being written names a period when its suffix has
// a period's shape, and then it must be a real one; other keys are plain.
func TestPeriodKey(t *testing.T) {
	for _, c := range []struct {
		key     string
		named   bool
		period  string // when named and valid
		wantErr string // when named and invalid
	}{
		{key: "trig#20260310", named: true, period: "2026-03-10"},
		{key: "trig#2026-03-10T07", named: true, period: "2026-03-10T07"},
		{key: "a#b#20260310", named: true, period: "2026-03-10"},
		{key: "trig", named: false},
		{key: "orders#eu", named: false},
		{key: "orders#20260310#eu", named: false}, // the last '#' decides
		{key: "trig#", named: false},
		{key: "trig#20260230", named: true, wantErr: `#20260230 starts like a date but is not a period`},
		{key: "trig#2026-11-23T05:00", named: true, wantErr: `#2026-11-23T05:00 starts like a date but is not a period`},
		{key: "trig#2026/11/25", named: true, wantErr: `want YYYY-MM-DD or YYYYMMDD`},
		{key: "trig#2026112", named: true, wantErr: `#2026112 starts like a date`},
		{key: "trig#2026-Q1", named: false},
		{key: "part#12345", named: false},
		{key: "trig#20260310T24", named: true, wantErr: `hour must be two digits, 00 to 23`},
		{key: "trig#20260310T7", named: true, wantErr: `hour must be two digits`},
		{key: "trig#2026-3-9", named: true, wantErr: `want YYYY-MM-DD or YYYYMMDD`},
		{key: "#20260310", named: true, wantErr: `no base key`},
	} {
		t.Run(c.key, func(t *testing.T) {
			base, p, named, err := PeriodKey(c.key)
			if named != c.named {
				t.Fatalf("PeriodKey(%q) named = %v, want %v", c.key, named, c.named)
			}
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) || !errors.Is(err, ErrSyntax) {
					t.Fatalf("PeriodKey(%q) error = %v, want ErrSyntax mentioning %q", c.key, err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("PeriodKey(%q): %v", c.key, err)
			}
			if named && (p.String() != c.period || base+"#" != c.key[:len(base)+1]) {
				t.Fatalf("PeriodKey(%q) = %q, %s; want period %s", c.key, base, p, c.period)
			}
		})
	}
}

// TestPeriodKeysSuffice checks what a decision's scoped read relies on:
// for any stored sensors, RemapForPeriod of the PeriodKeys of a key alone
// exposes under that key exactly what RemapForPeriod of everything does.
// The stored keys mix plain keys, both spellings of several days and
// hours, keys whose base holds a '#' or is itself per-period, and
// suffixes that are no period; receive times collide on purpose.
func TestPeriodKeysSuffice(t *testing.T) {
	t0 := time.Date(2026, 3, 3, 8, 0, 0, 0, time.UTC)
	bases := []string{"a", "a#b", "a#2026-03-03", "ab", "a#latest"}
	suffixes := []string{"", "#2026-03-03", "#20260303", "#2026-03-02", "#20260302",
		"#2026-03-03T07", "#20260303T07", "#2026-03-03T08", "#latest", "#2026-13-03"}
	var keys []string
	for _, b := range bases {
		for _, s := range suffixes {
			keys = append(keys, b+s)
		}
	}
	periods := []Period{Daily(Date{2026, 3, 3}), Daily(Date{2026, 3, 2}), HourlyPeriod(Date{2026, 3, 3}, 7), HourlyPeriod(Date{2026, 3, 3}, 9)}
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		var records []sensor.Record
		for _, k := range keys {
			if rng.IntN(3) == 0 {
				continue
			}
			records = append(records, sensor.Record{Key: k, ReceivedAt: t0.Add(time.Duration(rng.IntN(3)) * time.Minute)})
		}
		for _, p := range periods {
			all := RemapForPeriod(records, p)
			for _, k := range keys {
				want := PeriodKeys(k, p)
				var scoped []sensor.Record
				for _, r := range records {
					if slices.Contains(want, r.Key) {
						scoped = append(scoped, r)
					}
				}
				got, gotOK := RemapForPeriod(scoped, p)[k]
				exp, expOK := all[k]
				if gotOK != expOK || got.Key != exp.Key {
					t.Fatalf("round %d, period %s, key %q: scoped read exposes %q (%v), the full read %q (%v)", round, p, k, got.Key, gotOK, exp.Key, expOK)
				}
			}
		}
	}
}
