package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/cli"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/runtime/local"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

// operatorToken is the world's control plane's operator (admin) token.
const operatorToken = "e2e-operator-token-0123456789"

// controlPlane is the deployment's control plane as `serve --store
// dynamodb://…` serves it — the same handler (local.ControlPlaneHandler)
// on the world's tables and clock — behind an HTTP listener: operator
// actions reach the tables through the /v1 API and the CLI, as an
// operator's would. Opened at its first use.
func (w *world) controlPlane() string {
	if w.cpURL != "" {
		return w.cpURL
	}
	a, err := app.OpenControlPlane(w.ctx, w.openStore(), "tables "+w.tables.Control, app.Options{Clock: w.clk, Logger: discard()})
	if err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { _ = a.Close() })
	h, err := local.ControlPlaneHandler(w.ctx, a, []api.Token{{Name: "oncall", Role: pipeline.RoleAdmin, Secret: operatorToken}})
	if err != nil {
		w.t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	w.t.Cleanup(srv.Close)
	w.cpURL = srv.URL
	return w.cpURL
}

// api sends a /v1 request to the control plane with the operator's token
// and returns the status and the body.
func (w *world) api(method, path string, body any) (int, string) {
	w.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			w.t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(w.ctx, method, w.controlPlane()+path, rd)
	if err != nil {
		w.t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+operatorToken)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		w.t.Fatal(err)
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(out)
}

// cli runs an interlock command against the control plane (--server), as
// an operator's shell would, and returns its exit status and output.
func (w *world) cli(args ...string) (int, string) {
	w.t.Helper()
	var out bytes.Buffer
	// The CLI reads its token from the environment; every world's control
	// plane takes the same one, so the parallel scenarios can share it.
	tokenOnce.Do(func() { _ = os.Setenv("INTERLOCK_TOKEN", operatorToken) })
	code := cli.Main(context.WithoutCancel(w.ctx), cli.Env{Args: append(args, "--server", w.controlPlane()), Stdout: &out, Stderr: &out})
	return code, out.String()
}

var tokenOnce sync.Once

// rfc3339 is t as the API takes it ("" for the zero time).
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}

// refusedAs reports whether an API status says the request was refused
// (4xx), for a timeline action marked refused: true.
func refusedAs(code int) bool { return code >= 400 && code < 500 }

// apiFailed names an unexpected answer.
func apiFailed(line int, what string, code int, body string) string {
	return fmt.Sprintf("timeline line %d: %s: %d %s", line, what, code, strings.TrimSpace(body))
}
