package dynamodb

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/store"
)

// batchWriteMax is BatchWriteItem's limit of items per request.
const batchWriteMax = 25

// BulkLoad writes the items Commit would write for c — the same items,
// built by the same code — without its conditions and not as one
// transaction: BatchWriteItem, 25 items a request, unprocessed items
// retried with a bounded backoff. It is for loading records into tables
// nothing else writes at the time (a benchmark's fixture, an import), where
// a transaction per change would be the slow part. A change with events
// (their positions are taken in commit order) or with deletes or checks is
// refused: Commit it.
func (s *Store) BulkLoad(ctx context.Context, c store.Change) error {
	if len(c.Events) > 0 {
		return errors.New("dynamodb: bulk load: a change with events must be committed")
	}
	acts, ok, err := store.Plan(c, s.plan)
	if !ok {
		return err
	}
	byTable := map[string][]types.WriteRequest{}
	var order []string
	for _, a := range acts {
		p := a.tw.Put
		if p == nil {
			return fmt.Errorf("dynamodb: bulk load: %s is not a put; commit the change", a.what)
		}
		if _, ok := byTable[*p.TableName]; !ok {
			order = append(order, *p.TableName)
		}
		byTable[*p.TableName] = append(byTable[*p.TableName], types.WriteRequest{PutRequest: &types.PutRequest{Item: p.Item}})
	}
	for _, table := range order {
		reqs := byTable[table]
		for start := 0; start < len(reqs); start += batchWriteMax {
			if err := s.batchWrite(ctx, table, reqs[start:min(start+batchWriteMax, len(reqs))]); err != nil {
				return err
			}
		}
	}
	return nil
}

// batchWrite writes up to 25 requests to one table, retrying what
// DynamoDB leaves unprocessed.
func (s *Store) batchWrite(ctx context.Context, table string, pending []types.WriteRequest) error {
	for try := 0; len(pending) > 0; try++ {
		if try > 0 {
			if err := sleep(ctx, backoff(try)); err != nil {
				return err
			}
		}
		if try == maxAttempts {
			return fmt.Errorf("dynamodb: bulk load into %s: %d items still unprocessed after %d attempts", table, len(pending), maxAttempts)
		}
		out, err := s.c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{table: pending}})
		if err != nil {
			return wrapErr("bulk load", table, err)
		}
		pending = out.UnprocessedItems[table]
	}
	return nil
}
