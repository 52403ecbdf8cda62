package ddbstream_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
	"github.com/interlockhq/interlock/internal/testenv/ddbstream"
)

func TestMain(m *testing.M) { ddblocal.Main(m) }

// table creates a table with a NEW_IMAGE stream and puts n items (PK
// "item", SK "0001"…) with a nested map, a number and a binary value.
func table(t *testing.T, n int) (*dynamodb.Client, string) {
	t.Helper()
	ctx := context.Background()
	c := ddblocal.Client(t)
	name := ddblocal.Prefix(t) + "-stream"
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:   aws.String(name),
		BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{
			{AttributeName: aws.String("PK"), AttributeType: types.ScalarAttributeTypeS},
			{AttributeName: aws.String("SK"), AttributeType: types.ScalarAttributeTypeS},
		},
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String("PK"), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String("SK"), KeyType: types.KeyTypeRange},
		},
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_, _ = c.DeleteTable(context.Background(), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	})
	for i := 1; i <= n; i++ {
		_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(name), Item: map[string]types.AttributeValue{
			"PK": &types.AttributeValueMemberS{Value: "item"}, "SK": &types.AttributeValueMemberS{Value: fmt.Sprintf("%04d", i)},
			"n":    &types.AttributeValueMemberN{Value: "9007199254740993"},
			"bin":  &types.AttributeValueMemberB{Value: []byte{0, 1, 2}},
			"data": &types.AttributeValueMemberM{Value: map[string]types.AttributeValue{"ok": &types.AttributeValueMemberBOOL{Value: true}, "l": &types.AttributeValueMemberL{Value: []types.AttributeValue{&types.AttributeValueMemberNULL{Value: true}}}}},
		}})
		if err != nil {
			t.Fatal(err)
		}
	}
	return c, name
}

// recorder is a function that records the SKs it is handed and fails the
// records its fail function names.
type recorder struct {
	seen []string
	fail func(sk string, call int) bool
	err  func(call int) error
	call int
}

func (r *recorder) handle(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	r.call++
	if r.err != nil {
		if err := r.err(r.call); err != nil {
			return events.DynamoDBEventResponse{}, err
		}
	}
	var resp events.DynamoDBEventResponse
	for _, rec := range ev.Records {
		sk := rec.Change.Keys["SK"].String()
		r.seen = append(r.seen, sk)
		if r.fail != nil && r.fail(sk, r.call) {
			resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: rec.Change.SequenceNumber})
		}
	}
	return resp, nil
}

func mapping(t *testing.T, c *dynamodb.Client, name string, batch int, h any) *ddbstream.Mapping {
	t.Helper()
	arn, err := ddbstream.StreamARN(context.Background(), c, name)
	if err != nil {
		t.Fatal(err)
	}
	return ddbstream.New(ddbstream.FromDynamoDB(c), arn, batch, lambda.NewHandler(h).Invoke)
}

func TestDeliversTheRecordsAsThePlatformDoes(t *testing.T) {
	c, name := table(t, 3)
	var got []events.DynamoDBEventRecord
	m := mapping(t, c, name, 10, func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		got = append(got, ev.Records...)
		return events.DynamoDBEventResponse{}, nil
	})
	res, err := m.Drain(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || len(got) != 3 {
		t.Fatalf("batches %d, records %d; want one batch of 3", len(res), len(got))
	}
	r := got[0]
	if r.EventName != "INSERT" || r.EventSource != "aws:dynamodb" || !strings.Contains(r.EventSourceArn, "table/"+name+"/stream/") ||
		r.AWSRegion == "" || r.EventID == "" || r.Change.SequenceNumber == "" || r.Change.StreamViewType != "NEW_IMAGE" {
		t.Fatalf("record envelope: %+v", r)
	}
	img := r.Change.NewImage
	if img["n"].Number() != "9007199254740993" || string(img["bin"].Binary()) != "\x00\x01\x02" ||
		!img["data"].Map()["ok"].Boolean() || !img["data"].Map()["l"].List()[0].IsNull() || r.Change.Keys["SK"].String() != "0001" {
		t.Fatalf("new image: %+v", img)
	}
	if r.Change.ApproximateCreationDateTime.IsZero() || r.Change.ApproximateCreationDateTime.Year() < 2024 {
		t.Fatalf("creation time %v", r.Change.ApproximateCreationDateTime)
	}
	// Nothing is delivered twice once checkpointed.
	if res, err := m.Drain(context.Background(), 10); err != nil || len(res) != 0 {
		t.Fatalf("second drain: %v, %v", res, err)
	}
}

func TestBatchItemFailureResumesAtTheLowestFailedRecord(t *testing.T) {
	c, name := table(t, 5)
	r := &recorder{fail: func(sk string, call int) bool {
		// 0004 and 0002 fail on the first call: the checkpoint stays
		// after 0001, and 0002..0005 come again.
		return call == 1 && (sk == "0004" || sk == "0002")
	}}
	m := mapping(t, c, name, 10, r.handle)
	if _, err := m.Drain(context.Background(), 10); err != nil {
		t.Fatal(err)
	}
	want := "0001 0002 0003 0004 0005 0002 0003 0004 0005"
	if got := strings.Join(r.seen, " "); got != want {
		t.Fatalf("delivered %s, want %s", got, want)
	}
}

func TestAFailedInvocationDeliversTheWholeBatchAgainInBatchesOfN(t *testing.T) {
	c, name := table(t, 5)
	r := &recorder{err: func(call int) error {
		if call == 2 {
			return errors.New("the function crashed")
		}
		return nil
	}}
	m := mapping(t, c, name, 2, r.handle)
	res, err := m.Drain(context.Background(), 10)
	if err != nil {
		t.Fatal(err)
	}
	// Call 2 (0003, 0004) failed before recording: they come again in
	// call 3.
	if got, want := strings.Join(r.seen, " "), "0001 0002 0003 0004 0005"; got != want {
		t.Fatalf("delivered %s, want %s", got, want)
	}
	if len(res) != 4 || res[1].Error == nil || res[1].Failed != 2 {
		t.Fatalf("results %+v", res)
	}
}

func TestAnAnswerNamingNoRecordOfTheBatchIsAnError(t *testing.T) {
	c, name := table(t, 1)
	m := mapping(t, c, name, 10, func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
		// The reference's bug: event ids where sequence numbers belong.
		return events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{{ItemIdentifier: ev.Records[0].EventID}}}, nil
	})
	if _, err := m.Poll(context.Background()); err == nil || !strings.Contains(err.Error(), "not a sequence number") {
		t.Fatalf("err %v", err)
	}
}

// TestRetriesStopAtTheMappingsLimit: with maximum_retry_attempts 2, a
// batch failing three times is handed to the on-failure destination and
// passed; a batch that fails less often is delivered again until it
// passes; and without a limit a batch is retried for as long as it fails.
func TestRetriesStopAtTheMappingsLimit(t *testing.T) {
	c, name := table(t, 4)
	r := &recorder{err: func(call int) error {
		// 0001-0002 fail three times (calls 1-3); 0003-0004 twice (4-5).
		if call <= 5 {
			return errors.New("the function crashed")
		}
		return nil
	}}
	m := mapping(t, c, name, 2, r.handle)
	var gaveUp []ddbstream.Failure
	m.Retry(2, func(f ddbstream.Failure) { gaveUp = append(gaveUp, f) })
	res, err := m.Drain(context.Background(), 20)
	if err != nil {
		t.Fatal(err)
	}
	if len(gaveUp) != 1 || len(gaveUp[0].Records) != 2 || gaveUp[0].Records[0].Change.Keys["SK"].String() != "0001" || gaveUp[0].Attempts != 3 {
		t.Fatalf("given up %+v, want 0001-0002 after 3 attempts", gaveUp)
	}
	if got, want := strings.Join(r.seen, " "), "0003 0004"; got != want {
		t.Fatalf("processed %s, want %s", got, want)
	}
	if len(res) != 6 || !res[2].GaveUp || res[4].GaveUp {
		t.Fatalf("results %+v", res)
	}

	c, name = table(t, 1)
	r = &recorder{err: func(call int) error {
		if call <= 10 {
			return errors.New("the function crashed")
		}
		return nil
	}}
	m = mapping(t, c, name, 10, r.handle)
	m.Retry(-1, func(f ddbstream.Failure) { t.Errorf("given up %+v without a limit", f) })
	if _, err := m.Drain(context.Background(), 20); err != nil || strings.Join(r.seen, " ") != "0001" {
		t.Fatalf("processed %v (%v), want 0001 after ten failures", r.seen, err)
	}
}
