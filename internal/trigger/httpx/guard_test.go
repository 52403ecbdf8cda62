package httpx

import (
	"context"
	"errors"
	"net/netip"
	"strings"
	"testing"
)

func TestGuardRefusesInternalAddresses(t *testing.T) {
	refused := map[string]string{
		"127.0.0.1":                "loopback",
		"127.10.20.30":             "loopback",
		"::1":                      "loopback",
		"10.1.2.3":                 "private",
		"172.16.0.1":               "private",
		"172.31.255.254":           "private",
		"192.168.1.1":              "private",
		"fc00::1":                  "private",
		"fd12:3456::1":             "private",
		"169.254.169.254":          "link-local", // EC2, GCE, Azure instance metadata
		"169.254.170.2":            "link-local", // ECS task credentials
		"169.254.1.1":              "link-local",
		"fe80::1":                  "link-local",
		"fe80::1%eth0":             "link-local",
		"224.0.0.1":                "multicast",
		"239.255.255.250":          "multicast",
		"ff02::1":                  "multicast",
		"0.0.0.0":                  "unspecified",
		"::":                       "unspecified",
		"0.1.2.3":                  "this network",
		"100.100.100.200":          "shared", // Alibaba Cloud metadata
		"255.255.255.255":          "broadcast",
		"::ffff:127.0.0.1":         "loopback", // IPv4-mapped IPv6
		"::ffff:10.0.0.1":          "private",
		"::ffff:169.254.169.254":   "link-local",
		"::ffff:0.0.0.0":           "unspecified",
		"64:ff9b::a00:1":           "NAT64 for 10.0.0.1",
		"64:ff9b::a9fe:a9fe":       "NAT64 for 169.254.169.254",
		"2002:7f00:1::":            "6to4 for 127.0.0.1",
		"::a00:1":                  "IPv4-compatible for 10.0.0.1",
		"fec0::1":                  "site-local",
		"fd00:ec2::254":            "private", // EC2 IPv6 metadata
		"::ffff:7f00:1":            "loopback",
		"0:0:0:0:0:ffff:a9fe:a9fe": "link-local",
	}
	g := NewGuard(nil)
	for addr, why := range refused {
		t.Run(addr, func(t *testing.T) {
			err := g.Check(netip.AddrPortFrom(netip.MustParseAddr(addr), 443))
			if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), why) {
				t.Fatalf("Check(%s) = %v, want refused as %s", addr, err, why)
			}
		})
	}
}

func TestGuardAdmitsPublicAddresses(t *testing.T) {
	g := NewGuard(nil)
	for _, addr := range []string{"8.8.8.8", "93.184.216.34", "172.32.0.1", "100.63.255.255", "2606:4700:4700::1111", "::ffff:8.8.8.8", "64:ff9b::808:808", "2002:808:808::"} {
		if err := g.Check(netip.AddrPortFrom(netip.MustParseAddr(addr), 443)); err != nil {
			t.Errorf("Check(%s) = %v, want allowed", addr, err)
		}
	}
}

func TestGuardAllowList(t *testing.T) {
	g := NewGuard(allowList(t, "10.20.0.0/16", "127.0.0.1/32", "fd00:1::/64"))
	for addr, allowed := range map[string]bool{
		"10.20.1.2":        true,
		"10.21.0.1":        false, // next to the allowed network
		"127.0.0.1":        true,
		"::ffff:127.0.0.1": true, // the mapped form of an allowed address
		"127.0.0.2":        false,
		"::1":              false, // IPv6 loopback is another address
		"fd00:1::5":        true,
		"fd00:2::5":        false,
		"169.254.169.254":  false,
	} {
		err := g.Check(netip.AddrPortFrom(netip.MustParseAddr(addr), 8080))
		if (err == nil) != allowed {
			t.Errorf("Check(%s) = %v, want allowed=%v", addr, err, allowed)
		}
	}
}

// TestGuardRefusesWhatItCannotParse: the dialer hook gets "ip:port"; any
// other shape is refused rather than waved through.
func TestGuardRefusesWhatItCannotParse(t *testing.T) {
	g := NewGuard(allowList(t, "0.0.0.0/0", "::/0"))
	for _, addr := range []string{"", "localhost:80", "example.com:443", "10.0.0.1", "[::1]", "1.2.3.4:http", "999.1.1.1:80"} {
		if err := g.control(context.Background(), "tcp", addr, nil); !errors.Is(err, ErrBlocked) {
			t.Errorf("control(%q) = %v, want refused", addr, err)
		}
	}
	if err := g.control(context.Background(), "tcp", "[fe80::1%eth0]:80", nil); err != nil {
		t.Errorf("an allowed address with a zone: %v", err)
	}
}
