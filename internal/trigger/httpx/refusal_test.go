package httpx

import (
	"net/netip"
	"strings"
	"testing"
)

// Refusal is the guard's judgement without the error: "" exactly when
// Check admits the address, else the reason Check gives.
func TestGuardRefusalAgreesWithCheck(t *testing.T) {
	g := NewGuard(allowList(t, "10.20.0.0/16"))
	for _, addr := range []string{"127.0.0.1", "::1", "10.20.0.5", "10.21.0.5", "169.254.169.254", "fe80::1%eth0", "8.8.8.8", "::ffff:10.20.1.1"} {
		a := netip.AddrPortFrom(netip.MustParseAddr(addr), 443)
		why, err := g.Refusal(a), g.Check(a)
		if (why == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), why) {
			t.Errorf("%s: Refusal %q, Check %v", addr, why, err)
		}
	}
	if why := g.Refusal(netip.MustParseAddrPort("169.254.169.254:80")); !strings.Contains(why, "link-local") {
		t.Errorf("metadata address: %q", why)
	}
	if why := g.Refusal(netip.MustParseAddrPort("10.20.3.4:8080")); why != "" {
		t.Errorf("allowed address refused: %q", why)
	}
}
