package testproc

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"
)

// EnvRequire, when "1", turns a missing backend into a failure (CI).
const EnvRequire = "INTERLOCK_REQUIRE_BACKENDS"

// Missing ends t for a backend that is not there (msg says what is
// missing): skipped, or failed under INTERLOCK_REQUIRE_BACKENDS=1.
func Missing(t testing.TB, msg string) {
	t.Helper()
	if os.Getenv(EnvRequire) == "1" {
		t.Fatalf("%s (%s=1: a missing backend is a failure)", msg, EnvRequire)
	}
	t.Skip(msg)
}

// Backend is the server the tests of a process share (ddblocal,
// pglocal): the one the environment variable Env names, once it answers,
// else one Start starts on first use.
type Backend struct {
	Name string // the harness, in messages ("ddblocal")
	Env  string
	// Answers is one try of whether the server at url answers (Poll);
	// Timeout bounds the wait for the one Env names.
	Answers func(url string) func(context.Context) error
	Timeout time.Duration
	// Start starts a server: its URL and how to stop it, or skip, why
	// there can be none here (not installed), or the error of a server
	// that is there but did not start.
	Start func() (url string, stop func(), skip string, err error)

	once sync.Once
	url  string
	stop func()
	skip string
	err  error
}

// URL returns the server's URL, setting it up on first use. It skips (or,
// with INTERLOCK_REQUIRE_BACKENDS=1, fails) t when no server can be had,
// and fails it when one should have started but did not.
func (b *Backend) URL(t testing.TB) string {
	t.Helper()
	b.once.Do(b.setup)
	switch {
	case b.err != nil:
		t.Fatalf("%s: %v", b.Name, b.err)
	case b.skip != "":
		Missing(t, b.Name+": "+b.skip)
	}
	return b.url
}

// Started is the URL of the server URL set up, "" before it did or when
// there is none.
func (b *Backend) Started() string { return b.url }

func (b *Backend) setup() {
	u := os.Getenv(b.Env)
	if u == "" {
		b.url, b.stop, b.skip, b.err = b.Start()
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.Timeout)
	defer cancel()
	if err := Poll(ctx, b.Answers(u)); err != nil {
		b.err = fmt.Errorf("%s=%s does not answer: %v", b.Env, u, err)
		return
	}
	b.url = u
}

// Stop stops the server this process started, if any.
func (b *Backend) Stop() {
	if b.stop != nil {
		b.stop()
	}
}

// Retry calls start up to tries times, until one succeeds: a port picked
// free can be taken before the server binds it.
func Retry[P any](tries int, start func() (P, error)) (p P, err error) {
	for range tries {
		if p, err = start(); err == nil {
			return p, nil
		}
	}
	return p, err
}

// Main runs a package's tests, then stop (the server they started), and
// exits with their status; a package's TestMain calls it.
func Main(m *testing.M, stop func()) {
	code := m.Run()
	stop()
	os.Exit(code)
}
