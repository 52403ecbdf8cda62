package httpx

import (
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

// twoServers are two httptest servers on 127.0.0.1, on different ports.
// Each answers /final with 200, redirects /self to its own /final and
// anything else to the other's /final, so a call to one's /start tries to
// reach the other.
func twoServers(t *testing.T) (s1, s2 *httptest.Server, hits1, hits2 *atomic.Int32, port1, port2 string) {
	t.Helper()
	var to1, to2 string
	bounce := func(to *string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			switch r.URL.Path {
			case "/final":
				ok(w, r)
			case "/self":
				http.Redirect(w, r, "/final", http.StatusFound)
			default:
				http.Redirect(w, r, *to, http.StatusFound)
			}
		}
	}
	s1, hits1 = server(t, bounce(&to2))
	s2, hits2 = server(t, bounce(&to1))
	to1, to2 = s1.URL+"/final", s2.URL+"/final"
	return s1, s2, hits1, hits2, portOf(s1), portOf(s2)
}

func portOf(srv *httptest.Server) string {
	return itoa(netip.MustParseAddrPort(srv.Listener.Addr().String()).Port())
}

// An entry with a port allows that port only: not another server on the
// same address, neither directly nor by a redirect.
func TestAllowEntryWithAPortAllowsThatPortOnly(t *testing.T) {
	s1, s2, _, hits2, port1, port2 := twoServers(t)
	c := NewClient(allowList(t, "127.0.0.1:"+port1))

	if resp, err := c.Do(t.Context(), get(s1.URL+"/final"), &Secrets{}); err != nil || resp.Status != 200 {
		t.Fatalf("server 1, allowed: %+v, %v", resp, err)
	}
	_, err := c.Do(t.Context(), get(s2.URL+"/final"), &Secrets{})
	if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), "127.0.0.1 is a loopback address, which triggers.allowAddresses allows only on port "+port1) {
		t.Fatalf("server 2 (port %s): err = %v, want refused naming the allowed port", port2, err)
	}
	_, err = c.Do(t.Context(), get(s1.URL+"/start"), &Secrets{})
	if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), "a redirect to 127.0.0.1:"+port2) {
		t.Fatalf("redirect from server 1 to server 2: err = %v, want refused", err)
	}
	if n := hits2.Load(); n != 0 {
		t.Fatalf("server 2 was reached %d times", n)
	}
}

// An entry without a port allows every port of its network, and a
// redirect between two of them.
func TestAllowEntryWithoutAPortAllowsEveryPort(t *testing.T) {
	s1, s2, _, hits2, _, _ := twoServers(t)
	c := NewClient(allowList(t, "127.0.0.1/32"))
	for _, u := range []string{s1.URL + "/final", s2.URL + "/final", s1.URL + "/start", s2.URL + "/start"} {
		if resp, err := c.Do(t.Context(), get(u), &Secrets{}); err != nil || resp.Status != 200 || string(resp.Body) != `{"ok":true}` {
			t.Fatalf("%s: %+v, %v", u, resp, err)
		}
	}
	if n := hits2.Load(); n != 3 { // directly, redirected to, and bouncing
		t.Fatalf("server 2 got %d requests, want 3", n)
	}
}

// A redirect must stay within the entry that allowed the first request:
// another entry allowing the target is not enough — even when pooled
// connections to the target, opened by calls that entry did allow (a
// first request, and a redirect within that entry), wait to be reused.
func TestRedirectStaysWithinTheEntryOfTheFirstRequest(t *testing.T) {
	s1, s2, _, hits2, port1, port2 := twoServers(t)
	c := NewClient(allowList(t, "127.0.0.1:"+port1, "127.0.0.1:"+port2))

	if resp, err := c.Do(t.Context(), get(s2.URL+"/final"), &Secrets{}); err != nil || resp.Status != 200 {
		t.Fatalf("server 2 directly, by its own entry: %+v, %v", resp, err)
	}
	if resp, err := c.Do(t.Context(), get(s2.URL+"/self"), &Secrets{}); err != nil || resp.Status != 200 {
		t.Fatalf("server 2 redirecting to itself, within its entry: %+v, %v", resp, err)
	}
	_, err := c.Do(t.Context(), get(s1.URL+"/start"), &Secrets{})
	if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), "outside triggers.allowAddresses entry 127.0.0.1:"+port1+" that allowed the call's first request") {
		t.Fatalf("redirect from server 1 into the other entry: err = %v, want refused", err)
	}
	if n := hits2.Load(); n != 3 {
		t.Fatalf("server 2 got %d requests, want the 3 of its own calls", n)
	}

	// Overlapping entries: the redirect is followed when one entry covers
	// both ends.
	c = NewClient(allowList(t, "127.0.0.1:"+port1, "127.0.0.0/8"))
	if resp, err := c.Do(t.Context(), get(s1.URL+"/start"), &Secrets{}); err != nil || resp.Status != 200 {
		t.Fatalf("redirect within 127.0.0.0/8: %+v, %v", resp, err)
	}
}

// The scope rule itself, for addresses no test server can have.
func TestGuardJudgesARedirectByTheFirstRequestsScope(t *testing.T) {
	g := NewGuard(allowList(t, "10.0.0.0/8:443", "127.0.0.1/32", "[fd00::/8]:8443", "192.168.0.0/16"))
	for _, tc := range []struct {
		first, hop string
		want       string // "": followed
	}{
		// From 10.0.0.0/8:443: within it only.
		{"10.1.2.3:443", "10.9.9.9:443", ""},
		{"10.1.2.3:443", "10.9.9.9:80", "10.9.9.9 is a private address, outside triggers.allowAddresses entry 10.0.0.0/8:443"},
		{"10.1.2.3:443", "127.0.0.1:443", "127.0.0.1 is a loopback address, outside triggers.allowAddresses entry 10.0.0.0/8:443"},
		{"10.1.2.3:443", "169.254.169.254:80", "169.254.169.254 is a link-local address"},
		// Not even to a public address: an internal service allowed for
		// one job must not steer it elsewhere.
		{"10.1.2.3:443", "8.8.8.8:443", "8.8.8.8 is a public address, outside triggers.allowAddresses entry 10.0.0.0/8:443"},
		// From a public address: public addresses only, whatever the
		// allow-list says.
		{"8.8.8.8:443", "1.1.1.1:80", ""},
		{"8.8.8.8:443", "127.0.0.1:8080", "127.0.0.1 is a loopback address, and the call's first request went to a public address"},
		{"8.8.8.8:443", "10.1.2.3:443", "10.1.2.3 is a private address, and the call's first request went to a public address"},
		{"[2606:4700::1111]:443", "[fd00::1]:8443", "fd00::1 is a private address, and the call's first request went to a public address"},
		// IPv6 with a port.
		{"[fd00::1]:8443", "[fd12::2]:8443", ""},
		{"[fd00::1]:8443", "[fd12::2]:443", "outside triggers.allowAddresses entry [fd00::/8]:8443"},
		{"[fd00::1]:8443", "10.1.2.3:443", "outside triggers.allowAddresses entry [fd00::/8]:8443"},
		// The IPv4-mapped form of an address is that address.
		{"[::ffff:127.0.0.1]:80", "127.0.0.1:9000", ""},
		{"127.0.0.1:80", "[::ffff:10.0.0.1]:443", "10.0.0.1 is a private address, outside triggers.allowAddresses entry 127.0.0.1"},
		// Two entries both cover the first: either may cover the redirect.
		{"192.168.1.1:443", "192.168.7.7:22", ""},
	} {
		t.Run(tc.first+"→"+tc.hop, func(t *testing.T) {
			s, err := g.scopeOf(netip.MustParseAddrPort(tc.first))
			if err != nil {
				t.Fatal(err)
			}
			err = g.checkHop(s, netip.MustParseAddrPort(tc.hop))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("refused: %v", err)
			case tc.want != "" && (!errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("err = %v, want refused: %s", err, tc.want)
			}
		})
	}
	// A first request the guard would not allow, or whose address is
	// unknown, has no scope: its redirects are refused.
	for _, first := range []netip.AddrPort{{}, netip.MustParseAddrPort("10.1.2.3:80"), netip.MustParseAddrPort("169.254.169.254:80")} {
		if _, err := g.scopeOf(first); !errors.Is(err, ErrBlocked) {
			t.Errorf("scopeOf(%v) = %v, want refused", first, err)
		}
	}
}

func TestRefusalNamesTheAllowedPorts(t *testing.T) {
	g := NewGuard(allowList(t, "127.0.0.1:8080", "127.0.0.0/8:9090", "10.0.0.0/8"))
	for ap, want := range map[string]string{
		"127.0.0.1:8080":          "",
		"127.0.0.1:9090":          "",
		"127.0.0.2:9090":          "",
		"10.1.1.1:1":              "",
		"8.8.8.8:1":               "",
		"127.0.0.1:7070":          "a loopback address, which triggers.allowAddresses allows only on ports 8080, 9090",
		"127.0.0.2:8080":          "a loopback address, which triggers.allowAddresses allows only on port 9090",
		"[::1]:8080":              "a loopback address",
		"172.16.0.1:8080":         "a private address",
		"[::ffff:127.0.0.1]:8080": "",
	} {
		if got := g.Refusal(netip.MustParseAddrPort(ap)); got != want {
			t.Errorf("Refusal(%s) = %q, want %q", ap, got, want)
		}
	}
}

// Over IPv6 too, when this machine has ::1.
func TestAllowEntryWithAPortOverIPv6(t *testing.T) {
	l1, err1 := net.Listen("tcp", "[::1]:0")
	l2, err2 := net.Listen("tcp", "[::1]:0")
	if err1 != nil || err2 != nil {
		t.Skipf("no IPv6 loopback: %v %v", err1, err2)
	}
	var reached2 atomic.Int32
	s2 := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached2.Add(1); ok(w, r) }))
	s2.Listener.Close()
	s2.Listener = l2
	s2.Start()
	t.Cleanup(s2.Close)
	s1 := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, s2.URL+"/final", http.StatusFound)
	}))
	s1.Listener.Close()
	s1.Listener = l1
	s1.Start()
	t.Cleanup(s1.Close)

	c := NewClient(allowList(t, "[::1]:"+portOf(s1)))
	_, err := c.Do(t.Context(), get(s1.URL+"/start"), &Secrets{})
	if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), "a redirect to [::1]:"+portOf(s2)) {
		t.Fatalf("redirect to another port of ::1: err = %v", err)
	}
	if _, err := c.Do(t.Context(), get(s2.URL+"/final"), &Secrets{}); !errors.Is(err, ErrBlocked) {
		t.Fatalf("another port of ::1 directly: err = %v", err)
	}
	if reached2.Load() != 0 {
		t.Fatal("server 2 was reached")
	}
	c = NewClient(allowList(t, "::1"))
	if resp, err := c.Do(t.Context(), get(s1.URL+"/start"), &Secrets{}); err != nil || resp.Status != 200 {
		t.Fatalf("::1 on every port: %+v, %v", resp, err)
	}
}
