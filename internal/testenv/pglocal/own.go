package pglocal

import (
	"os"
	"sync"
	"syscall"
	"testing"

	"github.com/interlockhq/interlock/internal/testenv/testproc"
)

// An Own is a PostgreSQL of one test's own, for a test that crashes and
// restarts the database under its clients — which the shared server
// (Server, URL) must never be. It is started even when
// INTERLOCK_TEST_POSTGRES_URL names a server: that one is not the test's
// to restart. Its commits are durable across a crash of PostgreSQL
// (synchronous_commit on; fsync stays off: the machine does not crash).
type Own struct {
	mu   sync.Mutex
	p    *process // the running postmaster; nil while down
	dir  string
	bin  string
	cred *syscall.Credential
	port int
	url  string
}

// StartOwn initialises a cluster and starts PostgreSQL on it for t alone,
// stopped and removed when t ends. It skips (or, with
// INTERLOCK_REQUIRE_BACKENDS=1, fails) t when PostgreSQL is not installed.
func StartOwn(t testing.TB) *Own {
	t.Helper()
	bin, err := BinDir()
	if err != nil {
		testproc.Missing(t, "pglocal: "+err.Error()+"; install PostgreSQL (apt-get install postgresql)")
	}
	cred, err := credential()
	if err != nil {
		testproc.Missing(t, "pglocal: "+err.Error())
	}
	p, err := testproc.Retry(startTries, func() (*process, error) { return start(bin, cred, true) })
	if err != nil {
		t.Fatalf("pglocal: %v", err)
	}
	o := &Own{p: p, dir: p.dir, bin: bin, cred: cred, port: p.port, url: p.url}
	t.Cleanup(func() {
		o.mu.Lock()
		defer o.mu.Unlock()
		if o.p != nil {
			o.p.end(syscall.SIGINT)
		}
		os.RemoveAll(o.dir)
	})
	return o
}

// URL is the server's postgres database; it stays the same across
// restarts.
func (o *Own) URL() string { return o.url }

// Crash stops PostgreSQL as `pg_ctl stop -m immediate` does (SIGQUIT to
// the postmaster: every backend ends at once, without a checkpoint; the
// next start recovers from the WAL) and returns once it has exited. The
// cluster stays, for Start.
func (o *Own) Crash(t testing.TB) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.p == nil {
		t.Fatal("pglocal: Crash: PostgreSQL is not running")
	}
	o.p.end(syscall.SIGQUIT)
	o.p = nil
}

// Start starts PostgreSQL again on the same cluster and port after Crash
// (the second half of `pg_ctl restart -m immediate`) and returns once it
// accepts connections.
func (o *Own) Start(t testing.TB) {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.p != nil {
		t.Fatal("pglocal: Start: PostgreSQL is already running")
	}
	p, err := run(o.bin, o.cred, o.dir, o.port, true)
	if err != nil {
		t.Fatalf("pglocal: restart: %v", err)
	}
	o.p = p
}
