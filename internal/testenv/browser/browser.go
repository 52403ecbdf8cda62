// Package browser gives tests a real headless Chromium driven over the
// DevTools protocol (github.com/chromedp/chromedp, which talks to it over a
// pipe and opens no port): one browser and one tab per test, a fresh
// profile each time, every step bounded, screenshots saved as PNGs.
//
// The browser is Debian's package chromium (/usr/bin/chromium), or the
// program named by INTERLOCK_CHROMIUM. When neither is there the test
// skips, naming how to install it — unless INTERLOCK_REQUIRE_BACKENDS=1
// (CI, whose .ci/run installs the package), where a missing browser fails
// the test instead.
//
// Screenshots go to the test's artifact directory (t.ArtifactDir: kept
// under the -outputdir when go test runs with -artifacts, else removed
// with the test) and, when INTERLOCK_SCREENSHOTS names a directory, there
// too (make screenshots points it at docs/screenshots).
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	cdplog "github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/interlockhq/interlock/internal/seen"
	"github.com/interlockhq/interlock/internal/testenv/testproc"
)

const (
	// EnvChromium names the browser program to run instead of
	// /usr/bin/chromium.
	EnvChromium = "INTERLOCK_CHROMIUM"
	// EnvRequire, when "1", turns a missing browser into a failure (CI);
	// the variable every harness of internal/testenv reads.
	EnvRequire = testproc.EnvRequire
	// EnvScreenshots names a directory that receives a copy of every
	// screenshot (make screenshots: docs/screenshots).
	EnvScreenshots = "INTERLOCK_SCREENSHOTS"
	// DefaultPath is where Debian's package chromium puts the browser.
	DefaultPath = "/usr/bin/chromium"
)

const (
	// StartTimeout bounds the browser's start: ~1 s alone, more on a
	// loaded 2-core machine.
	StartTimeout = 60 * time.Second
	// StepTimeout bounds each step (a navigation, a click, a wait).
	StepTimeout = 20 * time.Second
	// Width and Height are the window's size in CSS pixels.
	Width, Height = 1280, 900
)

// Path returns the browser program to run, or an error naming how to get
// one.
func Path() (string, error) {
	if p := os.Getenv(EnvChromium); p != "" {
		if _, err := exec.LookPath(p); err != nil {
			return "", fmt.Errorf("%s=%s: not an executable program (%v): point it at a Chromium or Chrome, or unset it and install Debian's package chromium", EnvChromium, p, err)
		}
		return p, nil
	}
	if _, err := exec.LookPath(DefaultPath); err == nil {
		return DefaultPath, nil
	}
	return "", fmt.Errorf("no Chromium at %s: install Debian's package (apt-get install --no-install-recommends chromium) or set %s to a Chromium or Chrome program", DefaultPath, EnvChromium)
}

// A Browser is one headless Chromium with one tab, closed when the test
// ends.
type Browser struct {
	t testing.TB // the test that failures go to (For)
	*tab
}

// tab is what the Browsers of one browser share.
type tab struct {
	ctx context.Context // the tab; the browser lives as long as it does
	log *testproc.Output

	dialogs  seen.List[Dialog]
	mu       sync.Mutex
	problems []string // the pages' uncaught exceptions, console errors, browser errors (the first 50)
}

// For is the same browser reporting to t: a subtest's failures must go
// to the subtest.
func (b *Browser) For(t testing.TB) *Browser { return &Browser{t: t, tab: b.tab} }

// A Dialog is a JavaScript dialog the page opened (alert, confirm,
// prompt); the browser accepts each one.
type Dialog struct {
	Type    string
	Message string
}

// New starts a browser for t, or skips t (fails it under
// INTERLOCK_REQUIRE_BACKENDS=1) when there is none.
func New(t testing.TB) *Browser {
	t.Helper()
	path, err := Path()
	if err != nil {
		testproc.Missing(t, "browser: "+err.Error())
	}
	b := &Browser{t: t, tab: &tab{log: &testproc.Output{}}}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.NoSandbox, // mandatory as root; the pages are our own
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(Width, Height),
		chromedp.CombinedOutput(b.log),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(allocCtx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first action binds the browser's lifetime to the context it
	// gets: start it on ctx itself, bounded by a timer that cancels it.
	timer := time.AfterFunc(StartTimeout, cancel)
	err = chromedp.Do(ctx)
	if !timer.Stop() && err == nil {
		err = errors.New("start timed out")
	}
	if err != nil {
		t.Fatalf("browser: starting %s: %v\n%s", path, err, b.log.String())
	}
	b.ctx = ctx
	b.watch()
	return b
}

// watch accepts every JavaScript dialog (recording it) and records the
// page's uncaught exceptions and console errors, quoted when a step fails.
func (b *Browser) watch() {
	dialogs := chromedp.Events(b.ctx, page.JavascriptDialogOpening)
	go func() {
		for ev, err := range dialogs {
			if err != nil {
				return
			}
			b.dialogs.Add(Dialog{Type: string(ev.Type), Message: ev.Message})
			ctx, cancel := context.WithTimeout(b.ctx, StepTimeout)
			_, _ = chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
			cancel()
		}
	}()
	exceptions := chromedp.Events(b.ctx, runtime.ExceptionThrown)
	go func() {
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			text := ev.ExceptionDetails.Text
			if ev.ExceptionDetails.Exception != nil && ev.ExceptionDetails.Exception.Description != "" {
				text = ev.ExceptionDetails.Exception.Description
			}
			b.problem("exception: " + text)
		}
	}()
	// The browser's own messages: a Content-Security-Policy violation, a
	// failed load.
	entries := chromedp.Events(b.ctx, cdplog.EntryAdded)
	go func() {
		for ev, err := range entries {
			if err != nil {
				return
			}
			if e := ev.Entry; e != nil && (e.Level == cdplog.EntryLevelError || e.Level == cdplog.EntryLevelWarning) {
				b.problem("log." + string(e.Source) + ": " + e.Text)
			}
		}
	}()
	console := chromedp.Events(b.ctx, runtime.ConsoleAPICalled)
	go func() {
		for ev, err := range console {
			if err != nil {
				return
			}
			if ev.Type != runtime.ConsoleAPICalledTypeError && ev.Type != runtime.ConsoleAPICalledTypeWarning {
				continue
			}
			var args []string
			for _, a := range ev.Args {
				if len(a.Value) > 0 {
					args = append(args, string(a.Value))
				} else {
					args = append(args, a.Description)
				}
			}
			b.problem("console." + string(ev.Type) + ": " + strings.Join(args, " "))
		}
	}()
}

func (b *Browser) problem(s string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.problems) < 50 {
		b.problems = append(b.problems, s)
	}
}

// Dialogs are the JavaScript dialogs the pages opened so far.
func (b *Browser) Dialogs() []Dialog {
	return b.dialogs.All()
}

// Problems are the pages' uncaught exceptions, console errors and
// warnings, and the browser's error and warning messages so far (a
// Content-Security-Policy violation, a resource that failed to load).
func (b *Browser) Problems() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.problems...)
}

// Context is the tab's context, for chromedp calls the helpers here do not
// cover; bound each call yourself.
func (b *Browser) Context() context.Context { return b.ctx }

// Do runs the steps in order, each bounded by StepTimeout, and fails the
// test at the first error.
func (b *Browser) Do(steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	for i, s := range steps {
		ctx, cancel := context.WithTimeout(b.ctx, StepTimeout)
		err := chromedp.Do(ctx, s)
		cancel()
		if err != nil {
			b.t.Fatalf("browser: step %d of %d: %v%s", i+1, len(steps), err, b.context())
		}
	}
}

// Run runs one step that returns a value, bounded by StepTimeout, and
// fails the test when it errs.
func Run[T any](b *Browser, step chromedp.Action[T]) T {
	b.t.Helper()
	v, err := TryRun(b, step)
	if err != nil {
		b.t.Fatalf("browser: %v%s", err, b.context())
	}
	return v
}

// TryRun is Run returning the error (a step expected to fail).
func TryRun[T any](b *Browser, step chromedp.Action[T]) (T, error) {
	ctx, cancel := context.WithTimeout(b.ctx, StepTimeout)
	defer cancel()
	return chromedp.Run(ctx, step)
}

// Eval evaluates a JavaScript expression in the page and decodes its
// value.
func Eval[T any](b *Browser, expr string) T {
	b.t.Helper()
	return Run(b, chromedp.Evaluate[T](expr))
}

// Open navigates to url and waits for the page's load event.
func (b *Browser) Open(url string) {
	b.t.Helper()
	b.Do(chromedp.Navigate(url))
}

// WaitFor evaluates the JavaScript expression every 50 ms until it is
// true, bounded by StepTimeout; an evaluation that fails (the page is
// navigating) is retried. On time out it fails the test naming what it
// waited for.
func (b *Browser) WaitFor(what, expr string) {
	b.t.Helper()
	deadline := time.Now().Add(StepTimeout)
	var last error
	for {
		ctx, cancel := context.WithTimeout(b.ctx, 5*time.Second)
		ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr))
		cancel()
		if err == nil && ok {
			return
		}
		last = err
		if time.Now().After(deadline) {
			b.t.Fatalf("browser: waiting %s for %s (%s): last error %v%s", StepTimeout, what, expr, last, b.context())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Viewport sets the page's size in CSS pixels (a phone: 390 × 844).
func (b *Browser) Viewport(width, height int64) {
	b.t.Helper()
	b.Do(chromedp.EmulateViewport(width, height))
}

// Screenshot saves a PNG of the whole page as name.png in the test's
// artifact directory (and in INTERLOCK_SCREENSHOTS when set) and returns
// its path.
func (b *Browser) Screenshot(name string) string {
	b.t.Helper()
	png := b.fullScreenshot()
	dir := artifactDir(b.t)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		b.t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	if extra := os.Getenv(EnvScreenshots); extra != "" {
		if err := os.MkdirAll(extra, 0o755); err != nil {
			b.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(extra, name+".png"), png, 0o644); err != nil {
			b.t.Fatal(err)
		}
	}
	b.t.Logf("screenshot %s (%d bytes)", path, len(png))
	return path
}

// fullScreenshot takes a PNG of the whole page once it has been laid out.
// Chromium refuses a capture while the page's layout is still empty
// ("Cannot take screenshot with 0 width", seen on a busy machine just
// after a navigation or a viewport change): the capture waits for a laid
// out document and is tried again on that refusal, within StepTimeout.
func (b *Browser) fullScreenshot() []byte {
	b.t.Helper()
	b.WaitFor("a laid out page", `document.readyState === "complete" && document.documentElement.getBoundingClientRect().width > 0`)
	deadline := time.Now().Add(StepTimeout)
	for {
		png, err := TryRun(b, chromedp.FullScreenshot(100)) // quality 100: PNG
		if err == nil {
			return png
		}
		if !strings.Contains(err.Error(), "0 width") && !strings.Contains(err.Error(), "0 height") || time.Now().After(deadline) {
			b.t.Fatalf("browser: %v%s", err, b.context())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// artifactDir is t's artifact directory when t has one (a *testing.T or
// *testing.B), else a temporary directory.
func artifactDir(t testing.TB) string {
	if a, ok := t.(interface{ ArtifactDir() string }); ok {
		return a.ArtifactDir()
	}
	return t.TempDir()
}

// context is what a failure message adds: the page's URL, its problems
// and the browser's log.
func (b *Browser) context() string {
	var sb strings.Builder
	ctx, cancel := context.WithTimeout(b.ctx, 2*time.Second)
	if u, err := chromedp.Run(ctx, chromedp.Location()); err == nil {
		fmt.Fprintf(&sb, "\npage: %s", u)
	}
	cancel()
	for _, p := range b.Problems() {
		fmt.Fprintf(&sb, "\n  %s", p)
	}
	var log []string
	for _, l := range strings.Split(b.log.String(), "\n") {
		// Chromium complains of the missing D-Bus at every start; noise.
		if l != "" && !strings.Contains(l, "dbus") && !strings.Contains(l, "unexpected operator") {
			log = append(log, l)
		}
	}
	if len(log) > 0 {
		fmt.Fprintf(&sb, "\nbrowser log:\n%s", strings.Join(log, "\n"))
	}
	return sb.String()
}
