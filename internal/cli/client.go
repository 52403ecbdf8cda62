package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/runtime/local"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

// client talks to a running `interlock serve`.
type client struct {
	base  string
	token string
	http  *http.Client
}

// clientFlags are the flags every API command shares.
type clientFlags struct {
	config *string
	server *string
	output *outputFlag
	fs     *flag.FlagSet
}

// badFlagError is a client flag that cannot be used; the command exits
// with ExitUsage.
type badFlagError struct{ err error }

func (e badFlagError) Error() string { return e.err.Error() }

func badFlag(format string, args ...any) error {
	return badFlagError{fmt.Errorf(format, args...)}
}

func addClientFlags(fs *flag.FlagSet) clientFlags {
	return clientFlags{
		config: fs.String("config", "interlock.yaml", "project settings: the server address is read from server.addr"),
		server: fs.String("server", "", "the API's URL (default: http://<server.addr of --config>, else http://127.0.0.1:7070); the token comes from $INTERLOCK_TOKEN; dynamodb://PREFIX[?region=R] acts on an AWS deployment's tables directly, with your AWS credentials"),
		output: addOutputFlag(fs),
		fs:     fs,
	}
}

// configGiven reports whether --config was on the command line.
func (f clientFlags) configGiven() bool {
	given := false
	if f.fs != nil {
		f.fs.Visit(func(fl *flag.Flag) { given = given || fl.Name == "config" })
	}
	return given
}

func (f clientFlags) client() (*client, error) {
	base := *f.server
	if base == "" {
		addr := pipeline.DefaultSettings().Server.Addr
		data, err := os.ReadFile(*f.config)
		switch {
		case err == nil:
			s, err := pipeline.ParseSettings(*f.config, data)
			if err != nil {
				return nil, badFlag("%v", err)
			}
			addr = s.Server.Addr
		case f.configGiven():
			// The default interlock.yaml may be absent; a named one may not.
			return nil, badFlag("--config: %v", err)
		}
		host, port, err := net.SplitHostPort(addr)
		if err == nil && (host == "" || host == "0.0.0.0" || host == "::") {
			addr = net.JoinHostPort("127.0.0.1", port)
		}
		base = "http://" + addr
	}
	if awsTarget(base) {
		// An AWS deployment's tables, opened here with the caller's AWS
		// credentials: the command's requests are served in-process by the
		// handler a control plane serves (docs/aws.md, "Control plane").
		if err := app.CheckDynamoDBURL(base); err != nil {
			return nil, badFlag("--server: %v", err)
		}
		// A request that fails in-process says why on stderr (a serve
		// would have logged it).
		log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
		h, err := local.InProcessControlPlane(context.Background(), base, log)
		if err != nil {
			return nil, fmt.Errorf("--server %s: %w", base, err)
		}
		return &client{base: "http://control-plane", http: &http.Client{Timeout: 30 * time.Second, Transport: handlerTransport{h}}}, nil
	}
	u, err := url.Parse(base)
	if err != nil {
		return nil, badFlag("--server %q: %v; want an http:// or https:// URL such as http://127.0.0.1:7070", base, err)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, badFlag("--server %q: want an http:// or https:// URL such as http://127.0.0.1:7070", base)
	}
	return &client{base: strings.TrimRight(base, "/"), token: os.Getenv("INTERLOCK_TOKEN"), http: &http.Client{Timeout: 30 * time.Second}}, nil
}

// apiError is an error answer of the API.
type apiError struct {
	status  int
	code    string
	message string
}

func (e *apiError) Error() string { return e.message }

// errUnreachable: no server answered.
var errUnreachable = errors.New("unreachable")

// call sends a request and decodes a JSON answer into out (nil: ignore),
// returning the raw body too for --output json.
func (c *client) call(ctx context.Context, method, path string, body any, out any) ([]byte, error) {
	var rd io.Reader
	if b, ok := body.([]byte); ok {
		rd = bytes.NewReader(b)
	} else if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: no answer from %s (is `interlock serve` running?): %v", errUnreachable, c.base, err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, err
	}
	if resp.StatusCode >= 300 {
		var eb api.ErrorBody
		if json.Unmarshal(raw, &eb) == nil && eb.Error.Message != "" {
			return raw, &apiError{status: resp.StatusCode, code: eb.Error.Code, message: eb.Error.Message}
		}
		return raw, &apiError{status: resp.StatusCode, message: fmt.Sprintf("%s %s: HTTP %d", method, path, resp.StatusCode)}
	}
	if out != nil {
		if err := json.Unmarshal(raw, out); err != nil {
			return raw, fmt.Errorf("unexpected answer from %s: %v", c.base, err)
		}
	}
	return raw, nil
}

// fail prints err for the command and returns the exit code that says
// what kind of problem it was.
func fail(env Env, cmd string, err error) int {
	fmt.Fprintf(env.Stderr, "interlock %s: %v\n", cmd, err)
	var ae *apiError
	switch {
	case errors.As(err, new(badFlagError)):
		return ExitUsage
	case errors.As(err, &ae) && (ae.status == http.StatusUnauthorized || ae.status == http.StatusForbidden):
		fmt.Fprintf(env.Stderr, "  (set INTERLOCK_TOKEN to a token with the needed role)\n")
		return ExitFailed
	case errors.As(err, &ae) && ae.status < 500:
		return ExitFailed
	}
	return ExitRuntime
}

func printJSON(w io.Writer, raw []byte) {
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") != nil {
		w.Write(raw)
		return
	}
	buf.WriteByte('\n')
	w.Write(buf.Bytes())
}

func when(t *time.Time) string {
	if t == nil || t.IsZero() {
		return "-"
	}
	return t.UTC().Format(time.RFC3339)
}

// handlerTransport serves a client's requests in-process with a handler
// (an AWS deployment's control plane opened by the CLI itself).
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	resp := rec.Result()
	resp.Request = r
	return resp, nil
}
