package dynamodb

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/store"
)

// Key layouts. They are this package's alone: nobody else builds or parses
// a PK or SK (docs/aws.md, "Tables, keys and indexes", lists them). The
// control table keeps the seed's keys (PIPELINE#<id> with CONFIG,
// SENSOR#<key>, TRIGGER#<schedule>#<period>); the rest follow the same
// style. A period never holds '#', and it is the last part of every key
// that ends with one, so a key reads back unambiguously; a sensor key may
// hold '#' (per-period keys), and it is always the last part.

// Attribute names of the primary key and of retention.
const (
	attrPK  = "PK"
	attrSK  = "SK"
	attrTTL = "ttl"
)

// Sort keys and prefixes of the control table.
const (
	pkPipelinePrefix    = "PIPELINE#"
	skConfig            = "CONFIG"
	skSensorPrefix      = "SENSOR#"      // the inbox: written by anyone
	skSensorStatePrefix = "SENSORSTATE#" // the store's versioned sensor state
	skRunPrefix         = "TRIGGER#"
	skBaselinePrefix    = "BASELINE#"
	skMarkerPrefix      = "MARKER#"
	skRerunReqPrefix    = "RERUN_REQUEST#"
	pkCalendars         = "CALENDARS"
	skCalendarPrefix    = "CALENDAR#"
	pkTimerPrefix       = "TIMER#"
	skTimer             = "TIMER"
	skJobPrefix         = "JOB#"   // job log table
	skRerunPrefix       = "RERUN#" // rerun table
)

// Keys of the events table.
const (
	pkEventShardPrefix = "EV#"      // EV#<shard> / <seq, 20 digits>
	pkCounterPrefix    = "EVSHARD#" // EVSHARD#<shard> / COUNTER
	skCounter          = "COUNTER"
	pkEventIDPrefix    = "EVID#" // EVID#<id> / EVID: an external event's id, stored once
	skEventID          = "EVID"
	pkSinkPrefix       = "SINK#" // SINK#<sink> / THREAD#…, SENT#…, ALERTED#…, DEAD#…
	pkAlertCursors     = "ALERTCURSORS"
	skThreadPrefix     = "THREAD#"
	skSentPrefix       = "SENT#"
	skAlertedPrefix    = "ALERTED#"
	skDeadPrefix       = "DEAD#"
)

func pipelinePK(id string) string { return pkPipelinePrefix + id }

func runSK(scheduleID, period string) string { return skRunPrefix + scheduleID + "#" + period }

func baselineSK(k run.Key) string { return skBaselinePrefix + k.ScheduleID + "#" + k.Period }

func markerPrefix(k run.Key) string { return skMarkerPrefix + k.ScheduleID + "#" + k.Period + "#" }

func markerSK(k run.Key, kind string) string { return markerPrefix(k) + kind }

func ledgerPrefix(k run.Key) string { return skRerunPrefix + k.ScheduleID + "#" + k.Period + "#" }

// ledgerSK zero-pads the sequence so that the rerun table's sort order is
// the ledger's order.
func ledgerSK(k run.Key, seq int) string { return fmt.Sprintf("%s%010d", ledgerPrefix(k), seq) }

func timerPK(key string) string { return pkTimerPrefix + key }

func eventPK(shard int) string { return pkEventShardPrefix + strconv.Itoa(shard) }

// eventSK zero-pads the sequence so that the shard's sort order is its
// commit order.
func eventSK(seq int64) string { return fmt.Sprintf("%020d", seq) }

func counterPK(shard int) string { return pkCounterPrefix + strconv.Itoa(shard) }

func sinkPK(sink string) string { return pkSinkPrefix + sink }

func periodPart(k run.Key) string { return k.PipelineID + "#" + k.ScheduleID + "#" + k.Period }

func threadSK(k run.Key) string { return skThreadPrefix + periodPart(k) }

func alertedSK(k run.Key) string { return skAlertedPrefix + periodPart(k) }

func sentSK(k run.Key, typ, hash string) string {
	return skSentPrefix + periodPart(k) + "#" + typ + "#" + hash
}

func deadSK(eventID string) string { return skDeadPrefix + eventID }

// jobSK is a job report's key: the seed's JOB#<schedule>#<date>#<millis>.
func jobSK(scheduleID, period string, at time.Time) string {
	return fmt.Sprintf("%s%s#%s#%d", skJobPrefix, scheduleID, period, at.UnixMilli())
}

func rerunRequestSK(scheduleID, period string) string {
	return skRerunReqPrefix + scheduleID + "#" + period
}

// sensorStateSK is the store's sensor state of a key. A sensor key is any
// bytes (the port does not require UTF-8) and its reads are byte-wise
// ranges (SensorListPrefix), so it goes into keys as keyText.
func sensorStateSK(key string) string { return skSensorStatePrefix + keyText(key) }

// keyText maps a key's bytes one to one onto the characters U+0000 to
// U+00FF (the bytes read as Latin-1): any bytes make a valid DynamoDB
// string, whose order and prefixes are those of the bytes (UTF-8 encodes
// those characters in their order). ASCII is unchanged.
func keyText(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			ascii = false
			break
		}
	}
	if ascii {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteRune(rune(s[i]))
	}
	return b.String()
}

// splitLast splits s at its last '#': the period (or millis) that ends a
// key never holds one, so what comes before is the rest, '#' and all.
func splitLast(s string) (string, string, bool) {
	i := strings.LastIndexByte(s, '#')
	if i < 0 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// shardOf is the shard of a cross-pipeline index partition: the event
// log's, so that one pipeline's items share a partition in every index.
func shardOf(pipelineID string) string { return strconv.Itoa(store.EventShard(pipelineID)) }

// Sortable time text. A time in a sort key is its Unix nanoseconds moved
// into [0, 2^64) and written with 20 digits, so text order is time order,
// before 1970 too. The zero time (no time) sorts first, with the earliest
// instant the store can hold.
func sortTime(t time.Time) string {
	if t.IsZero() {
		return strings.Repeat("0", 20)
	}
	return fmt.Sprintf("%020d", uint64(clampNanos(t))^(1<<63))
}

func clampNanos(t time.Time) int64 { return store.QueryNanos(t) }
