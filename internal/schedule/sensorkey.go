package schedule

import (
	"fmt"
	"strings"

	"github.com/interlockhq/interlock/internal/sensor"
)

// SplitPeriodKey splits a per-period sensor key such as
// "hourly-status#20260303T07" or "daily-status#2026-03-03" into its base
// key and period. ok is false for keys without a '#', with an empty base,
// or whose suffix is not a period; such keys are ordinary keys. It reads
// stored keys; a key being written goes through PeriodKey, which refuses
// a suffix that starts like a date but is not a period.
func SplitPeriodKey(key string) (base string, p Period, ok bool) {
	i := strings.LastIndexByte(key, '#')
	if i <= 0 {
		return "", Period{}, false
	}
	p, err := ParsePeriod(key[i+1:])
	if err != nil {
		return "", Period{}, false
	}
	return key[:i], p, true
}

// PeriodKey reads the period a sensor key names, for a key being written.
// named is false for a plain key: no '#', or a suffix after the last '#'
// that does not start like a date ("orders#eu", "part#42", "sales#2026-Q1").
// A suffix that starts like a date (see PeriodShaped) must be a real
// period with a base key before the '#': "trig#20260230",
// "trig#20260310T24", "trig#2026-11-25T05:00", "trig#2026/11/25" and
// "#20260310" are errors, never plain keys whose period would silently
// become today's.
func PeriodKey(key string) (base string, p Period, named bool, err error) {
	i := strings.LastIndexByte(key, '#')
	if i < 0 || !PeriodShaped(key[i+1:]) {
		return "", Period{}, false, nil
	}
	suffix := key[i+1:]
	if i == 0 {
		return "", Period{}, true, fmt.Errorf("%w: key suffix #%s names a period but no base key comes before the '#'", ErrSyntax, suffix)
	}
	p, err = ParsePeriod(suffix)
	if err != nil {
		return "", Period{}, true, fmt.Errorf("key suffix #%s starts like a date but is not a period: %w", suffix, err)
	}
	return key[:i], p, true, nil
}

// PeriodShaped reports whether a key suffix starts like a date, so that
// one that does but is no period is an error rather than part of a plain
// key (where it would be today's data, and a trigger's):
//
//	six or more ASCII digits, then anything
//	four ASCII digits, one of - / . _ or a space, a digit, then anything
//
// "20260310", "2026031", "202611250", "202603" (a month: Interlock has no
// month periods), "20261125T05Z", "2026-11-25T", "2026-11-25T05:00",
// "2026/11/25", "2026-3-9" and "2026-03-10-eu" start like a date, and only
// the real periods among them are accepted. "eu", "v2", "42", "12345",
// "2026", "2026-Q1", "T07" and "latest" do not: they are plain keys.
func PeriodShaped(s string) bool {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	if n >= 6 {
		return true
	}
	return n == 4 && len(s) > 5 && strings.IndexByte("-/._ ", s[4]) >= 0 && isDigit(s[5])
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// RemapForPeriod is the view of a pipeline's sensors that rules evaluate
// for period p. Every record appears under its own key. A record whose key
// carries p's suffix, in either spelling, also appears under its base key,
// replacing any record stored under the base key itself: the per-period
// sensor is the more specific statement about p. The exposed record keeps
// its original Key, so explanations can say where a value came from.
//
// Matching is by period, not by text: an hourly suffix never matches a
// daily period or the reverse, and records for other periods stay under
// their own keys only. If both spellings of the same suffix exist, the one
// received last wins (ties go to the greater key, to stay deterministic).
func RemapForPeriod(records []sensor.Record, p Period) map[string]sensor.Record {
	out := make(map[string]sensor.Record, len(records))
	for _, r := range records {
		out[r.Key] = r
	}
	aliased := map[string]sensor.Record{}
	for _, r := range records {
		base, q, ok := SplitPeriodKey(r.Key)
		if !ok || q != p {
			continue
		}
		if prev, seen := aliased[base]; seen && !newer(r, prev) {
			continue
		}
		aliased[base] = r
	}
	for base, r := range aliased {
		out[base] = r
	}
	return out
}

// PeriodKeys lists the stored keys RemapForPeriod reads to expose key in
// period p: key itself and key with p's suffix in either spelling
// ("orders", "orders#2026-03-10", "orders#20260310"). A period has
// exactly these two spellings (ParsePeriod reads no other), so a read of
// these keys alone gives RemapForPeriod's answer for key, whatever else
// is stored: that is what lets a decision read its rule keys by primary
// key instead of every sensor the pipeline ever received.
func PeriodKeys(key string, p Period) []string {
	return []string{key, key + "#" + p.String(), key + "#" + p.Compact()}
}

func newer(a, b sensor.Record) bool {
	if !a.ReceivedAt.Equal(b.ReceivedAt) {
		return a.ReceivedAt.After(b.ReceivedAt)
	}
	return a.Key > b.Key
}
