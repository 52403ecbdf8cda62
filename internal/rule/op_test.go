package rule

import (
	"strings"
	"testing"
)

func TestParseOp(t *testing.T) {
	for _, op := range Ops() {
		t.Run(string(op), func(t *testing.T) {
			got, err := ParseOp(string(op))
			if err != nil || got != op {
				t.Fatalf("ParseOp(%q) = %q, %v", op, got, err)
			}
		})
	}
	for _, in := range []string{"", "EXISTS", " exists", "field_equals", "age_gte", "=="} {
		t.Run("refuses "+in, func(t *testing.T) {
			_, err := ParseOp(in)
			if err == nil {
				t.Fatalf("ParseOp(%q) accepted", in)
			}
			for _, op := range Ops() {
				if !strings.Contains(err.Error(), string(op)) {
					t.Errorf("error %q does not list %q", err, op)
				}
			}
		})
	}
}

func TestOpsListsEachOperatorOnce(t *testing.T) {
	want := []Op{Exists, Equals, GT, GTE, LT, LTE, AgeLT, AgeGT}
	got := Ops()
	if len(got) != len(want) {
		t.Fatalf("Ops() = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("Ops() = %v, want %v", got, want)
		}
	}
}

func TestParseMode(t *testing.T) {
	cases := []struct {
		in   string
		want Mode
	}{
		{"", All},
		{"ALL", All},
		{"all", All},
		{"All", All},
		{"ANY", Any},
		{"any", Any},
		{"aNy", Any},
	}
	for _, c := range cases {
		t.Run(c.in, func(t *testing.T) {
			got, err := ParseMode(c.in)
			if err != nil || got != c.want {
				t.Fatalf("ParseMode(%q) = %q, %v; want %q", c.in, got, err, c.want)
			}
		})
	}
	for _, in := range []string{"both", "ALL ", " any", "AL", "ANY,ALL", "NONE", "ŁALL"} {
		t.Run("refuses "+in, func(t *testing.T) {
			if got, err := ParseMode(in); err == nil {
				t.Fatalf("ParseMode(%q) = %q, want an error", in, got)
			}
		})
	}
}
