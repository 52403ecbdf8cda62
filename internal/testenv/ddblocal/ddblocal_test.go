package ddblocal_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

// TestListTables: the endpoint answers, and a table created under one
// test's prefix is listed (DynamoDB Local really is there, shared by every
// client of the process).
func TestListTables(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c := ddblocal.Client(t)
	name := ddblocal.Prefix(t) + "-probe"
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String(name),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	out, err := ddblocal.NewClient(ddblocal.Endpoint(t)).ListTables(ctx, &dynamodb.ListTablesInput{ExclusiveStartTableName: aws.String(name[:len(name)-1])})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.TableNames) == 0 || out.TableNames[0] != name {
		t.Fatalf("ListTables = %v, want %s first", out.TableNames, name)
	}
}

func TestPrefixUnique(t *testing.T) {
	a, b := ddblocal.Prefix(t), ddblocal.Prefix(t)
	if a == b || !strings.HasPrefix(a, "il") {
		t.Fatalf("prefixes %q and %q", a, b)
	}
}
