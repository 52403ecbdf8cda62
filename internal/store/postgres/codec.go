package postgres

import (
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/interlockhq/interlock/internal/run"
	"github.com/interlockhq/interlock/internal/sensor"
)

// Column encodings (as the SQLite store's, so both read alike). Times are BIGINT Unix nanoseconds (UTC), with NULL for
// Go's zero time: 0 cannot mean "unset" because it is a real instant (the
// Unix epoch). Objects and maps are canonical JSON, NULL when empty.

// Bounds of an int64 count of nanoseconds since the epoch: about the years
// 1678 to 2262. Outside them UnixNano is undefined, so writes are refused
// rather than silently wrapped around.
var (
	minTime = time.Unix(0, math.MinInt64)
	maxTime = time.Unix(0, math.MaxInt64)
)

// encoder turns record fields into column values, keeping the first error
// so a write can encode a whole row and check once.
type encoder struct{ err error }

func (e *encoder) fail(format string, args ...any) {
	if e.err == nil {
		e.err = fmt.Errorf(format, args...)
	}
}

// time encodes t; field names the value in the error.
func (e *encoder) time(field string, t time.Time) any {
	if t.IsZero() {
		return nil
	}
	if t.Before(minTime) || t.After(maxTime) {
		e.fail("postgres: %s %s is outside the storable range (years 1678 to 2262)", field, t.Format(time.RFC3339Nano))
		return nil
	}
	return t.UnixNano()
}

// object encodes sensor data and details.
func (e *encoder) object(field string, o sensor.Object) any {
	if o.Len() == 0 {
		return nil
	}
	b, err := o.MarshalJSON()
	if err != nil {
		e.fail("postgres: %s: %w", field, err)
		return nil
	}
	return string(b)
}

// json encodes a map (a run's job metadata, a baseline's sensors).
// encoding/json sorts map keys, so equal maps give equal text.
func (e *encoder) json(field string, v any, n int) any {
	if n == 0 {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		e.fail("postgres: %s: %w", field, err)
		return nil
	}
	return string(b)
}

// queryNanos is the column value of a time used as a query bound. Unlike
// a stored time it is clamped, not refused: "due before the year 3000" is a
// fair question whose answer is every timer.
func queryNanos(t time.Time) int64 {
	switch {
	case t.Before(minTime):
		return math.MinInt64
	case t.After(maxTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// Scanners: each decodes one column into a record field.

// timeCol scans a nullable nanosecond column.
type timeCol struct{ t *time.Time }

func (c timeCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.t = time.Time{}
	case int64:
		*c.t = time.Unix(0, x).UTC()
	default:
		return fmt.Errorf("time column holds %T", v)
	}
	return nil
}

// objectCol scans a nullable canonical-JSON object column.
type objectCol struct{ o *sensor.Object }

func (c objectCol) Scan(v any) error {
	*c.o = sensor.Object{}
	b, err := textBytes(v)
	if b == nil || err != nil {
		return err
	}
	if string(b) == "{}" {
		return nil // most marker details are empty: skip the JSON decoder
	}
	return c.o.UnmarshalJSON(b)
}

// jsonCol scans a nullable JSON column into a map (dst is a pointer to it).
type jsonCol struct{ dst any }

func (c jsonCol) Scan(v any) error {
	b, err := textBytes(v)
	if b == nil || err != nil {
		return err
	}
	return json.Unmarshal(b, c.dst)
}

// textBytes returns the bytes of a TEXT or BLOB value, nil for NULL.
func textBytes(v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case string:
		return []byte(x), nil
	case []byte:
		return x, nil
	}
	return nil, fmt.Errorf("text column holds %T", v)
}

// pauseWindows encodes a pipeline's pause windows as a JSON array of
// [from, to] pairs of Unix nanoseconds (null for a zero time, as the time
// columns), NULL when there is none.
func (e *encoder) pauseWindows(ws []run.PauseWindow) any {
	if len(ws) == 0 {
		return nil
	}
	pairs := make([][2]*int64, len(ws))
	for i, w := range ws {
		for j, t := range []time.Time{w.From, w.To} {
			if v, ok := e.time("pipeline pause window", t).(int64); ok {
				pairs[i][j] = &v
			}
		}
	}
	b, err := json.Marshal(pairs)
	if err != nil {
		e.fail("postgres: pause windows: %w", err)
		return nil
	}
	return string(b)
}

// pauseWindowsCol scans the column pauseWindows writes.
type pauseWindowsCol struct{ ws *[]run.PauseWindow }

func (c pauseWindowsCol) Scan(v any) error {
	*c.ws = nil
	b, err := textBytes(v)
	if b == nil || err != nil {
		return err
	}
	var pairs [][2]*int64
	if err := json.Unmarshal(b, &pairs); err != nil {
		return fmt.Errorf("pause windows: %w", err)
	}
	at := func(n *int64) time.Time {
		if n == nil {
			return time.Time{}
		}
		return time.Unix(0, *n).UTC()
	}
	out := make([]run.PauseWindow, len(pairs))
	for i, p := range pairs {
		out[i] = run.PauseWindow{From: at(p[0]), To: at(p[1])}
	}
	*c.ws = out
	return nil
}
