package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/url"

	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

func init() {
	register(&command{
		name:    "sensor",
		summary: "Write a sensor through the API of a running `interlock serve`, or into an AWS deployment's control table",
		usage:   "put PIPELINE KEY [JSON|-] [--server URL|dynamodb://PREFIX[?region=R]] [--output table|json]",
		examples: []string{
			`interlock sensor put gold-revenue row-count '{"count": 15432}'`,
			`echo '{"status": "ready"}' | interlock sensor put gold-revenue upstream-complete -`,
			`interlock sensor put gold-revenue row-count '{"count": 15432}' --server 'dynamodb://prod-interlock?region=eu-west-1'`,
			`curl -X PUT -H 'Content-Type: application/json' -d '{"count": 15432}' http://127.0.0.1:7070/v1/pipelines/gold-revenue/sensors/row-count`,
		},
		args:  func() []string { return []string{"put"} },
		flags: runSensor,
	})
}

func runSensor(fs *flag.FlagSet) action {
	cf := addClientFlags(fs)
	return func(ctx context.Context, env Env) int {
		rest := fs.Args()
		if len(rest) < 3 || len(rest) > 4 || rest[0] != "put" {
			return usageError(env, fs, "want `put PIPELINE KEY [JSON|-]`")
		}
		pipelineID, key := rest[1], rest[2]
		body := []byte("{}")
		if len(rest) == 4 {
			if rest[3] == "-" {
				b, err := io.ReadAll(io.LimitReader(env.Stdin, 16<<20))
				if err != nil {
					return fail(env, "sensor", err)
				}
				body = b
			} else {
				body = []byte(rest[3])
			}
		}
		if awsTarget(*cf.server) {
			return sensorPutAWS(ctx, env, *cf.server, cf.output.String(), pipelineID, key, body)
		}
		cl, err := cf.client()
		if err != nil {
			return fail(env, "sensor", err)
		}
		var res api.SensorWritten
		raw, err := cl.call(ctx, "PUT", "/v1/pipelines/"+url.PathEscape(pipelineID)+"/sensors/"+url.PathEscape(key), body, &res)
		if err != nil {
			return fail(env, "sensor", err)
		}
		if *cf.output == "json" {
			printJSON(env.Stdout, raw)
			return ExitOK
		}
		what := "new data"
		if !res.Changed {
			what = "identical to what was stored: not new data, starts nothing"
		}
		fmt.Fprintf(env.Stdout, "stored %s/%s for period %s (%s)\n", res.PipelineID, res.Key, res.Period, what)
		return ExitOK
	}
}
