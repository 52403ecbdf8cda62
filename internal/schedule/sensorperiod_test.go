package schedule

import (
	"errors"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/sensor"
)

func sensorBody(t *testing.T, body string) sensor.Object {
	t.Helper()
	o, err := sensor.ParseBody([]byte(body))
	if err != nil {
		t.Fatalf("ParseBody(%s): %v", body, err)
	}
	return o
}

func TestPeriodFromSensor(t *testing.T) {
	fallback := mustPeriod(t, "2026-03-09")
	cases := []struct {
		name string
		body string
		want string
	}{
		{"no date: fallback", `{"count": 5}`, "2026-03-09"},
		{"dashed date", `{"date": "2026-03-03"}`, "2026-03-03"},
		{"compact date", `{"date": "20260303"}`, "2026-03-03"},
		{"two-digit hour", `{"date": "20260303", "hour": "07"}`, "2026-03-03T07"},
		{"one-digit hour", `{"date": "2026-03-03", "hour": "7"}`, "2026-03-03T07"},
		{"numeric hour", `{"date": "2026-03-03", "hour": 7}`, "2026-03-03T07"},
		{"hour zero", `{"date": "2026-03-03", "hour": 0}`, "2026-03-03T00"},
		{"hour 23", `{"date": "2026-03-03", "hour": "23"}`, "2026-03-03T23"},
		{"whole float hour", `{"date": "2026-03-03", "hour": 7.0}`, "2026-03-03T07"},
		{"wrapped body", `{"data": {"date": "2028-02-29", "hour": "05"}}`, "2028-02-29T05"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PeriodFromSensor(sensorBody(t, c.body), fallback)
			if err != nil {
				t.Fatalf("PeriodFromSensor(%s): %v", c.body, err)
			}
			if got.String() != c.want {
				t.Fatalf("PeriodFromSensor(%s) = %s, want %s", c.body, got, c.want)
			}
		})
	}
}

// The reference silently used today for a malformed date; running the
// wrong period is worse than an error.
func TestPeriodFromSensorMalformed(t *testing.T) {
	cases := []struct {
		name, body, field string
	}{
		{"impossible date", `{"date": "2026-02-30"}`, "date"},
		{"not a leap year", `{"date": "20260229"}`, "date"},
		{"garbage date", `{"date": "yesterday"}`, "date"},
		{"empty date", `{"date": ""}`, "date"},
		{"null date", `{"date": null}`, "date"},
		{"numeric date", `{"date": 20260303}`, "date"},
		{"date with hour suffix", `{"date": "2026-03-03T07"}`, "date"},
		{"hour 24", `{"date": "2026-03-03", "hour": "24"}`, "hour"},
		{"hour 25 number", `{"date": "2026-03-03", "hour": 25}`, "hour"},
		{"negative hour", `{"date": "2026-03-03", "hour": -1}`, "hour"},
		{"fractional hour", `{"date": "2026-03-03", "hour": 7.5}`, "hour"},
		{"three-digit hour", `{"date": "2026-03-03", "hour": "007"}`, "hour"},
		{"word hour", `{"date": "2026-03-03", "hour": "ab"}`, "hour"},
		{"empty hour", `{"date": "2026-03-03", "hour": ""}`, "hour"},
		{"null hour", `{"date": "2026-03-03", "hour": null}`, "hour"},
		{"bool hour", `{"date": "2026-03-03", "hour": true}`, "hour"},
		{"hour without date", `{"hour": "07"}`, "hour"},
	}
	fallback := mustPeriod(t, "2026-03-09")
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := PeriodFromSensor(sensorBody(t, c.body), fallback)
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("PeriodFromSensor(%s) = %v, %v; want ErrSyntax", c.body, got, err)
			}
			if !strings.Contains(err.Error(), `"`+c.field+`"`) {
				t.Fatalf("error %q does not name the field %q", err, c.field)
			}
		})
	}
}
