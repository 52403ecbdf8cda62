package rule

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/interlockhq/interlock/internal/sensor"
)

// ErrTimestamp is wrapped by every ParseTimestamp error.
var ErrTimestamp = errors.New("invalid timestamp")

// EpochMillisFrom is where epoch numbers switch from seconds to
// milliseconds: 1e12 is 2001-09-09 in milliseconds but year 33658 in
// seconds, so no plausible seconds value reaches it. Milliseconds before
// 2001-09-09 read as seconds land beyond year 9999 and are refused, not
// misread.
const EpochMillisFrom = 1e12

// maxEpochSeconds is 9999-12-31T23:59:59Z, as far as RFC3339 goes.
const maxEpochSeconds = 253402300799

var (
	// A timestamp at or before the Unix epoch is a writer's placeholder
	// (0, or Go's zero time "0001-01-01T00:00:00Z"), not a real update; taken
	// at face value it would make any age_gt pass.
	minTimestamp = time.Unix(0, 0).UTC()
	maxTimestamp = time.Unix(maxEpochSeconds, 999999999).UTC()

	errTooEarly = errors.New("is not after 1970-01-01T00:00:00Z (a placeholder, not an update time)")
	errTooLate  = errors.New("is after year 9999")
)

// ParseTimestamp is the one timestamp parser of the rules engine. It reads
//   - an RFC3339 string, with or without fractional seconds, any offset;
//   - epoch seconds or milliseconds, as a number or a numeric string: values
//     from EpochMillisFrom (1e12) up are milliseconds, below are seconds;
//     fractions are kept to the microsecond.
//
// The instant must fall after 1970-01-01T00:00:00Z and within year 9999.
// The result is in UTC. Errors wrap ErrTimestamp and name what was seen.
func ParseTimestamp(v sensor.Value) (time.Time, error) {
	ts, err := parseTimestamp(v)
	switch {
	case err != nil:
	case !ts.After(minTimestamp):
		err = errTooEarly
	case ts.After(maxTimestamp):
		err = errTooLate
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: %s %v", ErrTimestamp, describe(v), err)
	}
	return ts, nil
}

func parseTimestamp(v sensor.Value) (time.Time, error) {
	if s, ok := v.Str(); ok {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t.UTC(), nil
		}
	}
	x, ok := v.Numeric()
	if !ok {
		return time.Time{}, errors.New("is neither RFC3339 nor epoch seconds or milliseconds")
	}
	return fromEpoch(x)
}

// fromEpoch converts epoch seconds or milliseconds (see EpochMillisFrom).
// The range is checked first so the float-to-int conversions cannot
// overflow.
func fromEpoch(x float64) (time.Time, error) {
	if x <= 0 {
		return time.Time{}, errTooEarly
	}
	if x < EpochMillisFrom {
		if x > maxEpochSeconds+1 {
			return time.Time{}, errors.New("is after year 9999 as epoch seconds (milliseconds start at 1e12)")
		}
		sec := math.Floor(x)
		return time.Unix(int64(sec), int64(math.Round((x-sec)*1e6))*1e3).UTC(), nil
	}
	if x > (maxEpochSeconds+1)*1000 {
		return time.Time{}, errTooLate
	}
	sec := math.Floor(x / 1000)
	return time.Unix(int64(sec), int64(math.Round((x-sec*1000)*1e3))*1e3).UTC(), nil
}
