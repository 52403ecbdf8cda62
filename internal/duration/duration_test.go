package duration

import (
	"errors"
	"testing"
	"time"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in   string
		want time.Duration
	}{
		{"90s", 90 * time.Second},
		{"1h30m", 90 * time.Minute},
		{"36h", 36 * time.Hour},
		{"2d", 48 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{"0d", 0},
		{"0s", 0},
		{" 5m ", 5 * time.Minute},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := Parse(c.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", c.in, err)
			}
			if got != c.want {
				t.Fatalf("Parse(%q) = %v, want %v", c.in, got, c.want)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "abc", "-5m", "5", "d", "1.5d", "2dd", "1d-3h", "99999999d", "36500d2000000h", "10 minutes"} {
		t.Run(in, func(t *testing.T) {
			if _, err := Parse(in); !errors.Is(err, ErrSyntax) {
				t.Fatalf("Parse(%q) error = %v, want ErrSyntax", in, err)
			}
		})
	}
}

func TestFormatRoundTrip(t *testing.T) {
	for _, d := range []time.Duration{48 * time.Hour, 36 * time.Hour, 90 * time.Second, 0} {
		got, err := Parse(Format(d))
		if err != nil || got != d {
			t.Fatalf("Parse(Format(%v)) = %v, %v", d, got, err)
		}
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{"2d", "1d12h", "90s", "-1d", "9223372036854775807d"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := Parse(s)
		if err == nil && d < 0 {
			t.Fatalf("Parse(%q) = %v, negative", s, d)
		}
	})
}
