package httpx

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/pipeline"
)

// server is an httptest server counting the requests it got.
func server(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func ok(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(`{"ok":true}`)) }

// allowOnly admits srv's address (on every port) and nothing else.
func allowOnly(t *testing.T, srv *httptest.Server) []pipeline.AllowAddress {
	t.Helper()
	ap := netip.MustParseAddrPort(srv.Listener.Addr().String())
	return []pipeline.AllowAddress{{Prefix: netip.PrefixFrom(ap.Addr(), ap.Addr().BitLen())}}
}

// allowList is an allow-list as interlock.yaml writes it.
func allowList(t *testing.T, entries ...string) []pipeline.AllowAddress {
	t.Helper()
	var out []pipeline.AllowAddress
	for _, s := range entries {
		e, err := pipeline.ParseAllowAddress(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func get(u string) Call { return Call{Method: http.MethodGet, URL: u} }

func TestLoopbackServerIsRefusedUnlessAllowed(t *testing.T) {
	srv, hits := server(t, ok)
	_, err := NewClient(nil).Do(t.Context(), get(srv.URL+"/run"), &Secrets{})
	if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), "127.0.0.1 is a loopback address") {
		t.Fatalf("err = %v, want refused by the guard", err)
	}
	if hits.Load() != 0 {
		t.Fatal("the refused server was reached")
	}
	resp, err := NewClient(allowOnly(t, srv)).Do(t.Context(), get(srv.URL+"/run"), &Secrets{})
	if err != nil || resp.Status != 200 || string(resp.Body) != `{"ok":true}` {
		t.Fatalf("allowed: %+v, %v", resp, err)
	}
}

// fakeDNS is a DNS server on 127.0.0.1 that answers A queries from
// answers (AAAA with no address, other names NXDOMAIN), and a resolver
// that asks it — so a test can make a hostname resolve anywhere.
func fakeDNS(t *testing.T, answers map[string]netip.Addr) *net.Resolver {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pc.Close() })
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			if resp := dnsAnswer(buf[:n], answers); resp != nil {
				_, _ = pc.WriteTo(resp, from)
			}
		}
	}()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", pc.LocalAddr().String())
	}}
}

// dnsAnswer answers a DNS query (RFC 1035 §4.1) with at most one A record.
func dnsAnswer(q []byte, answers map[string]netip.Addr) []byte {
	if len(q) < 12 {
		return nil
	}
	var labels []string
	i := 12
	for i < len(q) && q[i] != 0 {
		l := int(q[i])
		if i+1+l > len(q) {
			return nil
		}
		labels = append(labels, string(q[i+1:i+1+l]))
		i += 1 + l
	}
	i++ // the root label
	if i+4 > len(q) {
		return nil
	}
	qtype := binary.BigEndian.Uint16(q[i:])
	resp := append([]byte(nil), q[:i+4]...)  // header and question
	resp[2] = 0x80 | 0x04 | q[2]&0x01        // response, authoritative, recursion desired as asked
	resp[3] = 0x80                           // recursion available, no error
	binary.BigEndian.PutUint16(resp[6:], 0)  // answers
	binary.BigEndian.PutUint16(resp[8:], 0)  // authority
	binary.BigEndian.PutUint16(resp[10:], 0) // additional (the query's EDNS record is not echoed)
	addr, known := answers[strings.ToLower(strings.Join(labels, "."))]
	switch {
	case !known:
		resp[3] |= 3 // NXDOMAIN
	case qtype == 1 && addr.Is4(): // A
		binary.BigEndian.PutUint16(resp[6:], 1)
		ip := addr.As4()
		resp = append(resp, 0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4)
		resp = append(resp, ip[:]...)
	}
	return resp
}

func TestHostnameIsJudgedByTheAddressItResolvesTo(t *testing.T) {
	srv, hits := server(t, ok)
	port := netip.MustParseAddrPort(srv.Listener.Addr().String()).Port()
	r := fakeDNS(t, map[string]netip.Addr{
		"etl.internal.test":      netip.MustParseAddr("10.255.255.1"),
		"metadata.internal.test": netip.MustParseAddr("169.254.169.254"),
		"api.internal.test":      netip.MustParseAddr("127.0.0.1"),
	})
	for name, why := range map[string]string{
		"etl.internal.test":      "10.255.255.1 is a private address",
		"metadata.internal.test": "169.254.169.254 is a link-local address",
		"api.internal.test":      "127.0.0.1 is a loopback address",
	} {
		u := "http://" + name + ":" + itoa(port) + "/run"
		_, err := newClient(nil, r).Do(t.Context(), get(u), &Secrets{})
		if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), why) {
			t.Errorf("%s: err = %v, want refused: %s", name, err, why)
		}
	}
	if hits.Load() != 0 {
		t.Fatal("a refused name reached the server")
	}
	// The allow-list applies to the resolved address too.
	resp, err := newClient(allowOnly(t, srv), r).Do(t.Context(), get("http://api.internal.test:"+itoa(port)+"/run"), &Secrets{})
	if err != nil || resp.Status != 200 {
		t.Fatalf("allowed name: %+v, %v", resp, err)
	}
}

func itoa(p uint16) string { return strconv.Itoa(int(p)) }

func TestRedirectsAreCheckedByTheSameGuard(t *testing.T) {
	target := ""
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/final" {
			ok(w, r)
			return
		}
		http.Redirect(w, r, target, http.StatusFound)
	})
	c := NewClient(allowOnly(t, srv))
	port := srv.URL[strings.LastIndex(srv.URL, ":")+1:]
	for u, why := range map[string]string{
		"http://10.255.255.1/run":                  "10.255.255.1 is a private address",
		"http://169.254.169.254/latest/meta-data/": "169.254.169.254 is a link-local address",
		"http://[::ffff:127.0.0.2]:" + port + "/x": "127.0.0.2 is a loopback address",
		"http://[::1]:" + port + "/x":              "::1 is a loopback address",
		"http://[fd00:ec2::254]/latest/meta-data/": "fd00:ec2::254 is a private address",
	} {
		target = u
		_, err := c.Do(t.Context(), get(srv.URL+"/start"), &Secrets{})
		if !errors.Is(err, ErrBlocked) || !strings.Contains(err.Error(), why) {
			t.Errorf("redirect to %s: err = %v, want refused: %s", u, err, why)
		}
	}
	target = srv.URL + "/final"
	if resp, err := c.Do(t.Context(), get(srv.URL+"/start"), &Secrets{}); err != nil || resp.Status != 200 {
		t.Fatalf("redirect to an allowed address: %+v, %v", resp, err)
	}
}

func TestRedirectToAnotherHostDropsTheHeadersAndNeverResendsABody(t *testing.T) {
	var got http.Header
	other, _ := server(t, func(w http.ResponseWriter, r *http.Request) { got = r.Header.Clone(); ok(w, r) })
	otherPort := netip.MustParseAddrPort(other.Listener.Addr().String()).Port()
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/same" {
			got = r.Header.Clone()
			ok(w, r)
			return
		}
		to := "http://other.internal.test:" + itoa(otherPort) + "/"
		if r.URL.Path == "/stay" {
			to = "/same"
		}
		http.Redirect(w, r, to, http.StatusTemporaryRedirect)
	})
	r := fakeDNS(t, map[string]netip.Addr{"other.internal.test": netip.MustParseAddr("127.0.0.1")})
	c := newClient(allowOnly(t, srv), r)
	h := http.Header{"X-Api-Key": {"k-123456"}, "Authorization": {"Bearer t-123456"}, "Content-Type": {"application/json"}}

	if _, err := c.Do(t.Context(), Call{Method: http.MethodPost, URL: srv.URL + "/stay", Header: h, Body: []byte("{}")}, &Secrets{}); err != nil {
		t.Fatal(err)
	}
	if got.Get("X-Api-Key") != "k-123456" || got.Get("Authorization") != "Bearer t-123456" {
		t.Fatalf("same-host redirect lost the headers: %v", got)
	}
	if _, err := c.Do(t.Context(), Call{Method: http.MethodGet, URL: srv.URL + "/leave", Header: h}, &Secrets{}); err != nil {
		t.Fatal(err)
	}
	if got.Get("X-Api-Key") != "" || got.Get("Authorization") != "" || got.Get("Content-Type") != "application/json" {
		t.Fatalf("another host got the job's headers: %v", got)
	}
	// A 307 keeps a POST's body: it is not sent to another host at all.
	got = nil
	_, err := c.Do(t.Context(), Call{Method: http.MethodPost, URL: srv.URL + "/leave", Header: h, Body: []byte(`{"token":"t-123456"}`)}, &Secrets{})
	if err == nil || !strings.Contains(err.Error(), "resend the POST body") || got != nil {
		t.Fatalf("a POST body followed a redirect to another host: err %v, received %v", err, got)
	}
}

func TestCheckRedirect(t *testing.T) {
	req := func(u string) *http.Request {
		r, _ := http.NewRequest(http.MethodGet, u, nil)
		return r
	}
	if err := checkRedirect(req("http://a.example/x"), []*http.Request{req("https://a.example/")}); err == nil {
		t.Error("a redirect from https to http was followed")
	}
	if err := checkRedirect(req("https://b.example/x"), []*http.Request{req("http://a.example/")}); err != nil {
		t.Errorf("http to https: %v", err)
	}
	post := func(u string) *http.Request {
		r, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(`{"token":"s3cr3t"}`))
		return r
	}
	if err := checkRedirect(post("https://b.example/x"), []*http.Request{post("https://a.example/")}); err == nil {
		t.Error("a 307/308 resent a POST body to another host")
	}
	if err := checkRedirect(post("https://a.example/y"), []*http.Request{post("https://a.example/")}); err != nil {
		t.Errorf("a POST redirected on the same host: %v", err)
	}
	via := make([]*http.Request, maxRedirects)
	for i := range via {
		via[i] = req("https://a.example/")
	}
	if err := checkRedirect(req("https://a.example/x"), via); err == nil {
		t.Errorf("redirect %d was followed", maxRedirects+1)
	}
}

func TestTimeoutIsAnErrorThatSaysSo(t *testing.T) {
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	start := clock.Real{}.Now()
	_, err := NewClient(allowOnly(t, srv)).Do(t.Context(), Call{Method: http.MethodPost, URL: srv.URL, Timeout: 50 * time.Millisecond}, &Secrets{})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "no complete response within 50ms") {
		t.Fatalf("err = %v", err)
	}
	if d := (clock.Real{}).Now().Sub(start); d > 5*time.Second {
		t.Fatalf("the call took %s", d)
	}
}

func TestErrorsNameTheCallButNoSecret(t *testing.T) {
	sec := &Secrets{}
	sec.Add("s3cr3t-value")
	// Port 1 on the loopback is closed: the connection is refused.
	_, err := NewClient(allowList(t, "127.0.0.1/32")).Do(t.Context(),
		get("http://user:s3cr3t-value@127.0.0.1:1/hooks/s3cr3t-value?token=s3cr3t-value&x=1"), sec)
	if err == nil {
		t.Fatal("no error from a closed port")
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, "GET http://127.0.0.1:1/hooks/[redacted]: ") || strings.Contains(msg, "s3cr3t") || strings.Contains(msg, "token") || strings.Contains(msg, "user") {
		t.Fatalf("err = %q", msg)
	}
	if errors.Unwrap(err) != nil {
		t.Fatal("the unredacted error is reachable through errors.Unwrap")
	}
}

func TestDescribeAndBodyLimit(t *testing.T) {
	big := strings.Repeat("x", 2*maxResponse)
	srv, _ := server(t, func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			_, _ = w.Write([]byte(big))
			return
		}
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = w.Write([]byte("upstream down\n\x1b[31mtoken=" + r.Header.Get("Authorization") + "\x00 " + strings.Repeat("é", 600)))
	})
	c := NewClient(allowOnly(t, srv))
	resp, err := c.Do(t.Context(), get(srv.URL+"/big"), &Secrets{})
	if err != nil || len(resp.Body) != maxResponse {
		t.Fatalf("big body: %d bytes, %v", len(resp.Body), err)
	}
	sec := &Secrets{}
	sec.Add("Bearer abc-123-secret")
	call := Call{Method: http.MethodPost, URL: srv.URL + "/run?key=1", Header: http.Header{"Authorization": {"Bearer abc-123-secret"}}}
	resp, err = c.Do(t.Context(), call, sec)
	if err != nil {
		t.Fatal(err)
	}
	d := Describe(call, resp, sec)
	u, _ := url.Parse(srv.URL)
	want := "POST http://" + u.Host + "/run: status 503: upstream down [31mtoken=[redacted] éé"
	if !strings.HasPrefix(d, want) || strings.ContainsAny(d, "\x1b\x00\n") || strings.Contains(d, "abc-123") {
		t.Fatalf("Describe = %q", d)
	}
	if len(d) > len(want)+MaxSnippet {
		t.Fatalf("Describe is %d bytes", len(d))
	}
}
