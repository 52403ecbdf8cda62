package sqlstore

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/interlockhq/interlock/internal/pause"
	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// Dialect is what differs between the SQL backends' rows.
type Dialect struct {
	// Name is the backend's name, first in its errors ("sqlite").
	Name string
	// Bool is a bool's column value (SQLite's STRICT tables have no
	// boolean type: 0 or 1).
	Bool func(bool) any
	// Key is the scan target of a sensor key column (PostgreSQL keeps keys
	// as bytea, so any byte sequence sorts and compares as bytes).
	Key func(*string) any
	// KeyArg is a sensor key as a statement's argument.
	KeyArg func(string) any
	// NoRows is the driver's error for a single-row query with no row.
	NoRows error
	// Numbered: placeholders are numbered ($1, $2, …: PostgreSQL), not
	// "?" (Where).
	Numbered bool
	// IsTrue is the condition that a bool column is true, written as the
	// partial indexes on it are (SQLite: "active = 1"), so the planner
	// matches them.
	IsTrue func(col string) string
	// Hinted: the planner keeps no statistics (the SQLite store runs no
	// ANALYZE), so the list statements tell it what it cannot know: a
	// range by recency is narrow (unlikely()) and the active runs are
	// read through their partial index (INDEXED BY). PostgreSQL's
	// planner has its statistics.
	Hinted bool
}

// Column encodings. Times are Unix nanoseconds (UTC), with NULL for Go's
// zero time: 0 cannot mean "unset" because it is a real instant (the Unix
// epoch). Objects and maps are canonical JSON, NULL when empty.

// Encoder turns record fields into column values, keeping the first error
// so a write can encode a whole row and check once.
type Encoder struct {
	D   *Dialect
	Err error
}

// Fail keeps the first error, naming the backend.
func (e *Encoder) Fail(format string, args ...any) {
	if e.Err == nil {
		e.Err = fmt.Errorf(e.D.Name+": "+format, args...)
	}
}

// Time encodes t; field names the value in the error.
func (e *Encoder) Time(field string, t time.Time) any {
	if t.IsZero() {
		return nil
	}
	n, err := store.StoredNanos(field, t)
	if err != nil {
		e.Fail("%w", err)
		return nil
	}
	return n
}

// Object encodes sensor data and details.
func (e *Encoder) Object(field string, o sensor.Object) any {
	if o.Len() == 0 {
		return nil
	}
	b, err := o.MarshalJSON()
	if err != nil {
		e.Fail("%s: %w", field, err)
		return nil
	}
	return string(b)
}

// JSON encodes a map or a list of n elements (a run's job metadata, a
// baseline's sensors, a calendar's days). encoding/json sorts map keys, so
// equal maps give equal text.
func (e *Encoder) JSON(field string, v any, n int) any {
	if n == 0 {
		return nil
	}
	b, err := json.Marshal(v)
	if err != nil {
		e.Fail("%s: %w", field, err)
		return nil
	}
	return string(b)
}

// PauseWindows encodes a pipeline's pause windows as a JSON array of
// [from, to] pairs of Unix nanoseconds (null for a zero time, as the time
// columns), NULL when there is none.
func (e *Encoder) PauseWindows(ws []pause.Window) any {
	if len(ws) == 0 {
		return nil
	}
	pairs := make([][2]*int64, len(ws))
	for i, w := range ws {
		for j, t := range []time.Time{w.From, w.To} {
			if v, ok := e.Time("pipeline pause window", t).(int64); ok {
				pairs[i][j] = &v
			}
		}
	}
	b, err := json.Marshal(pairs)
	if err != nil {
		e.Fail("pause windows: %w", err)
		return nil
	}
	return string(b)
}

// QueryNanos is the column value of a time used as a query bound
// (store.QueryNanos: clamped, not refused).
func QueryNanos(t time.Time) int64 { return store.QueryNanos(t) }

// Scanners: each decodes one column into a record field.

// TimeCol scans a nullable nanosecond column.
type TimeCol struct{ T *time.Time }

func (c TimeCol) Scan(v any) error {
	switch x := v.(type) {
	case nil:
		*c.T = time.Time{}
	case int64:
		*c.T = time.Unix(0, x).UTC()
	default:
		return fmt.Errorf("time column holds %T", v)
	}
	return nil
}

// ObjectCol scans a nullable canonical-JSON object column.
type ObjectCol struct{ O *sensor.Object }

func (c ObjectCol) Scan(v any) error {
	*c.O = sensor.Object{}
	b, err := TextBytes(v)
	if b == nil || err != nil {
		return err
	}
	if string(b) == "{}" {
		return nil // most marker details are empty: skip the JSON decoder
	}
	if o, ok := flatObject(b); ok {
		*c.O = o
		return nil
	}
	return c.O.UnmarshalJSON(b)
}

// JSONCol scans a nullable JSON column into a map or a list (Dst is a
// pointer to it).
type JSONCol struct{ Dst any }

func (c JSONCol) Scan(v any) error {
	b, err := TextBytes(v)
	if b == nil || err != nil {
		return err
	}
	return json.Unmarshal(b, c.Dst)
}

// BytesCol scans a bytea column (PostgreSQL's sensor key) into a string.
type BytesCol struct{ S *string }

func (c BytesCol) Scan(v any) error {
	b, ok := v.([]byte)
	if !ok {
		return fmt.Errorf("bytea column holds %T", v)
	}
	*c.S = string(b)
	return nil
}

// PauseWindowsCol scans the column PauseWindows writes.
type PauseWindowsCol struct{ WS *[]pause.Window }

func (c PauseWindowsCol) Scan(v any) error {
	*c.WS = nil
	b, err := TextBytes(v)
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
	out := make([]pause.Window, len(pairs))
	for i, p := range pairs {
		out[i] = pause.Window{From: at(p[0]), To: at(p[1])}
	}
	*c.WS = out
	return nil
}

// TextBytes returns the bytes of a TEXT or BLOB value, nil for NULL.
func TextBytes(v any) ([]byte, error) {
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
