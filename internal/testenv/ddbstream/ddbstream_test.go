package ddbstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
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

// rollover stands in front of DynamoDB Local and shows a table's first
// stream with the shard of a second one as the child of its (closed)
// shard: what a shard rollover looks like, which DynamoDB Local does only
// after four hours. Both shards are real and so are their records;
// disabling the first stream is what closes its shard. DescribeStream of
// the first stream answers both streams' shards, GetShardIterator of the
// child asks the second stream; every other call passes unchanged.
type rollover struct {
	target    string // DynamoDB Local
	parentARN string

	mu        sync.Mutex
	childARN  string          // "" until the second stream exists
	children  map[string]bool // the second stream's shards
	described int             // DescribeStream calls of the first stream
}

func (p *rollover) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	op := r.Header.Get("X-Amz-Target")
	var in map[string]any
	_ = json.Unmarshal(body, &in)
	p.mu.Lock()
	childARN, children := p.childARN, p.children
	p.mu.Unlock()
	switch {
	case op == "DynamoDBStreams_20120810.DescribeStream" && in["StreamArn"] == p.parentARN:
		p.describe(w, r, body, childARN)
		return
	case op == "DynamoDBStreams_20120810.GetShardIterator" && children[fmt.Sprint(in["ShardId"])]:
		in["StreamArn"] = childARN
		body, _ = json.Marshal(in)
	}
	status, out, err := p.forward(r, body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// describe answers the second stream's shards, each naming the first
// stream's last shard as its parent, followed by the first stream's: the
// API does not list parents first, the reader must read them first.
func (p *rollover) describe(w http.ResponseWriter, r *http.Request, body []byte, childARN string) {
	p.mu.Lock()
	p.described++
	p.mu.Unlock()
	status, out, err := p.forward(r, body)
	if err != nil || status != http.StatusOK || childARN == "" {
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		w.WriteHeader(status)
		_, _ = w.Write(out)
		return
	}
	var parent, child struct{ StreamDescription map[string]any }
	childBody, _ := json.Marshal(map[string]string{"StreamArn": childARN})
	_, childOut, err := p.forward(r, childBody)
	if err == nil {
		err = json.Unmarshal(out, &parent)
	}
	if err == nil {
		err = json.Unmarshal(childOut, &child)
	}
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	shards, _ := parent.StreamDescription["Shards"].([]any)
	last := shards[len(shards)-1].(map[string]any)["ShardId"]
	ids := map[string]bool{}
	kids, _ := child.StreamDescription["Shards"].([]any)
	for _, s := range kids {
		s := s.(map[string]any)
		s["ParentShardId"] = last
		ids[fmt.Sprint(s["ShardId"])] = true
	}
	p.mu.Lock()
	p.children = ids
	p.mu.Unlock()
	parent.StreamDescription["Shards"] = append(kids, shards...)
	parent.StreamDescription["StreamStatus"] = "ENABLED"
	out, _ = json.Marshal(parent)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

func (p *rollover) forward(r *http.Request, body []byte) (int, []byte, error) {
	req, err := http.NewRequestWithContext(r.Context(), r.Method, p.target+r.URL.RequestURI(), bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	for _, h := range []string{"Content-Type", "X-Amz-Target", "Authorization", "X-Amz-Date"} {
		req.Header.Set(h, r.Header.Get(h))
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return resp.StatusCode, out, err
}

// TestAShardClosedWhileReadIsFollowedByItsChildren: the mapping described
// the stream while its shard was open; the shard then closed (records
// 0003 and 0004 still unread) and a child shard took the table's next
// writes. Reading the shard to its end makes the mapping describe the
// stream again — once, not per poll — and the same Drain delivers the
// rest of the parent, then the child: every record once, in order.
// DescribeStream lists the child first (the API promises no order).
func TestAShardClosedWhileReadIsFollowedByItsChildren(t *testing.T) {
	c, name := table(t, 3)
	ctx := context.Background()
	parentARN, err := ddbstream.StreamARN(ctx, c, name)
	if err != nil {
		t.Fatal(err)
	}
	p := &rollover{target: ddblocal.Endpoint(t), parentARN: parentARN}
	front := httptest.NewServer(p)
	defer front.Close()
	var seen []string
	newMapping := func() *ddbstream.Mapping {
		return ddbstream.New(ddbstream.FromDynamoDB(ddblocal.NewClient(front.URL)), parentARN, 2, lambda.NewHandler(
			func(_ context.Context, ev events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
				for _, r := range ev.Records {
					seen = append(seen, r.Change.Keys["SK"].String())
				}
				return events.DynamoDBEventResponse{}, nil
			}).Invoke)
	}
	m := newMapping()
	if res, err := m.Poll(ctx); err != nil || len(res.Records) != 2 {
		t.Fatalf("first poll: %+v, %v; want 0001 and 0002", res, err)
	}

	put(t, c, name, "0004")
	stream := func(on bool) {
		spec := &types.StreamSpecification{StreamEnabled: aws.Bool(on)}
		if on {
			spec.StreamViewType = types.StreamViewTypeNewImage
		}
		if _, err := c.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String(name), StreamSpecification: spec}); err != nil {
			t.Fatal(err)
		}
	}
	stream(false) // the shard closes after 0004
	stream(true)
	childARN, err := ddbstream.StreamARN(ctx, c, name)
	if err != nil || childARN == parentARN {
		t.Fatalf("second stream %s (%v), want a new one", childARN, err)
	}
	p.mu.Lock()
	p.childARN = childARN
	p.mu.Unlock()
	put(t, c, name, "0005")
	put(t, c, name, "0006")

	if _, err := m.Drain(ctx, 10); err != nil {
		t.Fatal(err)
	}
	const all = "0001 0002 0003 0004 0005 0006"
	if got := strings.Join(seen, " "); got != all {
		t.Fatalf("delivered %s, want %s", got, all)
	}
	p.mu.Lock()
	described := p.described
	p.mu.Unlock()
	if described != 2 {
		t.Errorf("described the stream %d times, want 2: at the start and once the shard was read to its end", described)
	}
	if res, err := m.Drain(ctx, 10); err != nil || len(res) != 0 {
		t.Fatalf("a second drain delivered %+v (%v), want nothing", res, err)
	}

	// A mapping started after the rollover is shown the child before its
	// parent: it reads the parent first, then the child, in one Drain.
	seen = nil
	if _, err := newMapping().Drain(ctx, 10); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(seen, " "); got != all {
		t.Fatalf("a mapping started after the rollover delivered %s, want %s", got, all)
	}
}

func put(t *testing.T, c *dynamodb.Client, table, sk string) {
	t.Helper()
	if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: map[string]types.AttributeValue{
		"PK": &types.AttributeValueMemberS{Value: "item"}, "SK": &types.AttributeValueMemberS{Value: sk},
	}}); err != nil {
		t.Fatal(err)
	}
}
