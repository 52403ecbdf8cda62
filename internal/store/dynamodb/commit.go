package dynamodb

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/store"
)

// Commit applies c as one TransactWriteItems: one action per record (a
// Put, a Delete, or a ConditionCheck for the checks), each carrying its
// condition of the Change as a ConditionExpression, plus, per event shard
// the Change appends to, an Update of the shard's counter conditioned on
// its value — so a shard's positions are taken, and become visible, in
// commit order.
//
// A cancelled transaction is read by its cancellation reasons: a failed
// condition of the Change is store.ErrConflict (nothing was written); a
// failed counter condition alone means another commit appended to the
// shard first, so the counters are read again and the transaction retried;
// a transaction conflict or throttling is retried after a jittered
// backoff. Retries are bounded (maxAttempts); each attempt has its own
// client request token, which the SDK's own retries of that attempt reuse,
// so a retried request that had in fact been applied is not applied
// twice (and not mistaken for a conflict).
func (s *Store) Commit(ctx context.Context, c store.Change) error {
	base, ok, err := store.Plan(c, s.plan)
	if !ok {
		return err
	}
	return s.appendEvents(ctx, base, c.Events, false)
}

// appendEvents runs base and the events as one transaction, with the
// counters' conditions, until it applies, fails for good, or maxAttempts.
func (s *Store) appendEvents(ctx context.Context, base []action, evs []event.Event, external bool) error {
	shards, order := groupEvents(evs)
	for try := 0; ; try++ {
		// The counters this store has not seen (or saw move) are read;
		// the others are the values it last wrote or read.
		if err := s.readCounters(ctx, s.unknownCounters(order)); err != nil {
			return err
		}
		acts, next, err := s.eventActions(shards, order, external)
		if err != nil {
			return err
		}
		acts = append(append([]action{}, base...), acts...)
		outcome, err := s.transact(ctx, acts)
		switch outcome {
		case applied:
			s.setCounters(next)
			return nil
		case failed:
			return err
		case countersMoved:
			s.forgetCounters(order)
		case busy:
		}
		if try+1 >= maxAttempts {
			return fmt.Errorf("%w: dynamodb: commit gave up after %d attempts (contention): %v", store.ErrConflict, maxAttempts, err)
		}
		if err := sleep(ctx, backoff(try)); err != nil {
			return err
		}
	}
}

// action is one action of the transaction and what it is, for messages
// and for reading cancellation reasons.
type action struct {
	what    string
	counter bool // an event shard's counter or an event's slot: a failed condition means "read the counter again"
	dedup   bool // a record that proves the transaction was applied before: a failed condition means "done already"
	tw      types.TransactWriteItem
}

// maxItemBytes is where the store refuses an item, below DynamoDB's 400 KB
// so that the message is ours and names the record.
const maxItemBytes = 390 << 10

func put(table, what string, w *itemWriter, cond string, values map[string]types.AttributeValue) (action, error) {
	if w.err != nil {
		return action{}, fmt.Errorf("dynamodb: %s: %w", what, w.err)
	}
	if n := itemSize(w.it); n > maxItemBytes {
		return action{}, fmt.Errorf("dynamodb: %s is %d bytes as an item; a DynamoDB item holds at most 400 KB (keep pipeline documents, sensor data and details smaller)", what, n)
	}
	p := &types.Put{TableName: aws.String(table), Item: w.it}
	if cond != "" {
		p.ConditionExpression = aws.String(cond)
		p.ExpressionAttributeValues = values
	}
	return action{what: what, tw: types.TransactWriteItem{Put: p}}, nil
}

func del(table, what, pk, sk, cond string, values map[string]types.AttributeValue) action {
	d := &types.Delete{TableName: aws.String(table), Key: keyOf(pk, sk)}
	if cond != "" {
		d.ConditionExpression = aws.String(cond)
		d.ExpressionAttributeValues = values
	}
	return action{what: what, tw: types.TransactWriteItem{Delete: d}}
}

func check(table, what, pk, sk, cond string, values map[string]types.AttributeValue) action {
	return action{what: what, tw: types.TransactWriteItem{ConditionCheck: &types.ConditionCheck{TableName: aws.String(table),
		Key: keyOf(pk, sk), ConditionExpression: aws.String(cond), ExpressionAttributeValues: values}}}
}

// Conditions. Every item has PK, so attribute_not_exists(PK) is "absent".
const condAbsent = "attribute_not_exists(PK)"

// versionCond is the port's version rule: 0 means absent, otherwise the
// stored version must equal it (and so the item exist).
func versionCond(expect int64) (string, map[string]types.AttributeValue) {
	if expect == 0 {
		return condAbsent, nil
	}
	return "version = :v", map[string]types.AttributeValue{":v": numAttr(expect)}
}

func dueCond(due *time.Time) (string, map[string]types.AttributeValue) {
	if due == nil {
		return "", nil
	}
	return "dueAt = :due", map[string]types.AttributeValue{":due": numAttr(clampNanos(*due))}
}

// plan turns every record of c but its events into actions.
func (s *Store) plan(c store.Change) ([]action, error) {
	var acts []action
	var errs []error
	add := func(a action, err error) {
		if err != nil {
			errs = append(errs, err)
			return
		}
		acts = append(acts, a)
	}
	ctl := s.t.Control
	for _, w := range c.Pipelines {
		cond, v := versionCond(w.ExpectVersion)
		add(put(ctl, "pipeline "+w.Pipeline.ID, pipelineItem(w.Pipeline, w.ExpectVersion+1), cond, v))
	}
	for _, k := range c.PipelineChecks {
		cond, v := versionCond(k.Version)
		add(check(ctl, "pipeline check "+k.ID, pipelinePK(k.ID), skConfig, cond, v), nil)
	}
	for _, w := range c.Calendars {
		cond, v := versionCond(w.ExpectVersion)
		add(put(ctl, "calendar "+w.Calendar.Name, calendarItem(w.Calendar, w.ExpectVersion+1), cond, v))
	}
	for _, k := range c.CalendarChecks {
		cond, v := versionCond(k.Version)
		add(check(ctl, "calendar check "+k.Name, pkCalendars, skCalendarPrefix+k.Name, cond, v), nil)
	}
	for _, w := range c.Sensors {
		cond, v := versionCond(w.ExpectVersion)
		add(put(ctl, "sensor "+w.Sensor.PipelineID+"/"+w.Sensor.Key, s.sensorStateItem(w.Sensor, w.ExpectVersion+1), cond, v))
	}
	for _, d := range c.SensorDeletes {
		add(del(ctl, "sensor delete "+d.PipelineID+"/"+d.Key, pipelinePK(d.PipelineID), sensorStateSK(d.Key), "", nil), nil)
	}
	for _, w := range c.Runs {
		cond, v := versionCond(w.ExpectVersion)
		add(put(ctl, fmt.Sprintf("run %v", w.Run.Key), s.runItem(w.Run, w.ExpectVersion+1), cond, v))
	}
	for _, l := range c.Ledger {
		add(put(s.t.Rerun, fmt.Sprintf("ledger entry %v #%d", l.Key, l.Seq), s.ledgerItem(l), condAbsent, nil))
	}
	for _, b := range c.Baselines {
		add(put(ctl, fmt.Sprintf("baseline %v", b.Key), s.baselineItem(b), "", nil))
	}
	for _, k := range c.BaselineDelete {
		add(del(ctl, fmt.Sprintf("baseline delete %v", k), pipelinePK(k.PipelineID), baselineSK(k), "", nil), nil)
	}
	for _, w := range c.Markers {
		cond := ""
		if w.IfAbsent {
			cond = condAbsent
		}
		add(put(ctl, fmt.Sprintf("marker %v %s", w.Marker.Key, w.Marker.Kind), s.markerItem(w.Marker), cond, nil))
	}
	for _, d := range c.MarkerDeletes {
		add(del(ctl, fmt.Sprintf("marker delete %v %s", d.Key, d.Kind), pipelinePK(d.Key.PipelineID), markerSK(d.Key, d.Kind), "", nil), nil)
	}
	for _, w := range c.Timers {
		cond, v := dueCond(w.ExpectDueAt)
		add(put(ctl, "timer "+w.Timer.Key, timerItem(w.Timer), cond, v))
	}
	for _, d := range c.TimerDeletes {
		cond, v := dueCond(d.ExpectDueAt)
		add(del(ctl, "timer delete "+d.Key, timerPK(d.Key), skTimer, cond, v), nil)
	}
	ev := s.t.Events
	for _, w := range c.DeliveryCursors {
		cond := ""
		if w.IfAbsent {
			cond = condAbsent
		}
		add(put(ev, "delivery cursor "+w.Cursor.Sink, deliveryCursorItem(w.Cursor), cond, nil))
	}
	for _, d := range c.DeadLetters {
		add(put(ev, "dead letter "+d.Sink+" "+d.EventID, s.deadLetterItem(d), "", nil))
	}
	for _, a := range c.AlertThreads {
		add(put(ev, fmt.Sprintf("alert thread %s %v", a.Sink, a.Key), s.threadItem(a), condAbsent, nil))
	}
	for _, a := range c.AlertsSent {
		add(put(ev, fmt.Sprintf("alert sent %s %v %s", a.Sink, a.Key, a.Type), s.sentItem(a), "", nil))
	}
	for _, a := range c.AlertsAlerted {
		add(put(ev, fmt.Sprintf("alert alerted %s %v", a.Sink, a.Key), s.alertedItem(a), "", nil))
	}
	s.leaseActions(c, add)
	s.backfillActions(c, add)
	s.silenceActions(c, add)
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return acts, nil
}

// groupEvents splits events by shard, each in the Change's order, and
// lists the shards in the order they first appear.
func groupEvents(evs []event.Event) (map[int][]event.Event, []int) {
	shards := map[int][]event.Event{}
	var order []int
	for _, e := range evs {
		n := store.EventShard(e.PipelineID)
		if _, ok := shards[n]; !ok {
			order = append(order, n)
		}
		shards[n] = append(shards[n], e)
	}
	return shards, order
}

// eventActions appends each shard's events after the counter value the
// store believes, and moves the counter, conditioned on that value; next
// is each counter's value once the transaction applied.
func (s *Store) eventActions(shards map[int][]event.Event, order []int, external bool) ([]action, map[int]int64, error) {
	var acts []action
	next := map[int]int64{}
	for _, n := range order {
		last := s.counter(n)
		for i, e := range shards[n] {
			e.Shard, e.Seq = n, last+int64(i)+1
			a, err := put(s.t.Events, "event "+e.ID, s.eventItem(e, external), condAbsent, nil)
			if err != nil {
				return nil, nil, err
			}
			a.counter = true
			acts = append(acts, a)
		}
		next[n] = last + int64(len(shards[n]))
		acts = append(acts, s.counterAction(n, last, next[n]))
	}
	return acts, next, nil
}

const attrCounter = "seq"

func (s *Store) counterAction(n int, last, next int64) action {
	cond := "attribute_not_exists(#seq)"
	values := map[string]types.AttributeValue{":next": numAttr(next)}
	if last > 0 {
		cond = "#seq = :last"
		values[":last"] = numAttr(last)
	}
	return action{what: fmt.Sprintf("event shard %d counter", n), counter: true, tw: types.TransactWriteItem{Update: &types.Update{
		TableName: aws.String(s.t.Events), Key: keyOf(counterPK(n), skCounter),
		UpdateExpression: aws.String("SET #seq = :next"), ConditionExpression: aws.String(cond),
		ExpressionAttributeNames: map[string]string{"#seq": attrCounter}, ExpressionAttributeValues: values}}}
}

// The counters the store believes (a guess the transaction checks).

func (s *Store) counter(n int) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counters[n]
}

func (s *Store) unknownCounters(shards []int) []int {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []int
	for _, n := range shards {
		if _, ok := s.counters[n]; !ok {
			out = append(out, n)
		}
	}
	return out
}

func (s *Store) forgetCounters(shards []int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range shards {
		delete(s.counters, n)
	}
}

// setCounters records the values a transaction wrote (a concurrent
// commit of this store may have written a later one already).
func (s *Store) setCounters(next map[int]int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, v := range next {
		s.counters[n] = max(s.counters[n], v)
	}
}

// readCounters reads the named shards' counters into the store's guesses.
func (s *Store) readCounters(ctx context.Context, shards []int) error {
	if len(shards) == 0 {
		return nil
	}
	seen, err := s.readCounterValues(ctx, shards)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, n := range shards {
		s.counters[n] = max(s.counters[n], seen[n])
	}
	return nil
}

// readCounterValues reads the named shards' counters, strongly consistent
// (a shard nothing was appended to yet is at 0).
func (s *Store) readCounterValues(ctx context.Context, shards []int) (map[int]int64, error) {
	keys := make([]item, len(shards))
	for i, n := range shards {
		keys[i] = keyOf(counterPK(n), skCounter)
	}
	items, err := s.batchGet(ctx, s.t.Events, keys)
	if err != nil {
		return nil, err
	}
	seen := make(map[int]int64, len(shards))
	for _, it := range items {
		r := readItem(it)
		n, err := strconv.Atoi(strings.TrimPrefix(r.text(attrPK), pkCounterPrefix))
		if err != nil {
			return nil, fmt.Errorf("dynamodb: counter item %s: %w", describe(it), err)
		}
		seen[n] = r.num(attrCounter)
		if r.err != nil {
			return nil, r.err
		}
	}
	return seen, nil
}

// outcome is how a transaction attempt ended.
type outcome int

const (
	applied       outcome = iota
	failed                // an error to return (a conflict or another)
	countersMoved         // only the event counters' conditions failed: read them again
	busy                  // a transaction conflict or throttling: try again later
)

// transact runs acts as one transaction and says how it ended.
func (s *Store) transact(ctx context.Context, acts []action) (outcome, error) {
	items := make([]types.TransactWriteItem, len(acts))
	for i, a := range acts {
		items[i] = a.tw
	}
	_, err := s.c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: items, ClientRequestToken: aws.String(newToken())})
	if err == nil {
		return applied, nil
	}
	var tce *types.TransactionCanceledException
	var tip *types.TransactionInProgressException
	var thr *types.ThrottlingException
	var pte *types.ProvisionedThroughputExceededException
	var rle *types.RequestLimitExceeded
	switch {
	case errors.As(err, &tce):
		return cancelled(tce, acts)
	case errors.As(err, &tip), errors.As(err, &thr), errors.As(err, &pte), errors.As(err, &rle):
		return busy, err
	}
	return failed, fmt.Errorf("dynamodb: commit: %w", err)
}

// cancelled reads a cancelled transaction's reasons, one per action.
func cancelled(tce *types.TransactionCanceledException, acts []action) (outcome, error) {
	var conflicts, others []string
	countersFailed, retry, duplicate := false, false, false
	for i, r := range tce.CancellationReasons {
		code := aws.ToString(r.Code)
		what := "an action"
		if i < len(acts) {
			what = acts[i].what
		}
		switch code {
		case "", "None":
		case "ConditionalCheckFailed":
			switch {
			case i < len(acts) && acts[i].counter:
				countersFailed = true
			case i < len(acts) && acts[i].dedup:
				duplicate = true
			default:
				conflicts = append(conflicts, what)
			}
		case "TransactionConflict", "ThrottlingError", "ProvisionedThroughputExceeded", "RequestLimitExceeded":
			retry = true
		default:
			others = append(others, fmt.Sprintf("%s: %s %s", what, code, aws.ToString(r.Message)))
		}
	}
	switch {
	case len(others) > 0:
		return failed, fmt.Errorf("dynamodb: commit refused: %s", strings.Join(others, "; "))
	case duplicate:
		return failed, errDuplicate
	case len(conflicts) > 0:
		return failed, fmt.Errorf("%w: %s", store.ErrConflict, strings.Join(conflicts, ", "))
	case countersFailed:
		return countersMoved, tce
	case retry:
		return busy, tce
	}
	return failed, fmt.Errorf("dynamodb: commit cancelled with no reason given: %w", tce)
}

func newToken() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// itemSize is an item's size as DynamoDB counts it, near enough to refuse
// one before DynamoDB does: names plus values.
func itemSize(it item) int {
	n := 0
	for name, v := range it {
		n += len(name) + valueSize(v)
	}
	return n
}

func valueSize(v types.AttributeValue) int {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return len(x.Value)
	case *types.AttributeValueMemberN:
		return len(x.Value)/2 + 1
	case *types.AttributeValueMemberB:
		return len(x.Value)
	case *types.AttributeValueMemberM:
		n := 3
		for k, e := range x.Value {
			n += len(k) + valueSize(e) + 1
		}
		return n
	case *types.AttributeValueMemberL:
		n := 3
		for _, e := range x.Value {
			n += valueSize(e) + 1
		}
		return n
	}
	return 1
}
