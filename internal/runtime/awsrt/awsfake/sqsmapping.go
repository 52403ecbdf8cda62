package awsfake

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	sqstypes "github.com/aws/aws-sdk-go-v2/service/sqs/types"
)

// Invoke calls a Lambda function with a payload and returns its response
// payload; an error is a failed invocation (the function returned an
// error, or its process died). lambda.NewHandler(h).Invoke is one, and so
// is Function.Invoke.
type Invoke func(ctx context.Context, payload []byte) ([]byte, error)

// SQSMapping emulates a Lambda event source mapping on an SQS queue with
// ReportBatchItemFailures: it receives a batch through the real SDK
// client, invokes the function with the exact JSON the platform sends
// (events.SQSEvent), deletes the messages that succeeded and leaves the
// failed ones to come back after their visibility timeout — all of them
// when the invocation failed. The queue's redrive policy moves a message
// that keeps failing to its dead-letter queue.
type SQSMapping struct {
	fake      *SQS
	client    *sqs.Client
	queue     string
	batchSize int
	invoke    Invoke
}

// NewSQSMapping maps the named queue of f to invoke, batchSize messages at
// most per invocation (0: 10).
func NewSQSMapping(f *SQS, queue string, batchSize int, invoke Invoke) *SQSMapping {
	if batchSize <= 0 {
		batchSize = 10
	}
	return &SQSMapping{fake: f, client: sqs.NewFromConfig(Config(f.URL)), queue: queue, batchSize: batchSize, invoke: invoke}
}

// PollResult says what one poll did.
type PollResult struct {
	Received int
	Failed   int  // messages left for redelivery
	Error    bool // the invocation failed as a whole
}

// Poll receives one batch and invokes the function with it. It returns an
// error only when the emulation itself fails (the queue is unreachable) or
// the function answers what the platform would refuse: a batch item
// failure naming no message of the batch.
func (m *SQSMapping) Poll(ctx context.Context) (PollResult, error) {
	url := m.fake.QueueURL(m.queue)
	out, err := m.client.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{
		QueueUrl: aws.String(url), MaxNumberOfMessages: int32(m.batchSize),
		MessageSystemAttributeNames: []sqstypes.MessageSystemAttributeName{sqstypes.MessageSystemAttributeNameAll},
	})
	if err != nil {
		return PollResult{}, fmt.Errorf("sqs mapping: receive from %s: %w", m.queue, err)
	}
	res := PollResult{Received: len(out.Messages)}
	if len(out.Messages) == 0 {
		return res, nil
	}
	ev := events.SQSEvent{}
	for _, msg := range out.Messages {
		ev.Records = append(ev.Records, events.SQSMessage{
			MessageId: aws.ToString(msg.MessageId), ReceiptHandle: aws.ToString(msg.ReceiptHandle),
			Body: aws.ToString(msg.Body), Md5OfBody: aws.ToString(msg.MD5OfBody),
			Attributes: msg.Attributes, MessageAttributes: map[string]events.SQSMessageAttribute{},
			EventSourceARN: m.fake.QueueARN(m.queue), EventSource: "aws:sqs", AWSRegion: Region,
		})
	}
	payload, err := json.Marshal(ev)
	if err != nil {
		return res, err
	}
	resp, ierr := m.invoke(ctx, payload)
	if ierr != nil {
		res.Error, res.Failed = true, len(out.Messages)
		return res, nil
	}
	var answer events.SQSEventResponse
	if len(resp) > 0 && string(resp) != "null" {
		if err := json.Unmarshal(resp, &answer); err != nil {
			return res, fmt.Errorf("sqs mapping: the function's answer is not an SQSEventResponse: %v (%s)", err, resp)
		}
	}
	inBatch := map[string]bool{}
	for _, msg := range out.Messages {
		inBatch[aws.ToString(msg.MessageId)] = true
	}
	failed := map[string]bool{}
	for _, f := range answer.BatchItemFailures {
		if !inBatch[f.ItemIdentifier] {
			// The platform fails the whole batch; a test must see it.
			return res, fmt.Errorf("sqs mapping: batch item failure %q names no message of the batch", f.ItemIdentifier)
		}
		failed[f.ItemIdentifier] = true
	}
	for _, msg := range out.Messages {
		if failed[aws.ToString(msg.MessageId)] {
			res.Failed++
			continue
		}
		if _, err := m.client.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(url), ReceiptHandle: msg.ReceiptHandle}); err != nil {
			return res, fmt.Errorf("sqs mapping: delete %s: %w", aws.ToString(msg.MessageId), err)
		}
	}
	return res, nil
}

// Drain polls until the queue is empty, advancing the fake's time past the
// visibility timeout whenever only in-flight messages remain (so failed
// ones come back), at most rounds polls. It returns every poll's result.
func (m *SQSMapping) Drain(ctx context.Context, rounds int) ([]PollResult, error) {
	var all []PollResult
	for range rounds {
		res, err := m.Poll(ctx)
		if err != nil {
			return all, err
		}
		if res.Received > 0 {
			all = append(all, res)
			continue
		}
		if len(m.fake.Messages(m.queue)) == 0 {
			return all, nil
		}
		m.fake.mu.Lock()
		vt := m.fake.queues[m.queue].VisibilityTimeout
		m.fake.mu.Unlock()
		m.fake.Advance(vt)
	}
	return all, fmt.Errorf("sqs mapping: queue %s not drained after %d polls (%d messages left)", m.queue, rounds, len(m.fake.Messages(m.queue)))
}

// ReceiveCount reads a message's ApproximateReceiveCount attribute as the
// platform passes it (0 when absent).
func ReceiveCount(msg events.SQSMessage) int {
	n, _ := strconv.Atoi(msg.Attributes["ApproximateReceiveCount"])
	return n
}
