// Package ddbstream feeds a table's real DynamoDB stream (DynamoDB Local's,
// read with the SDK v2 dynamodbstreams client: DescribeStream,
// GetShardIterator, GetRecords) to a Lambda function as a DynamoDB event
// source mapping with ReportBatchItemFailures does, for tests:
//
//   - each invocation is one batch of at most N records of one shard, as
//     the exact JSON the platform sends (events.DynamoDBEvent: eventID,
//     eventName, eventSourceARN, dynamodb.Keys/NewImage/OldImage,
//     SequenceNumber, …);
//
//   - the shard's checkpoint moves only when the invocation succeeds: past
//     the whole batch when the answer names no failure, to just before the
//     lowest failed sequence number when it names some (that record and
//     every later one are delivered again), and not at all when the
//     invocation fails;
//
//   - shards are read parents first, each from TRIM_HORIZON. The shard
//     list is described again only when a shard it held open is read to
//     its end: a stream gains shards only as one closes (its children),
//     and a DescribeStream per poll was a fifth of the calls the AWS
//     end-to-end tests made to DynamoDB Local.
//
//   - with Retry, a batch that keeps failing is given up after the
//     mapping's maximum_retry_attempts: its records still to be delivered
//     are handed to the on-failure destination and passed.
//
// An answer naming an item identifier that is not a sequence number of the
// batch is an error (the platform would fail the whole batch, forever).
// Not emulated: record age limits, bisecting, parallel shards.
//
// Use: New(FromDynamoDB(client), arn, 10, lambda.NewHandler(h).Invoke),
// then Drain (or Poll for one batch); StreamARN finds a table's stream.
package ddbstream

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"strings"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// Invoke calls the function with a payload and returns its answer;
// lambda.NewHandler(h).Invoke is one. An error is a failed invocation.
type Invoke func(ctx context.Context, payload []byte) ([]byte, error)

// FromDynamoDB returns a streams client reaching the same endpoint, region
// and credentials as c (DynamoDB Local serves both APIs on one port).
func FromDynamoDB(c *dynamodb.Client) *dynamodbstreams.Client {
	o := c.Options()
	return dynamodbstreams.New(dynamodbstreams.Options{
		Region: o.Region, Credentials: o.Credentials, BaseEndpoint: o.BaseEndpoint, HTTPClient: o.HTTPClient,
	})
}

// StreamARN returns the ARN of table's latest stream.
func StreamARN(ctx context.Context, c *dynamodb.Client, table string) (string, error) {
	out, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return "", fmt.Errorf("ddbstream: describe table %s: %w", table, err)
	}
	if out.Table.LatestStreamArn == nil {
		return "", fmt.Errorf("ddbstream: table %s has no stream", table)
	}
	return *out.Table.LatestStreamArn, nil
}

// Mapping is one event source mapping: a stream, a batch size, a function
// and each shard's checkpoint (kept in memory: the mapping outlives the
// function's processes, as the platform's does).
type Mapping struct {
	client *dynamodbstreams.Client
	arn    string
	batch  int
	invoke Invoke

	checkpoint map[string]string // shard → last sequence number done
	finished   map[string]bool   // closed shards read to their end
	// iters are the shards' iterators just after their checkpoints (the
	// NextShardIterator of the last read, when every record read was
	// done): the next poll reads on with one GetRecords instead of a new
	// iterator. Dropped when a read fails or records are to be delivered
	// again.
	iters map[string]*string
	// described is the stream's shard list as DescribeStream last gave
	// it; stale says a shard it shows open has since been read to its
	// end (closed: its children are not in the list).
	described []types.Shard
	stale     bool

	retries   int // maximum_retry_attempts; < 0: no limit
	onFailure func(Failure)
	// failing is, by shard, the first record of the batch being retried
	// and how many times its delivery failed.
	failing map[string]failingBatch
}

type failingBatch struct {
	first    string
	failures int
}

// Failure is what a mapping gives up on: the records of a shard it
// delivered 1 + retries times without success, as the on-failure
// destination hears of them (the platform's message names the shard and
// the sequence range; here the records come whole).
type Failure struct {
	Shard    string
	Records  []events.DynamoDBEventRecord
	Attempts int
}

// New maps the stream arn to invoke, batch records at most per invocation
// (0: 10, the batch size of our mappings).
func New(client *dynamodbstreams.Client, arn string, batch int, invoke Invoke) *Mapping {
	if batch <= 0 {
		batch = 10
	}
	return &Mapping{client: client, arn: arn, batch: batch, invoke: invoke, checkpoint: map[string]string{}, finished: map[string]bool{}, iters: map[string]*string{},
		retries: -1, failing: map[string]failingBatch{}}
}

// Retry limits the retries of a failing batch as the mapping's
// maximum_retry_attempts does (retries < 0, -1 in Terraform: until the
// record leaves the stream, which here is never): when the delivery of the
// records from the same first record has failed 1 + retries times, they
// are handed to onFailure (destination_config on_failure) and the
// checkpoint moves past them.
func (m *Mapping) Retry(retries int, onFailure func(Failure)) {
	m.retries, m.onFailure = retries, onFailure
}

// Result is what one poll did.
type Result struct {
	Shard   string
	Records []events.DynamoDBEventRecord // the batch delivered
	Failed  int                          // records to be delivered again, or given up
	Error   error                        // the invocation failed as a whole
	GaveUp  bool                         // the Failed records went to the on-failure destination
}

// Poll delivers the next batch of the first shard that has one, and says
// what happened; a zero Result (no Records) means no shard had a record.
func (m *Mapping) Poll(ctx context.Context) (Result, error) {
	for range 2 { // again on the list described anew when a shard closed
		shards, err := m.shards(ctx)
		if err != nil {
			return Result{}, err
		}
		res, err := m.poll(ctx, shards)
		if err != nil || len(res.Records) > 0 || !m.stale {
			return res, err
		}
	}
	return Result{}, nil
}

// poll reads shards, parents first (shards' order), to the first record
// to deliver: a shard whose listed parent is not yet read to its end
// waits, and one read to its end in the pass lets its children, later in
// the list, be read in the same pass.
func (m *Mapping) poll(ctx context.Context, shards []types.Shard) (Result, error) {
	ids := map[string]bool{}
	for _, s := range shards {
		ids[aws.ToString(s.ShardId)] = true
	}
	for _, s := range shards {
		id := aws.ToString(s.ShardId)
		if m.finished[id] {
			continue
		}
		if p := aws.ToString(s.ParentShardId); p != "" && ids[p] && !m.finished[p] {
			continue // its parent's records come first
		}
		recs, next, end, err := m.read(ctx, id)
		if err != nil {
			return Result{}, err
		}
		if len(recs) == 0 {
			switch {
			case end && s.SequenceNumberRange != nil && s.SequenceNumberRange.EndingSequenceNumber != nil:
				m.finished[id] = true
			case end:
				m.stale = true // closed since described: describe again
			}
			continue
		}
		res, err := m.deliver(ctx, id, recs)
		if err == nil && res.Failed == 0 && res.Error == nil && next != nil {
			m.iters[id] = next
		}
		return res, err
	}
	return Result{}, nil
}

// Drain polls until no shard has a record, at most rounds polls, and
// returns what each poll that delivered did.
func (m *Mapping) Drain(ctx context.Context, rounds int) ([]Result, error) {
	var all []Result
	for range rounds {
		r, err := m.Poll(ctx)
		if err != nil {
			return all, err
		}
		if len(r.Records) == 0 {
			return all, nil
		}
		all = append(all, r)
	}
	return all, fmt.Errorf("ddbstream: stream not drained after %d batches", rounds)
}

// shards lists the stream's shards, each after its parent (parentsFirst):
// the list last described, unless a shard has closed since.
func (m *Mapping) shards(ctx context.Context) ([]types.Shard, error) {
	if m.described != nil && !m.stale {
		return m.described, nil
	}
	var out []types.Shard
	var start *string
	for {
		d, err := m.client.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(m.arn), ExclusiveStartShardId: start})
		if err != nil {
			return nil, fmt.Errorf("ddbstream: describe stream: %w", err)
		}
		out = append(out, d.StreamDescription.Shards...)
		start = d.StreamDescription.LastEvaluatedShardId
		if start == nil {
			m.described, m.stale = parentsFirst(out), false
			return m.described, nil
		}
	}
}

// parentsFirst orders shards so that each comes after its parent when
// the list holds it (DescribeStream promises no order), otherwise in the
// order given.
func parentsFirst(shards []types.Shard) []types.Shard {
	byID := map[string]types.Shard{}
	for _, s := range shards {
		byID[aws.ToString(s.ShardId)] = s
	}
	out := make([]types.Shard, 0, len(shards))
	placed := map[string]bool{}
	var place func(s types.Shard)
	place = func(s types.Shard) {
		id := aws.ToString(s.ShardId)
		if placed[id] {
			return
		}
		placed[id] = true
		if p, ok := byID[aws.ToString(s.ParentShardId)]; ok {
			place(p)
		}
		out = append(out, s)
	}
	for _, s := range shards {
		place(s)
	}
	return out
}

// read returns the records of shard after its checkpoint, at most one
// batch, and the iterator after them; end says the shard has nothing
// after them (closed shards only).
func (m *Mapping) read(ctx context.Context, shard string) ([]types.Record, *string, bool, error) {
	if iter := m.iters[shard]; iter != nil {
		delete(m.iters, shard)
		out, err := m.client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(int32(m.batch))})
		if err == nil {
			if len(out.Records) == 0 && out.NextShardIterator != nil {
				m.iters[shard] = out.NextShardIterator
			}
			return out.Records, out.NextShardIterator, out.NextShardIterator == nil, nil
		}
		// An expired iterator: start again from the checkpoint.
	}
	in := &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(m.arn), ShardId: aws.String(shard), ShardIteratorType: types.ShardIteratorTypeTrimHorizon}
	if seq := m.checkpoint[shard]; seq != "" {
		in.ShardIteratorType, in.SequenceNumber = types.ShardIteratorTypeAfterSequenceNumber, aws.String(seq)
	}
	it, err := m.client.GetShardIterator(ctx, in)
	if err != nil {
		return nil, nil, false, fmt.Errorf("ddbstream: shard iterator of %s: %w", shard, err)
	}
	iter := it.ShardIterator
	// An empty page does not prove the shard is read to its end: follow
	// the iterator a few pages.
	for range 3 {
		if iter == nil {
			return nil, nil, true, nil
		}
		out, err := m.client.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter, Limit: aws.Int32(int32(m.batch))})
		if err != nil {
			return nil, nil, false, fmt.Errorf("ddbstream: records of %s: %w", shard, err)
		}
		if len(out.Records) > 0 {
			return out.Records, out.NextShardIterator, false, nil
		}
		iter = out.NextShardIterator
	}
	if iter != nil {
		m.iters[shard] = iter
	}
	return nil, nil, iter == nil, nil
}

// deliver invokes the function with recs and moves the checkpoint by its
// answer.
func (m *Mapping) deliver(ctx context.Context, shard string, recs []types.Record) (Result, error) {
	ev := events.DynamoDBEvent{}
	for _, r := range recs {
		lr, err := LambdaRecord(m.arn, r)
		if err != nil {
			return Result{}, err
		}
		ev.Records = append(ev.Records, lr)
	}
	res := Result{Shard: shard, Records: ev.Records}
	payload, err := json.Marshal(ev)
	if err != nil {
		return res, fmt.Errorf("ddbstream: encode the batch: %w", err)
	}
	answer, err := m.invoke(ctx, payload)
	if err != nil {
		res.Error, res.Failed = err, len(recs)
		m.failed(shard, ev.Records, 0, &res)
		return res, nil
	}
	var resp events.DynamoDBEventResponse
	if len(answer) > 0 && string(answer) != "null" {
		if err := json.Unmarshal(answer, &resp); err != nil {
			return res, fmt.Errorf("ddbstream: the answer is not a DynamoDBEventResponse: %v (%s)", err, answer)
		}
	}
	lowest := -1
	for _, f := range resp.BatchItemFailures {
		i := indexOf(ev.Records, f.ItemIdentifier)
		if i < 0 {
			return res, fmt.Errorf("ddbstream: batch item failure %q is not a sequence number of the batch", f.ItemIdentifier)
		}
		if lowest < 0 || seqLess(ev.Records[i].Change.SequenceNumber, ev.Records[lowest].Change.SequenceNumber) {
			lowest = i
		}
	}
	done := len(recs)
	if lowest >= 0 {
		done = lowest
		res.Failed = len(recs) - lowest
	}
	if done > 0 {
		m.checkpoint[shard] = ev.Records[done-1].Change.SequenceNumber
	}
	if lowest >= 0 {
		m.failed(shard, ev.Records, done, &res)
	} else {
		delete(m.failing, shard)
	}
	return res, nil
}

// failed counts a failed delivery of recs[from:], which are to come again,
// and gives them up when the retries are spent.
func (m *Mapping) failed(shard string, recs []events.DynamoDBEventRecord, from int, res *Result) {
	first := recs[from].Change.SequenceNumber
	f := m.failing[shard]
	if f.first != first {
		f = failingBatch{first: first}
	}
	f.failures++
	m.failing[shard] = f
	if m.retries < 0 || f.failures <= m.retries {
		return
	}
	delete(m.failing, shard)
	m.checkpoint[shard] = recs[len(recs)-1].Change.SequenceNumber
	res.GaveUp = true
	if m.onFailure != nil {
		m.onFailure(Failure{Shard: shard, Records: recs[from:], Attempts: f.failures})
	}
}

func indexOf(recs []events.DynamoDBEventRecord, seq string) int {
	for i, r := range recs {
		if r.Change.SequenceNumber == seq && seq != "" {
			return i
		}
	}
	return -1
}

// seqLess compares sequence numbers: decimal strings of up to 40 digits.
func seqLess(a, b string) bool {
	x, okx := new(big.Int).SetString(a, 10)
	y, oky := new(big.Int).SetString(b, 10)
	if !okx || !oky {
		return a < b
	}
	return x.Cmp(y) < 0
}

// LambdaRecord is r as the platform hands it to a function: the stream
// record with its source ARN and the region the ARN names.
func LambdaRecord(streamARN string, r types.Record) (events.DynamoDBEventRecord, error) {
	if r.Dynamodb == nil {
		return events.DynamoDBEventRecord{}, fmt.Errorf("ddbstream: record %s has no stream record", aws.ToString(r.EventID))
	}
	d := r.Dynamodb
	region := aws.ToString(r.AwsRegion)
	if parts := strings.Split(streamARN, ":"); region == "" && len(parts) > 3 {
		region = parts[3]
	}
	out := events.DynamoDBEventRecord{
		AWSRegion: region, EventID: aws.ToString(r.EventID), EventName: string(r.EventName),
		EventSource: aws.ToString(r.EventSource), EventVersion: aws.ToString(r.EventVersion), EventSourceArn: streamARN,
		Change: events.DynamoDBStreamRecord{
			SequenceNumber: aws.ToString(d.SequenceNumber), SizeBytes: aws.ToInt64(d.SizeBytes),
			StreamViewType: string(d.StreamViewType),
			Keys:           attributes(d.Keys), NewImage: attributes(d.NewImage), OldImage: attributes(d.OldImage),
		},
	}
	if out.EventSource == "" {
		out.EventSource = "aws:dynamodb"
	}
	if d.ApproximateCreationDateTime != nil {
		out.Change.ApproximateCreationDateTime = events.SecondsEpochTime{Time: *d.ApproximateCreationDateTime}
	}
	if r.UserIdentity != nil {
		out.UserIdentity = &events.DynamoDBUserIdentity{Type: aws.ToString(r.UserIdentity.Type), PrincipalID: aws.ToString(r.UserIdentity.PrincipalId)}
	}
	return out, nil
}

func attributes(m map[string]types.AttributeValue) map[string]events.DynamoDBAttributeValue {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]events.DynamoDBAttributeValue, len(m))
	for k, v := range m {
		out[k] = attribute(v)
	}
	return out
}

func attribute(v types.AttributeValue) events.DynamoDBAttributeValue {
	switch v := v.(type) {
	case *types.AttributeValueMemberS:
		return events.NewStringAttribute(v.Value)
	case *types.AttributeValueMemberN:
		return events.NewNumberAttribute(v.Value)
	case *types.AttributeValueMemberB:
		return events.NewBinaryAttribute(v.Value)
	case *types.AttributeValueMemberBOOL:
		return events.NewBooleanAttribute(v.Value)
	case *types.AttributeValueMemberNULL:
		return events.NewNullAttribute()
	case *types.AttributeValueMemberSS:
		return events.NewStringSetAttribute(v.Value)
	case *types.AttributeValueMemberNS:
		return events.NewNumberSetAttribute(v.Value)
	case *types.AttributeValueMemberBS:
		return events.NewBinarySetAttribute(v.Value)
	case *types.AttributeValueMemberL:
		l := make([]events.DynamoDBAttributeValue, len(v.Value))
		for i, e := range v.Value {
			l[i] = attribute(e)
		}
		return events.NewListAttribute(l)
	case *types.AttributeValueMemberM:
		m := make(map[string]events.DynamoDBAttributeValue, len(v.Value))
		for k, e := range v.Value {
			m[k] = attribute(e)
		}
		return events.NewMapAttribute(m)
	}
	// Not reachable with the SDK's union; a null keeps the record whole.
	return events.NewNullAttribute()
}
