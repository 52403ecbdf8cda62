package rule

import (
	"errors"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/sensor"
)

func TestParseTimestamp(t *testing.T) {
	str := sensor.StringValue
	num := sensor.NumberValue
	at := func(s string) time.Time {
		t.Helper()
		ts, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			t.Fatal(err)
		}
		return ts.UTC()
	}
	cases := []struct {
		name string
		in   sensor.Value
		want time.Time
	}{
		{"RFC3339 UTC", str("2026-03-10T07:00:00Z"), at("2026-03-10T07:00:00Z")},
		{"RFC3339 with offset", str("2026-03-10T09:30:00+02:00"), at("2026-03-10T07:30:00Z")},
		{"RFC3339 negative offset", str("2026-03-10T02:00:00-05:00"), at("2026-03-10T07:00:00Z")},
		{"RFC3339 fractional seconds", str("2026-03-10T07:00:00.123456789Z"), at("2026-03-10T07:00:00.123456789Z")},
		{"epoch seconds number", sensor.IntValue(1773126000), at("2026-03-10T07:00:00Z")},
		{"epoch seconds string", str("1773126000"), at("2026-03-10T07:00:00Z")},
		{"epoch seconds fraction", num(1773126000.25), at("2026-03-10T07:00:00.25Z")},
		{"epoch milliseconds number", sensor.IntValue(1773126000123), at("2026-03-10T07:00:00.123Z")},
		{"epoch milliseconds string", str("1773126000123"), at("2026-03-10T07:00:00.123Z")},
		{"epoch milliseconds string with spaces", str(" 1773126000123 "), at("2026-03-10T07:00:00.123Z")},
		{"epoch milliseconds fraction", num(1773126000123.5), at("2026-03-10T07:00:00.1235Z")},
		{"cut-off 1e12 is milliseconds", num(1e12), at("2001-09-09T01:46:40Z")},
		{"first second after the epoch", sensor.IntValue(1), at("1970-01-01T00:00:01Z")},
		{"RFC3339 just after the epoch", str("1970-01-01T00:00:01Z"), at("1970-01-01T00:00:01Z")},
		{"last second as seconds", sensor.IntValue(253402300799), at("9999-12-31T23:59:59Z")},
		{"last millisecond as milliseconds", sensor.IntValue(253402300799999), at("9999-12-31T23:59:59.999Z")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseTimestamp(c.in)
			if err != nil {
				t.Fatalf("ParseTimestamp(%v): %v", c.in, err)
			}
			if !got.Equal(c.want) || got.Location() != time.UTC {
				t.Fatalf("ParseTimestamp(%v) = %v, want %v in UTC", c.in, got, c.want)
			}
		})
	}
}

func TestParseTimestampErrors(t *testing.T) {
	str := sensor.StringValue
	cases := []struct {
		name string
		in   sensor.Value
		want string // the whole message: it must name what was seen
	}{
		{"word", str("yesterday"), `invalid timestamp: string "yesterday" is neither RFC3339 nor epoch seconds or milliseconds`},
		{"empty string", str(""), `invalid timestamp: string "" is neither RFC3339 nor epoch seconds or milliseconds`},
		{"date only", str("2026-03-10"), `invalid timestamp: string "2026-03-10" is neither RFC3339 nor epoch seconds or milliseconds`},
		{"RFC3339 lowercase t", str("2026-03-10t07:00:00Z"), `invalid timestamp: string "2026-03-10t07:00:00Z" is neither RFC3339 nor epoch seconds or milliseconds`},
		{"hex string", str("0x69AFC270"), `invalid timestamp: string "0x69AFC270" is neither RFC3339 nor epoch seconds or milliseconds`},
		{"bool", sensor.BoolValue(true), `invalid timestamp: bool true is neither RFC3339 nor epoch seconds or milliseconds`},
		{"null", sensor.NullValue(), `invalid timestamp: null is neither RFC3339 nor epoch seconds or milliseconds`},
		{"object", sensor.ObjectValue(sensor.Object{}), `invalid timestamp: object is neither RFC3339 nor epoch seconds or milliseconds`},
		{"array", sensor.ArrayValue(nil), `invalid timestamp: array is neither RFC3339 nor epoch seconds or milliseconds`},
		{"negative", sensor.IntValue(-5), `invalid timestamp: number -5 is not after 1970-01-01T00:00:00Z (a placeholder, not an update time)`},
		{"zero", sensor.IntValue(0), `invalid timestamp: number 0 is not after 1970-01-01T00:00:00Z (a placeholder, not an update time)`},
		{"zero string", str("0"), `invalid timestamp: string "0" is not after 1970-01-01T00:00:00Z (a placeholder, not an update time)`},
		{"Go zero time", str("0001-01-01T00:00:00Z"), `invalid timestamp: string "0001-01-01T00:00:00Z" is not after 1970-01-01T00:00:00Z (a placeholder, not an update time)`},
		{"the epoch itself", str("1970-01-01T00:00:00Z"), `invalid timestamp: string "1970-01-01T00:00:00Z" is not after 1970-01-01T00:00:00Z (a placeholder, not an update time)`},
		{"milliseconds before 2001 read as seconds", sensor.IntValue(999999999999), `invalid timestamp: number 999999999999 is after year 9999 as epoch seconds (milliseconds start at 1e12)`},
		{"seconds past year 9999", sensor.IntValue(253402300800), `invalid timestamp: number 253402300800 is after year 9999`},
		{"milliseconds past year 9999", sensor.IntValue(253402300800000), `invalid timestamp: number 253402300800000 is after year 9999`},
		{"huge", sensor.NumberValue(1e300), `invalid timestamp: number 1e+300 is after year 9999`},
		{"offset pushes past year 9999", str("9999-12-31T23:59:59-01:00"), `invalid timestamp: string "9999-12-31T23:59:59-01:00" is after year 9999`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseTimestamp(c.in)
			if err == nil {
				t.Fatalf("ParseTimestamp(%v) = %v, want an error", c.in, got)
			}
			if !errors.Is(err, ErrTimestamp) {
				t.Errorf("error %v does not wrap ErrTimestamp", err)
			}
			if err.Error() != c.want {
				t.Errorf("error = %q\nwant    %q", err, c.want)
			}
		})
	}
}
