package dynamodb

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/store"
)

// Read primitives: every read of the store is one of these. Reads of the
// base tables and of local indexes are strongly consistent; reads of global
// indexes cannot be (DynamoDB), which docs/aws.md discusses.

// get reads one item by key, strongly consistent; store.ErrNotFound when
// it is not there.
func (s *Store) get(ctx context.Context, table, pk, sk string) (item, error) {
	out, err := s.c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String(table), Key: keyOf(pk, sk), ConsistentRead: aws.Bool(true)})
	if err != nil {
		return nil, wrapErr("read "+pk+"/"+sk, table, err)
	}
	if out.Item == nil {
		return nil, store.ErrNotFound
	}
	return out.Item, nil
}

// getAs reads one item and decodes it.
func getAs[T any](ctx context.Context, s *Store, table, pk, sk string, dec func(item) (T, error)) (T, error) {
	it, err := s.get(ctx, table, pk, sk)
	if err != nil {
		var zero T
		return zero, err
	}
	return dec(it)
}

// queryRange is one key range of one index (or of the table).
type queryRange struct {
	table string
	index index // zero: the table's primary key
	pk    string
	// cond is the condition on the sort key, with the placeholder #sk for
	// its name and :a, :b for its values (nil: the whole partition).
	cond   string
	values []string
	desc   bool
	// filter is a FilterExpression over non-key attributes, with its names
	// (#f…) and values (:f…); used only where docs/aws.md says so.
	filter       string
	filterNames  map[string]string
	filterValues map[string]types.AttributeValue
}

func (q queryRange) input() *dynamodb.QueryInput {
	pkName, skName := attrPK, attrSK
	in := &dynamodb.QueryInput{TableName: aws.String(q.table), ScanIndexForward: aws.Bool(!q.desc)}
	switch {
	case q.index.name == "":
		in.ConsistentRead = aws.Bool(true)
	case q.index.pk == "": // a local index: consistent, the items fetched from the table
		in.IndexName = aws.String(q.index.name)
		skName = q.index.sk
		in.ConsistentRead = aws.Bool(true)
		in.Select = types.SelectAllAttributes
	default:
		in.IndexName = aws.String(q.index.name)
		pkName, skName = q.index.pk, q.index.sk
	}
	names := map[string]string{"#pk": pkName}
	values := map[string]types.AttributeValue{":pk": strAttr(q.pk)}
	expr := "#pk = :pk"
	if q.cond != "" {
		names["#sk"] = skName
		expr += " AND " + q.cond
		for i, v := range q.values {
			if q.index.number {
				values[fmt.Sprintf(":%c", 'a'+i)] = &types.AttributeValueMemberN{Value: v}
			} else {
				values[fmt.Sprintf(":%c", 'a'+i)] = strAttr(v)
			}
		}
	}
	if q.filter != "" {
		in.FilterExpression = aws.String(q.filter)
		for k, v := range q.filterNames {
			names[k] = v
		}
		for k, v := range q.filterValues {
			values[k] = v
		}
	}
	in.KeyConditionExpression = aws.String(expr)
	in.ExpressionAttributeNames = names
	in.ExpressionAttributeValues = values
	return in
}

// query reads q's items in index order, page after page, until each
// returns false or the range ends.
func (s *Store) query(ctx context.Context, q queryRange, each func(item) bool) error {
	in := q.input()
	for {
		out, err := s.c.Query(ctx, in)
		if err != nil {
			return wrapErr("query "+q.pk, q.table, err)
		}
		for _, it := range out.Items {
			if !each(it) {
				return nil
			}
		}
		if len(out.LastEvaluatedKey) == 0 {
			return nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// queryAll reads the whole of q.
func (s *Store) queryAll(ctx context.Context, q queryRange) ([]item, error) {
	var out []item
	err := s.query(ctx, q, func(it item) bool { out = append(out, it); return true })
	return out, err
}

// queryShards runs one query per shard of a sharded index, in parallel,
// and returns each shard's items in its index order. each may stop a
// shard early (it is called from that shard's goroutine only).
func (s *Store) queryShards(ctx context.Context, shard func(n int) queryRange, stop func(items []item) bool) ([][]item, error) {
	out := make([][]item, store.EventShards)
	errs := make([]error, store.EventShards)
	var wg sync.WaitGroup
	for n := range store.EventShards {
		wg.Go(func() {
			errs[n] = s.query(ctx, shard(n), func(it item) bool {
				out[n] = append(out[n], it)
				return stop == nil || !stop(out[n])
			})
		})
	}
	wg.Wait()
	return out, errors.Join(errs...)
}

// scanPrefix reads a whole table for the items whose sort key starts
// with prefix: only for the unfiltered lists (store.IndexScan) of tests
// and tools, never a production read.
func (s *Store) scanPrefix(ctx context.Context, table, prefix string) ([]item, error) {
	in := &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true),
		FilterExpression:          aws.String("begins_with(#sk, :p)"),
		ExpressionAttributeNames:  map[string]string{"#sk": attrSK},
		ExpressionAttributeValues: map[string]types.AttributeValue{":p": strAttr(prefix)}}
	var items []item
	for {
		out, err := s.c.Scan(ctx, in)
		if err != nil {
			return nil, wrapErr("scan", table, err)
		}
		items = append(items, out.Items...)
		if len(out.LastEvaluatedKey) == 0 {
			return items, nil
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
	}
}

// batchGetMax is BatchGetItem's limit of keys per request.
const batchGetMax = 100

// batchGet reads keys of one table, strongly consistent, 100 a request,
// retrying what DynamoDB leaves unprocessed with a bounded backoff. The
// items come back in no particular order; a missing key is left out.
func (s *Store) batchGet(ctx context.Context, table string, keys []item) ([]item, error) {
	var out []item
	for start := 0; start < len(keys); start += batchGetMax {
		pending := keys[start:min(start+batchGetMax, len(keys))]
		for try := 0; len(pending) > 0; try++ {
			if try > 0 {
				if err := sleep(ctx, backoff(try)); err != nil {
					return nil, err
				}
			}
			if try == maxAttempts {
				return nil, fmt.Errorf("dynamodb: batch read of %s: %d keys still unprocessed after %d attempts", table, len(pending), maxAttempts)
			}
			res, err := s.c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
				table: {Keys: pending, ConsistentRead: aws.Bool(true)}}})
			if err != nil {
				return nil, wrapErr("batch read", table, err)
			}
			out = append(out, res.Responses[table]...)
			pending = res.UnprocessedKeys[table].Keys
		}
	}
	return out, nil
}

// Retries: throttling, transaction conflicts and unprocessed batch keys
// are retried with a jittered exponential backoff, at most maxAttempts
// times.
const (
	maxAttempts = 30
	backoffBase = 5 * time.Millisecond
	backoffMax  = 250 * time.Millisecond
)

func backoff(try int) time.Duration {
	d := backoffBase << min(try, 10)
	d = min(d, backoffMax)
	return d/2 + jitter(d/2)
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// wrapErr names the operation and the table, and says what to do when the
// table does not exist.
func wrapErr(op, table string, err error) error {
	var nf *types.ResourceNotFoundException
	if errors.As(err, &nf) {
		return fmt.Errorf("dynamodb: %s: table %s does not exist (create the tables first): %w", op, table, err)
	}
	return fmt.Errorf("dynamodb: %s in %s: %w", op, table, err)
}

func jitter(d time.Duration) time.Duration {
	if d <= 0 {
		return 0
	}
	return rand.N(d)
}
