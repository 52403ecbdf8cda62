package schedule

import (
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
