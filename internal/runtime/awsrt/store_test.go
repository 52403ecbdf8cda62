package awsrt

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
)

// helperEnv, when set, makes the test binary run as the function it names
// (lambda.Start on the Runtime API in AWS_LAMBDA_RUNTIME_API), as its main
// would: the outbox and start-up tests run the functions as processes.
const helperEnv = "AWSRT_TEST_FUNCTION"

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
		ddblocal.Main(m)
	case FnEventPublisher:
		Main(PublisherFromEnv)
	case FnAPI:
		Main(APIFromEnv)
	case FnEventSink:
		Main(SinkFromEnv)
	case FnAlertDispatcher:
		Main(DispatcherFromEnv)
	case FnStreamRouter:
		Main(func(ctx context.Context, env Env) (any, error) { return RouterFromEnv(ctx, env) })
	}
	os.Exit(3)
}

// ddbEnv is a deployment's tables on DynamoDB Local and the store on them.
type ddbEnv struct {
	client *dynamodb.Client
	tables ddbstore.Tables
	store  *ddbstore.Store
}

// newDDBEnv creates the four tables under a prefix of the test's and
// opens the store with retention (0: the default).
func newDDBEnv(t *testing.T, retention time.Duration) ddbEnv {
	t.Helper()
	ctx := context.Background()
	c := ddblocal.Client(t)
	tb := ddbstore.TablesFor(ddblocal.Prefix(t))
	if err := ddbstore.CreateTables(ctx, c, tb); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ddbstore.DeleteTables(context.Background(), c, tb) })
	st, err := ddbstore.Open(ctx, ddbstore.Config{Client: c, Tables: tb, Retention: retention})
	if err != nil {
		t.Fatal(err)
	}
	return ddbEnv{client: c, tables: tb, store: st}
}

// newStore is the store the AWS functions use: DynamoDB's, on DynamoDB
// Local.
func newStore(t *testing.T) store.Store { return newDDBEnv(t, 0).store }

// alertKey is the period of the test events.
func alertKey() run.Key {
	return run.Key{PipelineID: "orders", ScheduleID: "cron", Period: "2099-03-07"}
}
