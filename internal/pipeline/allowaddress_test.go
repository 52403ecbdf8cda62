package pipeline

import (
	"errors"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/confdec"
)

func TestParseAllowAddressValid(t *testing.T) {
	for _, tc := range []struct {
		in     string
		prefix string
		port   uint16
		str    string // String(), the canonical form
	}{
		{"10.0.0.5", "10.0.0.5/32", 0, "10.0.0.5"},
		{"10.0.0.5:8080", "10.0.0.5/32", 8080, "10.0.0.5:8080"},
		{"10.20.0.0/16", "10.20.0.0/16", 0, "10.20.0.0/16"},
		{"10.20.0.0/16:443", "10.20.0.0/16", 443, "10.20.0.0/16:443"},
		{"10.1.2.3/8:443", "10.0.0.0/8", 443, "10.0.0.0/8:443"}, // masked, as before ports
		{"127.0.0.1/32", "127.0.0.1/32", 0, "127.0.0.1"},
		{"127.0.0.1:1", "127.0.0.1/32", 1, "127.0.0.1:1"},
		{"127.0.0.1:65535", "127.0.0.1/32", 65535, "127.0.0.1:65535"},
		{"::1", "::1/128", 0, "::1"},
		{"fd00::/8", "fd00::/8", 0, "fd00::/8"},
		{"[::1]:8080", "::1/128", 8080, "[::1]:8080"},
		{"[fd00::/8]:443", "fd00::/8", 443, "[fd00::/8]:443"},
		{"[fd00:1::5]:9000", "fd00:1::5/128", 9000, "[fd00:1::5]:9000"},
		// A bare IPv6 entry is all address: this is the address ::1:8080,
		// not ::1 on port 8080 (that is "[::1]:8080").
		{"::1:8080", "::1:8080/128", 0, "::1:8080"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseAllowAddress(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if want := (AllowAddress{Prefix: netip.MustParsePrefix(tc.prefix), Port: tc.port}); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			if got.String() != tc.str {
				t.Errorf("String() = %q, want %q", got.String(), tc.str)
			}
			if again, err := ParseAllowAddress(got.String()); err != nil || again != got {
				t.Errorf("String() does not parse back: %+v, %v", again, err)
			}
		})
	}
}

func TestParseAllowAddressInvalid(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", `"": not an IP address or CIDR`},
		{"10.0.0.0/33", `"10.0.0.0/33": not an IP address or CIDR: want IP, IP:PORT, CIDR or CIDR:PORT`},
		{"localhost", `"localhost": not an IP address or CIDR`},
		{"localhost:8080", `"localhost:8080": not an IP address or CIDR`},
		{"10.0.0.5:0", `"10.0.0.5:0": port "0" is not a port number (want 1 to 65535)`},
		{"10.0.0.5:65536", `"10.0.0.5:65536": port "65536" is not a port number`},
		{"10.0.0.5:", `"10.0.0.5:": port "" is not a port number`},
		{"10.0.0.5:+80", `"10.0.0.5:+80": port "+80" is not a port number`},
		{"10.0.0.5:http", `"10.0.0.5:http": port "http" is not a port number`},
		{"10.0.0.5:80-90", `"10.0.0.5:80-90": port "80-90" is not a port number`},
		{"10.0.0.0/8:443:80", `"10.0.0.0/8:443:80": not an IP address or CIDR`},
		{"fd00::/8:443", `"fd00::/8:443": an IPv6 entry with a port is written in brackets: "[fd00::/8]:443"`},
		{"[::1]", `"[::1]": brackets are only for an IPv6 entry with a port: write ::1, or [::1]:PORT`},
		{"[::1]8080", `"[::1]8080": want IP, IP:PORT`},
		{"[::1:8080", `"[::1:8080": want IP, IP:PORT`},
		{"[::1]:0", `"[::1]:0": port "0" is not a port number`},
		{"[10.0.0.5]:80", `"[10.0.0.5]:80": brackets are for IPv6 only: write 10.0.0.5:80`},
		{"[fd00::/129]:80", `"[fd00::/129]:80": not an IP address or CIDR`},
		{"fe80::1%eth0", `"fe80::1%eth0": an address with a zone (%eth0) cannot be allowed`},
		{"[fe80::1%eth0]:80", `"[fe80::1%eth0]:80": an address with a zone`},
		{" 10.0.0.5", `" 10.0.0.5": not an IP address or CIDR`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := ParseAllowAddress(tc.in)
			if err == nil || !strings.HasPrefix(err.Error(), tc.want) {
				t.Errorf("got %+v, %v\nwant error %q", got, err, tc.want)
			}
		})
	}
}

// In interlock.yaml an entry with a port is an error with file:line like
// any other, every bad entry at once; a good one is kept with its port.
func TestSettingsAllowAddressesWithPorts(t *testing.T) {
	s, err := ParseSettings("i.yaml", []byte("triggers:\n  allowAddresses:\n    - 127.0.0.1:8080\n    - 10.0.0.0/8\n    - \"[fd00::/8]:443\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := []AllowAddress{
		{Prefix: netip.MustParsePrefix("127.0.0.1/32"), Port: 8080},
		{Prefix: netip.MustParsePrefix("10.0.0.0/8")},
		{Prefix: netip.MustParsePrefix("fd00::/8"), Port: 443},
	}
	if len(s.Triggers.AllowAddresses) != len(want) {
		t.Fatalf("got %v", s.Triggers.AllowAddresses)
	}
	for i := range want {
		if s.Triggers.AllowAddresses[i] != want[i] {
			t.Errorf("[%d] = %+v, want %+v", i, s.Triggers.AllowAddresses[i], want[i])
		}
	}

	_, err = ParseSettings("i.yaml", []byte("triggers:\n  allowAddresses:\n    - 127.0.0.1:8080\n    - 127.0.0.1:0\n    - fd00::/8:443\n"))
	if !errors.Is(err, confdec.ErrInvalid) {
		t.Fatalf("err = %v", err)
	}
	errs := confdec.AsErrors("i.yaml", err)
	if len(errs) != 2 ||
		!strings.HasPrefix(errs[0].Error(), `i.yaml:4: triggers.allowAddresses[1]: "127.0.0.1:0": port "0" is not a port number`) ||
		!strings.HasPrefix(errs[1].Error(), `i.yaml:5: triggers.allowAddresses[2]: "fd00::/8:443": an IPv6 entry with a port is written in brackets`) {
		t.Errorf("errors:\n%v", err)
	}
}

// Whatever an entry says, parsing never panics, and an accepted entry is
// written back (String) as an entry that parses to the same value.
func FuzzParseAllowAddress(f *testing.F) {
	for _, s := range []string{"10.0.0.5", "10.0.0.5:8080", "10.0.0.0/8:443", "::1", "[::1]:8080", "[fd00::/8]:443", "fd00::/8:443", "[::1]", "[10.0.0.1]:80", "fe80::1%eth0", "::ffff:10.0.0.1", "[::ffff:10.0.0.1]:1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := ParseAllowAddress(s)
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("error %q does not quote the entry", err)
			}
			return
		}
		if !e.Prefix.IsValid() || e.Prefix != e.Prefix.Masked() {
			t.Fatalf("%q: prefix %v", s, e.Prefix)
		}
		again, err := ParseAllowAddress(e.String())
		if err != nil || again != e {
			t.Fatalf("%q → %q → %+v, %v", s, e.String(), again, err)
		}
	})
}
