package schedule

import (
	"strings"

	"github.com/interlockhq/interlock/internal/sensor"
)

// SplitPeriodKey splits a per-period sensor key such as
// "hourly-status#20260303T07" or "daily-status#2026-03-03" into its base
// key and period. ok is false for keys without a '#', with an empty base,
// or whose suffix is not a period; such keys are ordinary keys.
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
