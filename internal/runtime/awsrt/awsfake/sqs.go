package awsfake

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"

	"github.com/interlockhq/interlock/internal/clock"
)

// SQS is a fake of SQS (AWS JSON 1.0, target AmazonSQS.<op>, which the
// pinned SDK speaks; the SDK checks the MD5 of every body it sends and
// receives): SendMessage, ReceiveMessage, DeleteMessage and
// ChangeMessageVisibility on standard queues, with visibility timeouts,
// receive counts and a redrive policy (a message received more than
// MaxReceiveCount times moves to the dead-letter queue at its next
// receive, as SQS does). Its time is virtual: Advance moves it, so a test
// makes failed messages visible again without waiting.
type SQS struct {
	*httptest.Server
	clk *clock.Virtual

	mu     sync.Mutex
	queues map[string]*queue // by name
	seq    int
}

// QueueConfig configures a queue.
type QueueConfig struct {
	Name              string
	VisibilityTimeout time.Duration // 0: 30 s
	// DeadLetter names the queue a message moves to after MaxReceiveCount
	// receives ("" : no redrive).
	DeadLetter      string
	MaxReceiveCount int
}

type queue struct {
	QueueConfig
	msgs []*sqsMessage
}

type sqsMessage struct {
	id, body, md5 string
	receipt       string // the handle of the latest receive
	receives      int
	visibleAt     time.Time
	sentAt        time.Time
	firstReceived time.Time
}

// Message is a message in a queue, as a test inspects it.
type Message struct {
	ID       string
	Body     string
	Receives int
	InFlight bool // received and not yet visible again
}

// NewSQS starts a fake with no queue, on a virtual clock of its own; it is
// closed when the test ends.
func NewSQS(t testing.TB) *SQS {
	return NewSQSOn(t, clock.NewVirtual(time.Date(2026, 3, 7, 6, 0, 0, 0, time.UTC)))
}

// NewSQSOn starts a fake with no queue whose visibility timeouts run on
// clk: a test that moves clk for the whole system (a discrete-event
// simulation) sees failed messages come back when its clock gets there
// (NextVisible). Advance moves clk.
func NewSQSOn(t testing.TB, clk *clock.Virtual) *SQS {
	f := &SQS{clk: clk, queues: map[string]*queue{}}
	f.Server = httptest.NewServer(jsonService{version: "1.0", prefix: "AmazonSQS", ops: map[string]func(context.Context, []byte) (any, *apiError){
		"SendMessage":             f.onQueue(f.sendMessage),
		"ReceiveMessage":          f.onQueue(f.receiveMessage),
		"DeleteMessage":           f.onQueue(f.deleteMessage),
		"ChangeMessageVisibility": f.onQueue(f.changeMessageVisibility),
	}})
	t.Cleanup(f.Close)
	return f
}

// CreateQueue creates a queue (its dead-letter queue must exist first)
// and returns its URL.
func (f *SQS) CreateQueue(c QueueConfig) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c.VisibilityTimeout <= 0 {
		c.VisibilityTimeout = 30 * time.Second
	}
	if c.DeadLetter != "" && f.queues[c.DeadLetter] == nil {
		panic("awsfake: dead-letter queue " + c.DeadLetter + " does not exist")
	}
	f.queues[c.Name] = &queue{QueueConfig: c}
	return f.QueueURL(c.Name)
}

// QueueURL is the URL of the named queue.
func (f *SQS) QueueURL(name string) string { return f.URL + "/" + Account + "/" + name }

// QueueARN is the ARN of the named queue.
func (f *SQS) QueueARN(name string) string {
	return "arn:aws:sqs:" + Region + ":" + Account + ":" + name
}

// Advance moves the fake's time on: messages whose visibility timeout
// ends within d become visible.
func (f *SQS) Advance(d time.Duration) { f.clk.Advance(d) }

// Send puts a message in the named queue from Go (an EventBridge rule's
// target, a test) and returns its id.
func (f *SQS) Send(name, body string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.send(f.queues[name], body)
}

// Messages returns the messages in the named queue, in order.
func (f *SQS) Messages(name string) []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clk.Now()
	var out []Message
	for _, m := range f.queues[name].msgs {
		out = append(out, Message{ID: m.id, Body: m.body, Receives: m.receives, InFlight: m.visibleAt.After(now)})
	}
	return out
}

// NextVisible is the earliest instant after the clock's at which an
// in-flight message of the named queue becomes visible again, and false
// when none is in flight.
func (f *SQS) NextVisible(name string) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.clk.Now()
	var at time.Time
	for _, m := range f.queues[name].msgs {
		if m.visibleAt.After(now) && (at.IsZero() || m.visibleAt.Before(at)) {
			at = m.visibleAt
		}
	}
	return at, !at.IsZero()
}

func (f *SQS) send(q *queue, body string) string {
	f.seq++
	sum := md5.Sum([]byte(body))
	m := &sqsMessage{
		id:   fmt.Sprintf("c0ffee00-0000-4000-8000-%012x", f.seq),
		body: body, md5: hex.EncodeToString(sum[:]), sentAt: f.clk.Now(),
	}
	q.msgs = append(q.msgs, m)
	return m.id
}

// queueOf finds the queue of a request's QueueUrl; the lock is held.
func (f *SQS) queueOf(url string) (*queue, *apiError) {
	name := url[strings.LastIndexByte(url, '/')+1:]
	q := f.queues[name]
	if q == nil || url != f.QueueURL(name) {
		return nil, &apiError{code: "com.amazonaws.sqs#QueueDoesNotExist", msg: "The specified queue does not exist.",
			query: "AWS.SimpleQueueService.NonExistentQueue;Sender"}
	}
	return q, nil
}

// request is the body of the operations the fake serves, each of which
// names its queue.
type request struct {
	QueueURL            string `json:"QueueUrl"`
	MessageBody         string `json:"MessageBody"`
	ReceiptHandle       string `json:"ReceiptHandle"`
	MaxNumberOfMessages *int   `json:"MaxNumberOfMessages"`
	VisibilityTimeout   *int   `json:"VisibilityTimeout"`
}

// onQueue serves an operation: it decodes the request and runs op on its
// queue with the fake locked.
func (f *SQS) onQueue(op func(q *queue, in request) (any, *apiError)) func(context.Context, []byte) (any, *apiError) {
	return func(_ context.Context, body []byte) (any, *apiError) {
		var in request
		if err := decode(body, &in); err != nil {
			return nil, err
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		q, aerr := f.queueOf(in.QueueURL)
		if aerr != nil {
			return nil, aerr
		}
		return op(q, in)
	}
}

func (f *SQS) sendMessage(q *queue, in request) (any, *apiError) {
	if in.MessageBody == "" {
		return nil, &apiError{code: "com.amazonaws.sqs#MissingParameter", msg: "The request must contain the parameter MessageBody.", query: "MissingParameter;Sender"}
	}
	id := f.send(q, in.MessageBody)
	m := q.msgs[len(q.msgs)-1]
	return map[string]any{"MessageId": id, "MD5OfMessageBody": m.md5}, nil
}

func (f *SQS) receiveMessage(q *queue, in request) (any, *apiError) {
	max := 1
	if in.MaxNumberOfMessages != nil {
		max = *in.MaxNumberOfMessages
	}
	if max < 1 || max > 10 {
		return nil, &apiError{code: "com.amazonaws.sqs#InvalidParameterValue", msg: "Value for parameter MaxNumberOfMessages is invalid.", query: "InvalidParameterValue;Sender"}
	}
	vt := q.VisibilityTimeout
	if in.VisibilityTimeout != nil {
		vt = time.Duration(*in.VisibilityTimeout) * time.Second
	}
	now := f.clk.Now()
	out := []map[string]any{}
	var keep []*sqsMessage
	for _, m := range q.msgs {
		if len(out) == max || m.visibleAt.After(now) {
			keep = append(keep, m)
			continue
		}
		if q.DeadLetter != "" && m.receives >= q.MaxReceiveCount {
			dlq := f.queues[q.DeadLetter]
			dlq.msgs = append(dlq.msgs, &sqsMessage{id: m.id, body: m.body, md5: m.md5, sentAt: m.sentAt})
			continue
		}
		f.seq++
		m.receives++
		m.receipt = fmt.Sprintf("rh-%s-%d", m.id, f.seq)
		m.visibleAt = now.Add(vt)
		if m.firstReceived.IsZero() {
			m.firstReceived = now
		}
		out = append(out, map[string]any{
			"MessageId": m.id, "ReceiptHandle": m.receipt, "MD5OfBody": m.md5, "Body": m.body,
			"Attributes": map[string]string{
				"ApproximateReceiveCount":          strconv.Itoa(m.receives),
				"SentTimestamp":                    strconv.FormatInt(m.sentAt.UnixMilli(), 10),
				"SenderId":                         "AIDAFAKESENDER",
				"ApproximateFirstReceiveTimestamp": strconv.FormatInt(m.firstReceived.UnixMilli(), 10),
			},
		})
		keep = append(keep, m)
	}
	q.msgs = keep
	if len(out) == 0 {
		return map[string]any{}, nil
	}
	return map[string]any{"Messages": out}, nil
}

// byReceipt finds the message a receipt handle names; the lock is held.
func (f *SQS) byReceipt(q *queue, handle string) (int, bool) {
	for i, m := range q.msgs {
		if m.receipt == handle && handle != "" {
			return i, true
		}
	}
	return 0, false
}

func (f *SQS) deleteMessage(q *queue, in request) (any, *apiError) {
	// A stale handle (the message was received again since) deletes
	// nothing and is not an error, as in SQS.
	if i, ok := f.byReceipt(q, in.ReceiptHandle); ok {
		q.msgs = append(q.msgs[:i], q.msgs[i+1:]...)
	}
	return map[string]any{}, nil
}

func (f *SQS) changeMessageVisibility(q *queue, in request) (any, *apiError) {
	i, ok := f.byReceipt(q, in.ReceiptHandle)
	now := f.clk.Now()
	if !ok || !q.msgs[i].visibleAt.After(now) {
		return nil, &apiError{code: "com.amazonaws.sqs#MessageNotInflight", msg: "The message referred to isn't in flight.", query: "AWS.SimpleQueueService.MessageNotInflight;Sender"}
	}
	q.msgs[i].visibleAt = now.Add(time.Duration(aws.ToInt(in.VisibilityTimeout)) * time.Second)
	return map[string]any{}, nil
}
