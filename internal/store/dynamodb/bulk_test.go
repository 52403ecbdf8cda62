package dynamodb

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// BulkLoad writes exactly the items Commit writes: the same change,
// committed into one set of tables and bulk-loaded into another, leaves
// the same items (every attribute: versions, index keys, ttl).
func TestBulkLoadWritesWhatCommitWrites(t *testing.T) {
	committed, loaded := newStore(t), newStore(t)
	t0 := time.Date(2099, 3, 10, 6, 0, 0, 0, time.UTC)
	ctx := t.Context()
	var c store.Change
	for i := range 30 { // more than one BatchWriteItem
		pid := fmt.Sprintf("p%02d", i)
		c.Pipelines = append(c.Pipelines, store.PipelineWrite{Pipeline: store.Pipeline{ID: pid, Doc: []byte("pipeline: {id: " + pid + "}\n"), ConfigVersion: 1, Hash: "h", File: pid + ".yaml", FirstLoadedAt: t0, UpdatedAt: t0}})
		c.Sensors = append(c.Sensors, store.SensorWrite{Sensor: store.Sensor{PipelineID: pid, Key: "s", Data: sensor.NewObject(map[string]sensor.Value{"count": sensor.IntValue(int64(i))}), ChangedAt: t0, WrittenAt: t0}})
		r := run.Run{Key: run.Key{PipelineID: pid, ScheduleID: "cron", Period: "2099-03-10"}, State: run.Running, CreatedAt: t0, UpdatedAt: t0, StateSince: t0, ExpiresAt: t0}
		if i%2 == 0 {
			r.State, r.Outcome, r.EndedAt = run.Completed, run.OutcomeSucceeded, t0
		}
		c.Runs = append(c.Runs, store.RunWrite{Run: r})
	}
	if err := committed.Commit(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := loaded.BulkLoad(ctx, c); err != nil {
		t.Fatal(err)
	}
	want, got := scanAll(t, committed, committed.t.Control), scanAll(t, loaded, loaded.t.Control)
	if len(want) != 90 || !reflect.DeepEqual(got, want) {
		t.Fatalf("bulk-loaded items differ from committed ones:\ngot  %d %v\nwant %d %v", len(got), got, len(want), want)
	}

	if err := loaded.BulkLoad(ctx, store.Change{Events: []event.Event{{ID: "e"}}}); err == nil || !strings.Contains(err.Error(), "events") {
		t.Fatalf("BulkLoad of events: %v, want a refusal", err)
	}
	del := store.Change{SensorDeletes: []store.SensorDelete{{PipelineID: "p00", Key: "s"}}}
	if err := loaded.BulkLoad(ctx, del); err == nil || !strings.Contains(err.Error(), "not a put") {
		t.Fatalf("BulkLoad of a delete: %v, want a refusal", err)
	}
}

// scanAll is every item of a table as text, by key.
func scanAll(t *testing.T, s *Store, table string) map[string]string {
	t.Helper()
	out := map[string]string{}
	in := &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)}
	for {
		res, err := s.c.Scan(context.Background(), in)
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range res.Items {
			r := readItem(it)
			out[r.text(attrPK)+"/"+r.text(attrSK)] = avText(&types.AttributeValueMemberM{Value: it})
		}
		if len(res.LastEvaluatedKey) == 0 {
			return out
		}
		in.ExclusiveStartKey = res.LastEvaluatedKey
	}
}

// avText is an attribute value as text, maps by sorted key.
func avText(v types.AttributeValue) string {
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return "S:" + strconv.Quote(x.Value)
	case *types.AttributeValueMemberN:
		return "N:" + x.Value
	case *types.AttributeValueMemberBOOL:
		return fmt.Sprint("BOOL:", x.Value)
	case *types.AttributeValueMemberNULL:
		return "NULL"
	case *types.AttributeValueMemberB:
		return fmt.Sprintf("B:%x", x.Value)
	case *types.AttributeValueMemberL:
		parts := make([]string, len(x.Value))
		for i, e := range x.Value {
			parts[i] = avText(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case *types.AttributeValueMemberM:
		keys := slices.Sorted(maps.Keys(x.Value))
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = strconv.Quote(k) + "=" + avText(x.Value[k])
		}
		return "{" + strings.Join(parts, ",") + "}"
	}
	return fmt.Sprintf("%T", v)
}
