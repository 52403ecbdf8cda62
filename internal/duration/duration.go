// Package duration parses the duration strings used in configuration:
// Go syntax ("90s", "1h30m") plus whole days ("2d", "1d12h").
package duration

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// ErrSyntax is wrapped by every parse error.
var ErrSyntax = errors.New("invalid duration")

// maxDays keeps day counts well inside time.Duration's range (~292 years).
const maxDays = 36500

// Parse parses a duration. A leading "<N>d" gives whole days (24h each,
// not calendar days) and may be followed by Go duration syntax:
// "2d", "1d12h", "36h", "90s". Negative durations are refused: no
// configuration field takes one.
func Parse(s string) (time.Duration, error) {
	in := strings.TrimSpace(s)
	if in == "" {
		return 0, fmt.Errorf("%w: empty", ErrSyntax)
	}
	if strings.HasPrefix(in, "-") {
		return 0, fmt.Errorf("%w %q: must not be negative", ErrSyntax, s)
	}
	var total time.Duration
	rest := in
	if i := strings.IndexByte(rest, 'd'); i > 0 {
		days, err := strconv.Atoi(rest[:i])
		if err != nil || days < 0 || days > maxDays {
			return 0, fmt.Errorf("%w %q: want e.g. 2d, 36h, 1h30m", ErrSyntax, s)
		}
		total = time.Duration(days) * 24 * time.Hour
		rest = rest[i+1:]
		if rest == "" {
			return total, nil
		}
	}
	d, err := time.ParseDuration(rest)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%w %q: want e.g. 2d, 36h, 1h30m", ErrSyntax, s)
	}
	if d > math.MaxInt64-total {
		return 0, fmt.Errorf("%w %q: too long", ErrSyntax, s)
	}
	return total + d, nil
}

// Format renders d the way Parse reads it, using days when d is a whole
// number of days ("2d") and Go syntax otherwise.
func Format(d time.Duration) string {
	day := 24 * time.Hour
	if d > 0 && d%day == 0 {
		return strconv.FormatInt(int64(d/day), 10) + "d"
	}
	return d.String()
}
