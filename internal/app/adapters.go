package app

import (
	"context"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
	"github.com/interlockhq/interlock/internal/store/sqlite"
)

// The app alone builds adapters (stores, sinks, job runners): the CLI and
// the runtimes ask it here rather than importing a backend (the layering
// test, internal/archtest, holds them to it).

// CheckDynamoDBURL checks a dynamodb://PREFIX[?region=…&endpoint=…] URL
// without connecting (--server and --store give one).
func CheckDynamoDBURL(s string) error {
	_, _, _, err := ddbstore.ParseURL(s)
	return err
}

// OpenDynamoDBTables opens the DynamoDB store on tables through client: a
// Lambda function's, whose environment names the tables.
func OpenDynamoDBTables(ctx context.Context, client *dynamodb.Client, tables ddbstore.Tables, retention time.Duration) (*ddbstore.Store, error) {
	return ddbstore.Open(ctx, ddbstore.Config{Client: client, Tables: tables, Retention: retention})
}

// OpenScratch opens a throwaway SQLite store at path: the simulator's,
// which no other process shares.
func OpenScratch(ctx context.Context, path string) (store.Store, error) {
	return sqlite.OpenScratch(ctx, path)
}

// PutSensorItem writes a sensor to an AWS deployment's tables the way
// anyone with DynamoDB access would: one PutItem of the sensor item into
// the control table, for its stream-router to judge. It returns the table
// and the item's name, for the caller to say what it wrote.
func PutSensorItem(ctx context.Context, storeURL, pipelineID, key string, data sensor.Object) (table, item string, err error) {
	st, err := OpenDynamoDB(ctx, storeURL, 0)
	if err != nil {
		return "", "", err
	}
	defer st.Close()
	if err := st.PutSensorItem(ctx, pipelineID, key, data); err != nil {
		return "", "", err
	}
	return st.Tables().Control, ddbstore.ItemName(ddbstore.SensorItem{PipelineID: pipelineID, Key: key}), nil
}
