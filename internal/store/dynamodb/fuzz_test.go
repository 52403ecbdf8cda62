package dynamodb

import (
	"encoding/json"
	"errors"
	"testing"

	"github.com/aws/aws-lambda-go/events"
)

// FuzzDecodeLambda feeds stream records of any shape — as Lambda would
// unmarshal them from JSON — to DecodeLambda for every role: it must never
// panic, and whatever it refuses is an *ItemError naming the item.
func FuzzDecodeLambda(f *testing.F) {
	for _, seed := range []string{
		`{"eventName":"INSERT","dynamodb":{"Keys":{"PK":{"S":"PIPELINE#p"},"SK":{"S":"SENSOR#k"}},"NewImage":{"PK":{"S":"PIPELINE#p"},"SK":{"S":"SENSOR#k"},"data":{"M":{"n":{"N":"1"}}}}}}`,
		`{"eventName":"INSERT","dynamodb":{"Keys":{"PK":{"S":"PIPELINE#p"},"SK":{"S":"SENSOR#k"}},"NewImage":{"PK":{"S":"PIPELINE#p"},"SK":{"S":"SENSOR#k"},"a":{"L":[{"NS":["1","2e3"]},{"BS":["AA=="]},{"NULL":true}]}}}}`,
		`{"eventName":"REMOVE","dynamodb":{"Keys":{"PK":{"S":"PIPELINE#p"},"SK":{"S":"SENSOR#k"}}}}`,
		`{"eventName":"INSERT","dynamodb":{"Keys":{"PK":{"S":"PIPELINE#p"},"SK":{"S":"JOB#d#2026-03-10#17"}},"NewImage":{"event":{"S":"fail"}}}}`,
		`{"eventName":"INSERT","dynamodb":{"Keys":{"PK":{"S":"PIPELINE#p"},"SK":{"S":"RERUN_REQUEST#d#2026-03-10"}},"NewImage":{"reason":{"N":"3"}}}}`,
		`{"eventName":"INSERT","dynamodb":{"Keys":{"PK":{"S":"EV#3"},"SK":{"S":"00000000000000000001"}},"NewImage":{"seq":{"N":"1e400"},"time":{"N":"-5"},"detail":{"S":"{"}}}}`,
		`{"eventName":"INSERT","dynamodb":{"Keys":{"PK":{"N":"1"}},"NewImage":{"data":{"S":"x"}}}}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		var rec events.DynamoDBEventRecord
		if json.Unmarshal(b, &rec) != nil {
			return
		}
		for _, role := range []Role{RoleControl, RoleJobLog, RoleEvents, 0} {
			got, err := DecodeLambda(role, rec)
			var ie *ItemError
			if err != nil && !errors.As(err, &ie) {
				t.Fatalf("role %v: error %v is not an *ItemError", role, err)
			}
			if err == nil && got == nil {
				t.Fatalf("role %v: no record and no error", role)
			}
		}
	})
}
