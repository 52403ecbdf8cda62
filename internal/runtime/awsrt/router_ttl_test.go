package awsrt

import (
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/store"
)

// TestRouterKeepsASensorWhoseInboxItemExpired: the TTL deleting a sensor
// inbox item (a per-period item's ttl passes, at once for a period older
// than retention) deletes nothing the store acknowledged — the store's
// sensor state expires by its own ttl, from its last write. A writer
// deleting the item still deletes the sensor.
func TestRouterKeepsASensorWhoseInboxItemExpired(t *testing.T) {
	env := newRouterEnv(t)
	ctrl := env.tables.Control
	m := env.mapping(t, ctrl)
	for _, key := range []string{"orders-landed#2026-01-05", "orders-landed#2026-01-06"} {
		putItem(t, env.client, ctrl, map[string]types.AttributeValue{"PK": s("PIPELINE#orders"), "SK": s("SENSOR#" + key), "status": s("loading")})
	}
	drainAll(t, m)

	// Both inbox items go; one by the TTL, one by a writer. The stream
	// records are built by hand: DynamoDB Local's TTL deletes on its own
	// schedule.
	remove := func(key string, identity *events.DynamoDBUserIdentity) {
		t.Helper()
		if _, err := env.client.DeleteItem(t.Context(), &dynamodb.DeleteItemInput{TableName: aws.String(ctrl),
			Key: map[string]types.AttributeValue{"PK": s("PIPELINE#orders"), "SK": s("SENSOR#" + key)}}); err != nil {
			t.Fatal(err)
		}
		rec := events.DynamoDBEventRecord{EventName: "REMOVE", EventSourceArn: "arn:aws:dynamodb:us-east-1:123:table/" + ctrl + "/stream/2026",
			UserIdentity: identity}
		rec.Change.Keys = map[string]events.DynamoDBAttributeValue{"PK": events.NewStringAttribute("PIPELINE#orders"), "SK": events.NewStringAttribute("SENSOR#" + key)}
		res, err := env.router.Handle(t.Context(), events.DynamoDBEvent{Records: []events.DynamoDBEventRecord{rec}})
		if err != nil || len(res.BatchItemFailures) != 0 {
			t.Fatalf("REMOVE of %s: %+v, %v", key, res, err)
		}
	}
	remove("orders-landed#2026-01-05", &events.DynamoDBUserIdentity{Type: "Service", PrincipalID: "dynamodb.amazonaws.com"})
	remove("orders-landed#2026-01-06", nil)

	if _, err := env.store.SensorGet(t.Context(), "orders", "orders-landed#2026-01-05"); err != nil {
		t.Errorf("sensor whose inbox item the TTL deleted: %v, want it kept", err)
	}
	if _, err := env.store.SensorGet(t.Context(), "orders", "orders-landed#2026-01-06"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("sensor whose inbox item a writer deleted: %v, want it deleted", err)
	}
}
