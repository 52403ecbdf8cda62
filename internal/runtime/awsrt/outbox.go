package awsrt

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/eventbridge"
	ebtypes "github.com/aws/aws-sdk-go-v2/service/eventbridge/types"

	"github.com/interlockhq/interlock/internal/clock"
	"github.com/interlockhq/interlock/internal/event"
)

// The outbox on AWS. The engine commits events in the same transaction as
// the state change behind them (the event log in the events table); the
// events table's stream (NEW_IMAGE) invokes the Publisher, which puts
// every Interlock event of the batch on the EventBridge bus. The stream is
// the outbox's cursor: a batch's checkpoint moves only when the function
// returns, past every record it did not name as failed. So an event is
// published at least once — a function that dies between PutEvents and
// its return has its batch delivered again, and the events EventBridge
// had accepted go out a second time, with the same eventId — and never
// lost while its stream record lives (24 hours; the events themselves stay
// in the table for their retention).

// Publisher defaults.
const (
	DefaultPublishAttempts   = 4
	DefaultPublishMinBackoff = 50 * time.Millisecond
	DefaultPublishMaxBackoff = time.Second
	// deadlineMargin is the time kept before the invocation's deadline to
	// answer: a function that times out has its whole batch retried.
	deadlineMargin = 2 * time.Second
)

// putEventsMaxEntries is PutEvents' limit on entries per call.
const putEventsMaxEntries = 10

// PublisherConfig configures a Publisher.
type PublisherConfig struct {
	EventBridge *eventbridge.Client
	Bus         string // the custom bus's name or ARN
	// EventsTable is the events table's name: a record from another
	// table's stream is a wiring mistake, refused as a whole.
	EventsTable string
	Clock       clock.Clock  // nil: the real clock
	Logger      *slog.Logger // nil: discard

	// MaxAttempts is how many times one entry is put within one
	// invocation before its record is reported failed (0: 4); MinBackoff
	// and MaxBackoff bound the wait between attempts.
	MaxAttempts int
	MinBackoff  time.Duration
	MaxBackoff  time.Duration
}

// Publisher is the outbox publisher's Lambda handler (Handle).
type Publisher struct {
	c      PublisherConfig
	decode func(events.DynamoDBEventRecord) (event.Event, bool, error)
}

// pending is one entry to publish and the record it came from.
type pending struct {
	record int // index in the batch
	entry  ebtypes.PutEventsRequestEntry
}

// Handle publishes the Interlock events of a batch of events-table stream
// records, and names as batch item failures (by sequence number, what the
// platform expects) the records from the lowest one whose event could not
// be put: the stream delivers that record and the later ones again.
//
//   - A record that is not an event (alert bookkeeping, shard counters),
//     that removes one (its TTL expired), or that is an event from
//     outside (stored by the event sink: it came from the bus) publishes
//     nothing; the store's decoder tells them apart.
//   - A record that does not decode, or whose event can never be an
//     EventBridge entry, is logged at error level and skipped: it cannot
//     become publishable, and failing it would stop its shard — every
//     later event of its pipelines — until the record expires. The event,
//     if there is one, stays in the event log.
//   - Entries EventBridge fails (FailedEntryCount, an ErrorCode per entry;
//     or the whole call) are put again with backoff up to MaxAttempts
//     times within the invocation when the failure is transient; what
//     still fails is reported.
//
// Handle returns an error only when the batch comes from another table's
// stream (a wiring mistake: nothing is published, the batch is retried
// and the function's Errors alarm fires).
func (p *Publisher) Handle(ctx context.Context, in events.DynamoDBEvent) (events.DynamoDBEventResponse, error) {
	resp := events.DynamoDBEventResponse{BatchItemFailures: []events.DynamoDBBatchItemFailure{}}
	var todo []pending
	for i, rec := range in.Records {
		e, publish, err := p.decode(rec)
		if errors.Is(err, errWrongTable) {
			return resp, err
		}
		if err != nil {
			p.c.Logger.Error("outbox: stream record skipped: it does not decode", "sequenceNumber", rec.Change.SequenceNumber,
				"eventID", rec.EventID, "err", err)
			continue
		}
		if !publish {
			continue
		}
		entry, err := entryOf(e, p.c.Bus)
		if err != nil {
			p.c.Logger.Error("outbox: event skipped: it cannot be put on the bus", "sequenceNumber", rec.Change.SequenceNumber,
				"event", e.ID, "type", e.Type, "err", err)
			continue
		}
		todo = append(todo, pending{record: i, entry: entry})
	}
	failed := p.publish(ctx, todo)
	if failed < 0 {
		return resp, nil
	}
	for _, rec := range in.Records[failed:] {
		resp.BatchItemFailures = append(resp.BatchItemFailures, events.DynamoDBBatchItemFailure{ItemIdentifier: rec.Change.SequenceNumber})
	}
	return resp, nil
}

// errWrongTable: a record from another table's stream.
var errWrongTable = errors.New("outbox: record from another table's stream")

// publish puts todo in calls of at most 10 entries and MaxEntrySize, in
// record order, and returns the index of the lowest record whose entry is
// not on the bus, or -1. It stops at the first call that keeps a failure:
// the records after it are delivered again anyway.
func (p *Publisher) publish(ctx context.Context, todo []pending) int {
	for len(todo) > 0 {
		n, size := 0, 0
		for n < len(todo) && n < putEventsMaxEntries && size+entrySize(todo[n].entry) <= MaxEntrySize {
			size += entrySize(todo[n].entry)
			n++
		}
		if left := p.put(ctx, todo[:n]); len(left) > 0 {
			lowest := left[0].record
			for _, l := range left {
				lowest = min(lowest, l.record)
			}
			return lowest
		}
		todo = todo[n:]
	}
	return -1
}

// put puts one call's entries, again and again for those that fail
// transiently, and returns those still not on the bus.
func (p *Publisher) put(ctx context.Context, batch []pending) []pending {
	for attempt := 1; ; attempt++ {
		entries := make([]ebtypes.PutEventsRequestEntry, len(batch))
		for i, b := range batch {
			entries[i] = b.entry
		}
		out, err := p.c.EventBridge.PutEvents(ctx, &eventbridge.PutEventsInput{Entries: entries})
		var left []pending
		retry := true
		switch {
		case err != nil:
			left = batch
			p.c.Logger.Warn("outbox: PutEvents failed", "entries", len(batch), "attempt", attempt, "err", err)
		case len(out.Entries) != len(batch):
			// EventBridge answers one result per entry, in order; any
			// other answer cannot say which went out.
			left = batch
			p.c.Logger.Warn("outbox: PutEvents answered a different number of results", "entries", len(batch), "results", len(out.Entries))
		default:
			retry = false
			for i, r := range out.Entries {
				if r.ErrorCode == nil && r.EventId != nil {
					continue
				}
				left = append(left, batch[i])
				code := aws.ToString(r.ErrorCode)
				retry = retry || transientEntryError(code)
				p.c.Logger.Warn("outbox: PutEvents failed an entry", "detailType", aws.ToString(batch[i].entry.DetailType),
					"code", code, "message", aws.ToString(r.ErrorMessage), "attempt", attempt)
			}
		}
		if len(left) == 0 {
			return nil
		}
		if !retry || attempt >= p.c.MaxAttempts || ctx.Err() != nil {
			return left
		}
		wait := p.backoff(attempt)
		if dl, ok := ctx.Deadline(); ok && dl.Sub(p.c.Clock.Now()) < wait+deadlineMargin {
			return left
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return left
		case <-t.C:
		}
		batch = left
	}
}

// transientEntryError reports whether an entry that failed with code may
// go through if put again: EventBridge's internal failures and throttling
// (and any code it may add). A malformed entry, a missing bus or a refused
// permission fails the same way again within the invocation; it is
// reported at once and the stream retries it (a bus or a permission can
// be fixed).
func transientEntryError(code string) bool {
	switch code {
	case "MalformedDetail", "InvalidArgument", "NotFoundException", "AccessDeniedException", "ValidationException":
		return false
	}
	return true
}

// backoff is the wait after the n-th failed attempt: MinBackoff doubled
// n-1 times, capped at MaxBackoff, jittered to between half and all of it.
func (p *Publisher) backoff(n int) time.Duration {
	d := p.c.MinBackoff
	for i := 1; i < n && d < p.c.MaxBackoff; i++ {
		d *= 2
	}
	d = min(d, p.c.MaxBackoff)
	half := d / 2
	return half + rand.N(d-half+1)
}

// newPublisher checks c, fills its defaults and returns the publisher that
// reads records with decode.
func newPublisher(c PublisherConfig, decode func(events.DynamoDBEventRecord) (event.Event, bool, error)) (*Publisher, error) {
	if c.EventBridge == nil || c.Bus == "" {
		return nil, fmt.Errorf("outbox: a publisher needs an EventBridge client and a bus")
	}
	if c.Clock == nil {
		c.Clock = clock.Real{}
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxAttempts <= 0 {
		c.MaxAttempts = DefaultPublishAttempts
	}
	if c.MinBackoff <= 0 {
		c.MinBackoff = DefaultPublishMinBackoff
	}
	if c.MaxBackoff <= 0 {
		c.MaxBackoff = DefaultPublishMaxBackoff
	}
	c.MaxBackoff = max(c.MaxBackoff, c.MinBackoff)
	return &Publisher{c: c, decode: decode}, nil
}
