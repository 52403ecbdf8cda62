package browser_test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/interlockhq/interlock/internal/testenv/browser"
)

// The harness itself: a page loads, its script runs, a click reaches the
// server, dialogs are seen and accepted, the viewport narrows, and a
// screenshot is a PNG.
func TestBrowser(t *testing.T) {
	clicked := make(chan string, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><meta name="viewport" content="width=device-width">
<title>harness</title><p id="msg">static</p><button id="go">go</button>
<script>
document.getElementById('msg').textContent = 'scripted';
document.getElementById('go').onclick = function () {
  if (confirm('sure?')) fetch('/clicked', {method: 'POST'}).then(function () { document.body.dataset.done = '1'; });
};
</script>`)
		case "/clicked":
			clicked <- r.Method
		case "/csp":
			w.Header().Set("Content-Security-Policy", "script-src 'self'")
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, `<!doctype html><title>csp</title><script>document.title = 'ran'</script>`)
		}
	}))
	defer srv.Close()

	b := browser.New(t)
	b.Open(srv.URL)
	if got := browser.Run(b, chromedp.Text(chromedp.ID("msg"))); got != "scripted" {
		t.Fatalf("#msg = %q, want the script's text", got)
	}
	b.Do(chromedp.Click(chromedp.ID("go")))
	b.WaitFor("the click's request to finish", `document.body.dataset.done === '1'`)
	if m := <-clicked; m != "POST" {
		t.Fatalf("click sent %s", m)
	}
	if d := b.Dialogs(); len(d) != 1 || d[0].Type != "confirm" || d[0].Message != "sure?" {
		t.Fatalf("dialogs %+v, want the one confirm", d)
	}

	// A Content-Security-Policy violation is a problem the harness
	// reports.
	if p := b.Problems(); len(p) != 0 {
		t.Fatalf("problems before the violation: %q", p)
	}
	b.Open(srv.URL + "/csp")
	eventuallyProblem(t, b, "Content Security Policy")
	if title := browser.Eval[string](b, `document.title`); title != "csp" {
		t.Fatalf("the inline script ran under the policy (title %q)", title)
	}

	b.Viewport(390, 844)
	if w := browser.Eval[int](b, `document.documentElement.clientWidth`); w != 390 {
		t.Fatalf("viewport width %d, want 390", w)
	}
	shots := t.TempDir()
	t.Setenv(browser.EnvScreenshots, shots)
	path := b.Screenshot("harness")
	for _, p := range []string{path, filepath.Join(shots, "harness.png")} {
		png, err := os.ReadFile(p)
		if err != nil || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
			t.Fatalf("%s: not a PNG (%v)", p, err)
		}
	}
}

// Without a browser, the test skips naming how to install one; under
// INTERLOCK_REQUIRE_BACKENDS=1 that is a failure (checked in a child test
// process, whose failure is the expected outcome).
func TestMissingBrowser(t *testing.T) {
	if os.Getenv("BROWSER_CHILD") == "1" {
		browser.New(t)
		return
	}
	for _, require := range []string{"", "1"} {
		out, err := child(t, "TestMissingBrowser", "BROWSER_CHILD=1", browser.EnvChromium+"=/nonexistent/chromium", browser.EnvRequire+"="+require)
		switch {
		case require == "" && (err != nil || !strings.Contains(out, "--- SKIP") || !strings.Contains(out, "nonexistent")):
			t.Fatalf("without the browser and without %s: want a skip naming the program, got %v:\n%s", browser.EnvRequire, err, out)
		case require == "1" && (err == nil || !strings.Contains(out, "--- FAIL") || !strings.Contains(out, "a missing backend is a failure")):
			t.Fatalf("without the browser under %s=1: want a failure, got %v:\n%s", browser.EnvRequire, err, out)
		}
	}
}

// child runs one test of this package in a new process with env added.
func child(t *testing.T, name string, env ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run", "^"+name+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// eventuallyProblem waits (bounded) for a problem containing what.
func eventuallyProblem(t *testing.T, b *browser.Browser, what string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		for _, p := range b.Problems() {
			if strings.Contains(p, what) {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no problem mentions %q: %q", what, b.Problems())
		}
		time.Sleep(50 * time.Millisecond)
	}
}
