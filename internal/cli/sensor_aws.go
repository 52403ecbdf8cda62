package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/interlockhq/interlock/internal/app"
	"github.com/interlockhq/interlock/internal/engine"
	"github.com/interlockhq/interlock/internal/sensor"
)

// awsTarget reports whether --server names an AWS deployment
// (dynamodb://<table prefix>) rather than a serve's API.
func awsTarget(server string) bool { return strings.HasPrefix(server, "dynamodb://") }

// sensorPutAWS writes a sensor to an AWS deployment the way anyone with
// DynamoDB access would: one PutItem of the sensor item into the control
// table (docs/aws.md, "How to write sensors"). The stream-router decides
// what it means, as it does for every other writer; what it decided shows
// in the event log. The body and key are checked here as the API checks
// them, so a typo is an error now rather than a SENSOR_REJECTED event later.
func sensorPutAWS(ctx context.Context, env Env, server, output, pipelineID, key string, body []byte) int {
	data, err := sensor.ParseBody(body)
	if err != nil {
		return fail(env, "sensor", badFlag("the sensor body: %v", err))
	}
	if err := engine.CheckSensorKey(key); err != nil {
		return fail(env, "sensor", badFlag("%v", err))
	}
	if err := app.CheckDynamoDBURL(server); err != nil {
		return fail(env, "sensor", badFlag("--server %q: %v", server, err))
	}
	table, item, err := app.PutSensorItem(ctx, server, pipelineID, key, data)
	if err != nil {
		return fail(env, "sensor", err)
	}
	if output == "json" {
		b, _ := json.Marshal(map[string]any{"pipelineId": pipelineID, "key": key, "table": table, "item": item, "written": true})
		printJSON(env.Stdout, b)
		return ExitOK
	}
	fmt.Fprintf(env.Stdout, "wrote %s to table %s; the stream-router decides what it means (SENSOR_REJECTED in the event log if it cannot be a sensor)\n", item, table)
	return ExitOK
}
