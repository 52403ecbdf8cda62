package awsrt

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
)

// The names and ids the AWS runtime derives from hashes: what a service
// names a run's execution and a timer's schedule by, and the ids of a
// refused item and of a bus event that has none. Each must stay the same
// across versions (names_test.go pins them): a deployed system holds
// schedules, executions, fingerprints and event ids an earlier version
// made.

// maxExecutionName is Step Functions' limit on an execution's name.
const maxExecutionName = 80

// ExecutionName is the execution of a run's generation whose steps start
// at armedAt: Step Functions' names are 1 to 80 of [A-Za-z0-9-_], so the
// readable part — pipeline, schedule, period, "g" and the generation, each
// character outside the set made '_' — is cut to 63 and followed by '-'
// and 16 hex digits of the SHA-256 of the exact key, generation and
// instant: two runs never share a name through a cut or a replaced
// character, and a run resumed or reopened gets a new one.
func ExecutionName(key run.Key, generation int, armedAt time.Time) string {
	return executionName(key, generation, armedAt, viaTimer)
}

// executionName is ExecutionName for an execution started via via (a
// non-empty via is hashed too).
func executionName(key run.Key, generation int, armedAt time.Time, via string) string {
	gen := strconv.Itoa(generation)
	parts := []string{key.PipelineID, key.ScheduleID, key.Period, gen, strconv.FormatInt(armedAt.UnixNano(), 10)}
	if via != viaTimer {
		parts = append(parts, via)
	}
	readable := key.PipelineID + "-" + key.ScheduleID + "-" + key.Period + "-g" + gen
	return cutName(readable, executionNameChar, '_', maxExecutionName-17) + "-" + partsSum(8, parts...)
}

// ScheduleName is the schedule of a timer key: Scheduler's names are 1 to
// 64 of [0-9a-zA-Z-_.], so the key's allowed characters (others become
// '.'), cut to 47, then '-' and 16 hex digits of the key's SHA-256 — two
// keys never share a name by their cut or replaced characters.
func ScheduleName(key string) string {
	return cutName(key, scheduleNameChar, '.', 47) + "-" + hexSum([]byte(key), 8)
}

func executionNameChar(r rune) bool {
	return r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}

func scheduleNameChar(r rune) bool { return executionNameChar(r) || r == '.' }

// cutName is s with each character ok refuses replaced by repl (an ASCII
// character, as ok allows only those), cut to limit bytes.
func cutName(s string, ok func(rune) bool, repl byte, limit int) string {
	b := make([]byte, 0, min(len(s), limit))
	for _, r := range s {
		if len(b) == limit {
			break
		}
		if ok(r) {
			b = append(b, byte(r))
		} else {
			b = append(b, repl)
		}
	}
	return string(b)
}

// fingerprint identifies a refused item by its content (the keys sorted).
func fingerprint(o sensor.Object) string {
	b, _ := o.MarshalJSON()
	return fingerprintOf(string(b))
}

func fingerprintOf(s string) string { return hexSum([]byte(s), 12) }

// contentID identifies a bus event that has no id by its content:
// source, detail-type, time and the detail with its keys sorted.
func contentID(be BusEvent, detail sensor.Object) string {
	canon, _ := detail.MarshalJSON()
	return "ext-" + partsSum(16, be.Source, be.DetailType, be.Time, string(canon))
}

// hexSum is the first n bytes of data's SHA-256, in hex.
func hexSum(data []byte, n int) string {
	h := sha256.Sum256(data)
	return hex.EncodeToString(h[:n])
}

// partsSum is the first n bytes, in hex, of the SHA-256 of parts each
// ended by a NUL byte, so that no two lists of parts hash alike.
func partsSum(n int, parts ...string) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write([]byte(p))
		h.Write([]byte{0})
	}
	return hex.EncodeToString(h.Sum(nil)[:n])
}
