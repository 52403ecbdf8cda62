package httpx

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"syscall"
)

// ErrBlocked is wrapped by every connection the SSRF guard refuses.
var ErrBlocked = errors.New("refused by the SSRF guard")

// Guard decides which addresses HTTP-family jobs may connect to. It judges
// the address actually dialled — after DNS resolution, for every
// connection including redirects — so neither a hostname that resolves to
// a private address nor DNS rebinding gets past it.
type Guard struct {
	allow []netip.Prefix
}

// NewGuard returns a guard that refuses internal addresses except those in
// allow (interlock.yaml triggers.allowAddresses).
func NewGuard(allow []netip.Prefix) Guard {
	return Guard{allow: slices.Clone(allow)}
}

// Check returns nil when addr may be reached, else an error wrapping
// ErrBlocked that says why.
func (g Guard) Check(addr netip.Addr) error {
	if why := g.Refusal(addr); why != "" {
		return fmt.Errorf("%w: %s is %s (allow it in interlock.yaml triggers.allowAddresses if it is meant)", ErrBlocked, addr.WithZone(""), why)
	}
	return nil
}

// Refusal says why the guard refuses addr ("a private address"), or ""
// when addr may be reached: a public address, or one in the allow-list.
// It is pure, so `interlock validate` can warn about a job URL written
// with a literal internal address by the guard's own judgement.
func (g Guard) Refusal(addr netip.Addr) string {
	addr = addr.WithZone("") // a zoned address is never inside a prefix
	for _, p := range g.allow {
		if p.Contains(addr) || p.Contains(addr.Unmap()) {
			return ""
		}
	}
	return refusal(addr)
}

// control is the dialer's hook: address is the resolved "ip:port" about
// to be connected to. Anything that does not parse as one is refused.
func (g Guard) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot judge address %q", ErrBlocked, address)
	}
	return g.Check(ap.Addr())
}

// special are refused ranges the netip predicates do not cover.
var special = []struct {
	p   netip.Prefix
	why string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), `in "this network" (0.0.0.0/8)`},
	{netip.MustParsePrefix("100.64.0.0/10"), "a shared (carrier-grade NAT) address, where some clouds serve instance metadata"},
	{netip.MustParsePrefix("192.0.0.0/24"), "an IETF protocol address"},
	{netip.MustParsePrefix("198.18.0.0/15"), "a benchmarking address"},
	{netip.MustParsePrefix("240.0.0.0/4"), "a reserved or broadcast address"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address"},
}

// embedding are IPv6 ranges that carry an IPv4 address, judged by that
// address: NAT64 64:ff9b::a.b.c.d reaches a.b.c.d, so it is refused when
// a.b.c.d would be (a public one stays reachable from IPv6-only hosts).
var embedding = []struct {
	p   netip.Prefix
	at  int // byte offset of the IPv4 address
	why string
}{
	{netip.MustParsePrefix("64:ff9b::/96"), 12, "NAT64"},
	{netip.MustParsePrefix("2002::/16"), 2, "6to4"},
	{netip.MustParsePrefix("::/96"), 12, "IPv4-compatible"},
}

// refusal says why a is refused, "" if it is a public address.
func refusal(a netip.Addr) string {
	a = a.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	switch {
	case !a.IsValid():
		return "not a valid address"
	case a.IsUnspecified():
		return "the unspecified address"
	case a.IsLoopback():
		return "a loopback address"
	case a.IsPrivate():
		return "a private address"
	case a.IsLinkLocalUnicast():
		return "a link-local address (this includes the cloud metadata services 169.254.169.254 and 169.254.170.2)"
	case a.IsMulticast():
		return "a multicast address"
	}
	for _, s := range special {
		if s.p.Contains(a) {
			return s.why
		}
	}
	for _, e := range embedding {
		if e.p.Contains(a) {
			b := a.As16()
			v4 := netip.AddrFrom4([4]byte(b[e.at : e.at+4]))
			if why := refusal(v4); why != "" {
				return fmt.Sprintf("%s for %s, which is %s", e.why, v4, why)
			}
		}
	}
	return ""
}
