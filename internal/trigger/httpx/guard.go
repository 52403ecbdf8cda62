package httpx

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/interlockhq/interlock/internal/pipeline"
)

// ErrBlocked is wrapped by every connection the SSRF guard refuses.
var ErrBlocked = errors.New("refused by the SSRF guard")

// Guard decides which addresses HTTP-family jobs may connect to. It judges
// the address actually dialled — after DNS resolution, for every
// connection including redirects — so neither a hostname that resolves to
// a private address nor DNS rebinding gets past it.
//
// A public address is always allowed, on any port. An internal one is
// allowed when an entry of the allow-list covers its address and port (an
// entry without a port covers every port). A redirect is judged more
// narrowly, by the scope of the call's first request (see scope).
type Guard struct {
	allow []pipeline.AllowAddress
}

// NewGuard returns a guard that refuses internal addresses except those in
// allow (interlock.yaml triggers.allowAddresses).
func NewGuard(allow []pipeline.AllowAddress) Guard {
	return Guard{allow: slices.Clone(allow)}
}

// Check returns nil when ap may be reached by a call's first request,
// else an error wrapping ErrBlocked that says why.
func (g Guard) Check(ap netip.AddrPort) error {
	if why := g.Refusal(ap); why != "" {
		return fmt.Errorf("%w: %s is %s (allow it in interlock.yaml triggers.allowAddresses if it is meant)", ErrBlocked, ap.Addr().WithZone(""), why)
	}
	return nil
}

// Refusal says why the guard refuses a first request to ap ("a private
// address", "a loopback address, which triggers.allowAddresses allows
// only on port 8080"), or "" when ap may be reached: a public address, or
// one an allow-list entry covers with its port. It is pure, so
// `interlock validate` can warn about a job URL written with a literal
// internal address by the guard's own judgement.
func (g Guard) Refusal(ap netip.AddrPort) string {
	why := refusal(ap.Addr().WithZone(""))
	if why == "" || len(g.admitting(ap)) > 0 {
		return ""
	}
	var ports []string
	for _, e := range g.allow {
		if e.Port != 0 && covers(e.Prefix, ap.Addr()) {
			ports = append(ports, strconv.Itoa(int(e.Port)))
		}
	}
	switch len(ports) {
	case 0:
		return why
	case 1:
		return why + ", which triggers.allowAddresses allows only on port " + ports[0]
	}
	return why + ", which triggers.allowAddresses allows only on ports " + strings.Join(ports, ", ")
}

// admitting returns the indexes of the allow-list entries that admit ap.
func (g Guard) admitting(ap netip.AddrPort) []int {
	var in []int
	for i, e := range g.allow {
		if admits(e, ap) {
			in = append(in, i)
		}
	}
	return in
}

// admits reports whether entry e covers ap, address and port.
func admits(e pipeline.AllowAddress, ap netip.AddrPort) bool {
	return (e.Port == 0 || e.Port == ap.Port()) && covers(e.Prefix, ap.Addr())
}

// covers reports whether p holds a, zone ignored (a zoned address is
// never inside a prefix) and an IPv4-mapped address taken as its IPv4.
func covers(p netip.Prefix, a netip.Addr) bool {
	a = a.WithZone("")
	return p.Contains(a) || p.Contains(a.Unmap())
}

// control is the dialer's hook for a call's first request: address is
// the resolved "ip:port" about to be connected to. Anything that does not
// parse as one is refused.
func (g Guard) control(_ context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: cannot judge address %q", ErrBlocked, address)
	}
	return g.Check(ap)
}

// scope is where a call's redirects may go, fixed by the address its
// first request connected to. A first request to a public address gives
// the public scope: redirects may reach public addresses only, never an
// internal one, whatever the allow-list says (an outside server must not
// be able to steer a job into the private network). A first request that
// needed the allow-list gives the scope of the entries that covered it: a
// redirect must be covered, address and port, by one of those same
// entries — not by another entry, and not by being public (an internal
// service allowed for one job must not steer it anywhere else).
type scope struct {
	entries []int // indexes into Guard.allow; none: the public scope
}

// scopeOf is the scope of a call whose first request connected to first;
// an error when the guard would not have allowed first at all.
func (g Guard) scopeOf(first netip.AddrPort) (scope, error) {
	if !first.IsValid() {
		return scope{}, fmt.Errorf("%w: cannot judge a redirect: the address of the first request is unknown", ErrBlocked)
	}
	if refusal(first.Addr().WithZone("")) == "" {
		return scope{}, nil
	}
	in := g.admitting(first)
	if len(in) == 0 {
		return scope{}, fmt.Errorf("%w: cannot judge a redirect: the first request's address %s is not allowed", ErrBlocked, first)
	}
	return scope{entries: in}, nil
}

// key names the scope, so calls of one scope can share connections.
func (s scope) key() string {
	k := make([]string, len(s.entries))
	for i, e := range s.entries {
		k[i] = strconv.Itoa(e)
	}
	return "entries:" + strings.Join(k, ",")
}

// checkHop returns nil when a redirect of a call of scope s may connect
// to hop, else an error wrapping ErrBlocked that says why.
func (g Guard) checkHop(s scope, hop netip.AddrPort) error {
	a := hop.Addr().WithZone("")
	why := refusal(a)
	if len(s.entries) == 0 {
		if why == "" {
			return nil
		}
		return fmt.Errorf("%w: a redirect to %s: %s is %s, and the call's first request went to a public address: a redirect from a public address never reaches an internal one, whatever triggers.allowAddresses says", ErrBlocked, hop, a, why)
	}
	names := make([]string, len(s.entries))
	for i, e := range s.entries {
		if admits(g.allow[e], hop) {
			return nil
		}
		names[i] = g.allow[e].String()
	}
	if why == "" {
		why = "a public address"
	}
	what := "entry " + names[0]
	if len(names) > 1 {
		what = "entries " + strings.Join(names, ", ")
	}
	return fmt.Errorf("%w: a redirect to %s: %s is %s, outside triggers.allowAddresses %s that allowed the call's first request, and a redirect stays within the entry that allowed the first request",
		ErrBlocked, hop, a, why, what)
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
