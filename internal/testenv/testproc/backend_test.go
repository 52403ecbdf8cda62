package testproc

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestBackendStartsOnce: the tests of a process share one server, started
// on first use and stopped by Stop.
func TestBackendStartsOnce(t *testing.T) {
	t.Setenv("INTERLOCK_TESTPROC_URL", "")
	starts, stops := 0, 0
	b := &Backend{Name: "t", Env: "INTERLOCK_TESTPROC_URL", Start: func() (string, func(), string, error) {
		starts++
		return "started", func() { stops++ }, "", nil
	}}
	if b.Started() != "" {
		t.Fatalf("Started before use = %q", b.Started())
	}
	if a, c := b.URL(t), b.URL(t); a != "started" || c != "started" || starts != 1 {
		t.Fatalf("URL = %q, %q after %d starts; want one start", a, c, starts)
	}
	b.Stop()
	if stops != 1 {
		t.Fatalf("stops = %d", stops)
	}
}

// TestBackendUsesTheNamedServer: a server the environment names is used,
// once it answers, and none is started.
func TestBackendUsesTheNamedServer(t *testing.T) {
	t.Setenv("INTERLOCK_TESTPROC_URL", "named")
	tries := 0
	b := &Backend{Name: "t", Env: "INTERLOCK_TESTPROC_URL", Timeout: time.Minute,
		Answers: func(url string) func(context.Context) error {
			return func(context.Context) error {
				if tries++; url != "named" || tries < 2 {
					return errors.New("not yet")
				}
				return nil
			}
		},
		Start: func() (string, func(), string, error) {
			t.Fatal("started a server though the environment names one")
			return "", nil, "", nil
		}}
	if u := b.URL(t); u != "named" || tries != 2 {
		t.Fatalf("URL = %q after %d tries", u, tries)
	}
	b.Stop()
}

func TestRetry(t *testing.T) {
	calls := 0
	n, err := Retry(3, func() (int, error) {
		if calls++; calls < 3 {
			return 0, errors.New("port taken")
		}
		return calls, nil
	})
	if n != 3 || err != nil {
		t.Fatalf("Retry = %d, %v", n, err)
	}
	calls = 0
	if _, err := Retry(3, func() (int, error) { calls++; return 0, errors.New("no") }); err == nil || calls != 3 {
		t.Fatalf("Retry of a start that always fails = %v after %d calls", err, calls)
	}
}
