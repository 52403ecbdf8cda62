package rule

import (
	"github.com/interlockhq/interlock/internal/textsafe"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/sensor"
)

// maxShown bounds how much of a string a reason quotes: reasons end up in
// events and alerts, and sensor strings can be arbitrarily long.
const maxShown = 64

// describe names a value with its type, for reasons where the type matters:
// `string "abc"`, `number 5`, `bool true`, `null`, `object`.
func describe(v sensor.Value) string {
	switch v.Kind() {
	case sensor.Null:
		return "null"
	case sensor.ObjectKind, sensor.Array:
		return v.Kind().String() // contents could be huge and say nothing useful
	}
	return v.Kind().String() + " " + show(v)
}

// show renders a scalar as it would be written: strings quoted (and
// shortened), numbers as sent.
func show(v sensor.Value) string {
	s, ok := v.Str()
	if !ok {
		if k := v.Kind(); k == sensor.ObjectKind || k == sensor.Array {
			return k.String()
		}
		return v.String()
	}
	if len(s) > maxShown {
		return strconv.Quote(textsafe.Prefix(s, maxShown)) + textsafe.Mark
	}
	return strconv.Quote(s)
}

// human renders a duration for people: "3h12m", "2h", "45s", "250ms".
// time.Duration.String would say "3h12m0s".
func human(d time.Duration) string {
	if d < 0 {
		if d == math.MinInt64 { // -d would overflow back to itself
			return d.String()
		}
		return "-" + human(-d)
	}
	if d < time.Second {
		return d.String()
	}
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
