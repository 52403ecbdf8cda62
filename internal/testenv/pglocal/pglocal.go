// Package pglocal gives tests a PostgreSQL: the server named by
// INTERLOCK_TEST_POSTGRES_URL (make test-postgres starts one and sets it),
// or else one throwaway PostgreSQL that this package starts for the test
// process (initdb into a temporary directory, postgres on 127.0.0.1 and a
// free port, fsync off), stopped when the process ends. Tests isolate
// themselves with a schema each (URL), never with separate servers.
//
// A package that uses it stops the server it started with
//
//	func TestMain(m *testing.M) { pglocal.Main(m) }
//
// When PostgreSQL is not installed, URL skips the test with a message
// naming make test-postgres — unless INTERLOCK_REQUIRE_BACKENDS=1 (CI),
// where a missing backend fails the test instead.
package pglocal

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/interlockhq/interlock/internal/testenv/testproc"
)

// EnvURL names a running PostgreSQL the tests use instead of starting one.
// Its user must be allowed to create schemas in its database.
const EnvURL = "INTERLOCK_TEST_POSTGRES_URL"

// EnvRequire, when "1", turns a missing backend into a failure (CI). It is
// the variable ddblocal reads.
const EnvRequire = testproc.EnvRequire

const (
	initTimeout  = 60 * time.Second // initdb: ~1 s alone, more on a loaded 2-core machine
	startTimeout = 30 * time.Second
	stopTimeout  = 10 * time.Second
	startTries   = 3 // a port picked free can be taken before postgres binds it
)

// backend is the PostgreSQL this process's tests share; its URL is the
// server's postgres database.
var backend = testproc.Backend{Name: "pglocal", Env: EnvURL, Answers: connects, Timeout: startTimeout, Start: setup}

// Server returns the URL of the PostgreSQL server, starting one on first
// use: no schema of t's own (see URL). It skips (or, with
// INTERLOCK_REQUIRE_BACKENDS=1, fails) t when no PostgreSQL can be had, and
// fails it when one should have started but did not.
func Server(t testing.TB) string {
	t.Helper()
	return backend.URL(t)
}

var schemaSeq atomic.Int64

// URL returns a URL for t: the server's, with search_path set to a new,
// empty schema of t's own, dropped when t ends. Every connection opened
// with it creates and finds its tables there.
func URL(t testing.TB) string {
	t.Helper()
	u, schema := newSchema(t)
	t.Cleanup(func() {
		if err := admin(backend.Started(), "DROP SCHEMA "+schema+" CASCADE"); err != nil {
			t.Errorf("pglocal: drop schema %s: %v", schema, err)
		}
	})
	return u
}

// kept are the schemas of KeptURL, dropped by Stop.
var kept struct {
	sync.Mutex
	schemas []string
}

// KeptURL is URL for a schema that outlives t: it is dropped when the
// package's tests end (Main). It is for a test package that reuses
// schemas between tests (emptied, where creating one's tables is what
// costs).
func KeptURL(t testing.TB) string {
	t.Helper()
	u, schema := newSchema(t)
	kept.Lock()
	kept.schemas = append(kept.schemas, schema)
	kept.Unlock()
	return u
}

func newSchema(t testing.TB) (u, schema string) {
	t.Helper()
	srv := Server(t)
	h := fnv.New32a()
	h.Write([]byte(t.Name()))
	schema = fmt.Sprintf("t%d_%d_%08x", os.Getpid(), schemaSeq.Add(1), h.Sum32())
	if err := admin(srv, "CREATE SCHEMA "+schema); err != nil {
		t.Fatalf("pglocal: create schema %s: %v", schema, err)
	}
	u, err := WithSearchPath(srv, schema)
	if err != nil {
		t.Fatalf("pglocal: %v", err)
	}
	return u, schema
}

// WithSearchPath returns raw with its search_path parameter set to schema.
func WithSearchPath(raw, schema string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("parse %s: %v", EnvURL, err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// admin runs one statement on a connection of its own.
func admin(srv, stmt string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, srv)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	_, err = conn.Exec(ctx, stmt)
	return err
}

// Main runs the package's tests and stops the PostgreSQL they started, if
// any; a package's TestMain calls it.
func Main(m *testing.M) { testproc.Main(m, Stop) }

// Stop drops the schemas KeptURL made and stops the PostgreSQL this
// process started, if any.
func Stop() {
	kept.Lock()
	if base := backend.Started(); len(kept.schemas) > 0 && base != "" {
		_ = admin(base, "DROP SCHEMA "+strings.Join(kept.schemas, ", ")+" CASCADE")
	}
	kept.schemas = nil
	kept.Unlock()
	backend.Stop()
}

// setup starts PostgreSQL when no server is named (Backend.Start).
func setup() (url string, stop func(), skip string, err error) {
	bin, err := BinDir()
	if err != nil {
		return "", nil, err.Error() + "; install PostgreSQL (apt-get install postgresql) and run `make test-postgres` (or set " + EnvURL + ")", nil
	}
	cred, err := credential()
	if err != nil {
		return "", nil, err.Error() + "; run `make test-postgres` (or set " + EnvURL + ")", nil
	}
	p, err := testproc.Retry(startTries, func() (*process, error) { return start(bin, cred, false) })
	if err != nil {
		return "", nil, "", err
	}
	return p.url, p.stop, "", nil
}

// BinDir finds the directory holding initdb and postgres: PATH first, then
// Debian's /usr/lib/postgresql/<version>/bin (the newest).
func BinDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		dir := filepath.Dir(p)
		if _, err := os.Stat(filepath.Join(dir, "postgres")); err == nil {
			return dir, nil
		}
		if real, err := filepath.EvalSymlinks(p); err == nil {
			if _, err := os.Stat(filepath.Join(filepath.Dir(real), "postgres")); err == nil {
				return filepath.Dir(real), nil
			}
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	newest, best := "", -1
	for _, d := range dirs {
		v, err := strconv.Atoi(filepath.Base(filepath.Dir(d)))
		if err != nil || v <= best {
			continue
		}
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			newest, best = d, v
		}
	}
	if newest == "" {
		return "", errors.New("PostgreSQL is not installed (no initdb on PATH or under /usr/lib/postgresql/*/bin)")
	}
	return newest, nil
}

// credential is who runs initdb and postgres: both refuse root, so as root
// they run as the postgres user (as `setpriv --reuid=postgres
// --regid=postgres --init-groups` would: the credential is set in the child
// before exec, which also keeps the parent-death signal that setpriv's own
// credential change would clear). nil: the current user.
func credential() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	u, err := user.Lookup("postgres")
	if err != nil {
		return nil, fmt.Errorf("running as root and there is no postgres user to run PostgreSQL as (%v)", err)
	}
	uid, _ := strconv.ParseUint(u.Uid, 10, 32)
	gid, _ := strconv.ParseUint(u.Gid, 10, 32)
	c := &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
	groups, _ := u.GroupIds()
	for _, g := range groups {
		if n, err := strconv.ParseUint(g, 10, 32); err == nil {
			c.Groups = append(c.Groups, uint32(n))
		}
	}
	return c, nil
}

// process is a PostgreSQL this package started.
type process struct {
	url  string
	dir  string
	bin  string
	cred *syscall.Credential
	port int
	*testproc.Server
}

// start initialises a cluster in a new temporary directory and runs
// postgres on a free port (run), waiting (bounded) until it accepts
// connections.
func start(bin string, cred *syscall.Credential, durable bool) (*process, error) {
	dir, err := os.MkdirTemp("", "pglocal-")
	if err != nil {
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			os.RemoveAll(dir)
			return nil, err
		}
	}
	ictx, cancel := context.WithTimeout(context.Background(), initTimeout)
	defer cancel()
	initdb := exec.CommandContext(ictx, filepath.Join(bin, "initdb"), "-D", filepath.Join(dir, "data"), "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %v\n%s", err, out)
	}
	port, err := testproc.FreePort()
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	p, err := run(bin, cred, dir, port, durable)
	if err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return p, nil
}

// run starts postgres on the cluster in dir/data and port (testproc.Start:
// the postmaster dies with the test process, and its backends exit when
// they see it gone), and waits (bounded) until it accepts connections.
//
// fsync is off (the tests survive no power cut); so is synchronous_commit
// unless durable: without it a commit acknowledged just before a crash of
// PostgreSQL itself (Own.Crash) may be lost, as PostgreSQL documents.
func run(bin string, cred *syscall.Credential, dir string, port int, durable bool) (*process, error) {
	syncCommit := "off"
	if durable {
		syncCommit = "on"
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", filepath.Join(dir, "data"),
		"-c", "listen_addresses=127.0.0.1", "-p", strconv.Itoa(port), "-c", "unix_socket_directories="+dir,
		"-c", "fsync=off", "-c", "synchronous_commit="+syncCommit, "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "shared_buffers=32MB")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	server, err := testproc.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("start postgres: %v", err)
	}
	p := &process{
		url: fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port),
		dir: dir, bin: bin, cred: cred, port: port, Server: server,
	}
	if err := p.Ready(startTimeout, connects(p.url)); err != nil {
		p.kill()
		return nil, fmt.Errorf("postgres on port %d is not ready after %s (%v); its output:\n%s", port, startTimeout, err, p.Out.String())
	}
	return p, nil
}

// connects is one try of whether the server at u accepts a connection.
func connects(u string) func(context.Context) error {
	return func(ctx context.Context) error {
		conn, err := pgx.Connect(ctx, u)
		if err == nil {
			err = conn.Ping(ctx)
			conn.Close(context.Background())
		}
		return err
	}
}

// stop asks the postmaster for a fast shutdown (SIGINT), kills it if it
// lingers, and removes its directory.
func (p *process) stop() {
	defer os.RemoveAll(p.dir)
	p.end(syscall.SIGINT)
}

// kill ends the postmaster at once and keeps its directory.
func (p *process) kill() { p.end(syscall.SIGKILL) }

// end sends sig to the postmaster and waits (bounded, then SIGKILL to its
// process group) until it exited.
func (p *process) end(sig syscall.Signal) { p.End(sig, false, stopTimeout) }
