package rule

import (
	"strings"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/sensor"
)

func TestHuman(t *testing.T) {
	cases := []struct {
		in   time.Duration
		want string
	}{
		{3*time.Hour + 12*time.Minute, "3h12m"},
		{2 * time.Hour, "2h"},
		{time.Hour + 5*time.Second, "1h0m5s"},
		{45 * time.Second, "45s"},
		{12 * time.Minute, "12m"},
		{500 * time.Millisecond, "500ms"},
		{0, "0s"},
		{-12 * time.Minute, "-12m"},
		{time.Duration(-1 << 63), time.Duration(-1 << 63).String()},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			if got := human(c.in); got != c.want {
				t.Fatalf("human(%d) = %q, want %q", c.in, got, c.want)
			}
		})
	}
}

func TestShowShortensLongStrings(t *testing.T) {
	// "é" is two bytes and the leading "a" puts byte maxShown inside one:
	// the cut must not split it (Quote would then print \x escapes).
	long := "a" + strings.Repeat("é", 100)
	got := show(sensor.StringValue(long))
	if !strings.HasSuffix(got, "…") || strings.Contains(got, `\x`) || len(got) > maxShown+8 {
		t.Fatalf("show(long) = %q", got)
	}
}
