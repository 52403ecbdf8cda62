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
// a suffix that has a period's shape but is not a period.
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
// that does not have a period's shape ("orders#eu", "part#42"). A suffix
// that has a period's shape (see PeriodShaped) must be a real period with
// a base key before the '#': "trig#20260230", "trig#20260310T24" and
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
		return "", Period{}, true, fmt.Errorf("key suffix #%s has a period's shape but is not a period: %w", suffix, err)
	}
	return key[:i], p, true, nil
}

// PeriodShaped reports whether a key suffix has the shape of a period, so
// that a malformed one is an error rather than part of a plain key:
//
//	DATE [ ("T" | "t") 1–2 digits ]
//	DATE = 8 digits (YYYYMMDD) | 4 digits "-" 1–2 digits "-" 1–2 digits
//
// "20260230", "20260310T24", "2026-3-9" and "2026-03-10T7" have it (and
// are refused, being no periods: days, months and hours are two digits);
// "eu", "v2", "42", "202603" (a month) and "2026031007" (no T) do not.
func PeriodShaped(s string) bool {
	date, hour, hasHour := strings.Cut(s, "T")
	if !hasHour {
		date, hour, hasHour = strings.Cut(s, "t")
	}
	if hasHour && !digitRun(hour, 1, 2) {
		return false
	}
	if digitRun(date, 8, 8) {
		return true
	}
	y, rest, ok1 := strings.Cut(date, "-")
	m, d, ok2 := strings.Cut(rest, "-")
	return ok1 && ok2 && digitRun(y, 4, 4) && digitRun(m, 1, 2) && digitRun(d, 1, 2)
}

// digitRun reports whether s is between lo and hi ASCII digits.
func digitRun(s string, lo, hi int) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	_, ok := digits(s)
	return ok
}

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

func newer(a, b sensor.Record) bool {
	if !a.ReceivedAt.Equal(b.ReceivedAt) {
		return a.ReceivedAt.After(b.ReceivedAt)
	}
	return a.Key > b.Key
}
