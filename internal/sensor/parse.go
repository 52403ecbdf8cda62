package sensor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"
)

// ErrInvalid is wrapped by every error about a malformed sensor body.
var ErrInvalid = errors.New("invalid sensor data")

// MaxDepth bounds the nesting of sensor bodies.
const MaxDepth = 32

// Record is a stored sensor: its key, its data and when Interlock received
// it (the receive time is Interlock's, never the writer's).
type Record struct {
	Key        string
	Data       Object
	ReceivedAt time.Time
}

// ParseBody reads a sensor body. Both shapes are accepted and give the same
// result: flat ({"count": 5}) and wrapped ({"data": {"count": 5}}). A body
// is wrapped only when "data" is its single field and holds an object, so a
// flat sensor may still have a field named data next to others.
func ParseBody(body []byte) (Object, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		return Object{}, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Object{}, fmt.Errorf("%w: trailing content after the JSON object", ErrInvalid)
	}
	v, err := fromJSON(raw, 0)
	if err != nil {
		return Object{}, err
	}
	obj, ok := v.Object()
	if !ok {
		return Object{}, fmt.Errorf("%w: body must be a JSON object, got %s", ErrInvalid, v.Kind())
	}
	return Unwrap(obj), nil
}

// Unwrap returns the content of a wrapped sensor body ({"data": {...}},
// "data" being its single field and holding an object) and any other body
// as it is. Every way a sensor enters Interlock goes through it, so flat
// and wrapped writes are stored the same way.
func Unwrap(obj Object) Object {
	if inner, ok := obj.Get("data"); ok && obj.Len() == 1 {
		if w, ok := inner.Object(); ok {
			return w
		}
	}
	return obj
}

func fromJSON(raw any, depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, fmt.Errorf("%w: nested deeper than %d levels", ErrInvalid, MaxDepth)
	}
	switch x := raw.(type) {
	case nil:
		return NullValue(), nil
	case bool:
		return BoolValue(x), nil
	case string:
		return StringValue(x), nil
	case json.Number:
		v, err := ParseNumber(string(x))
		if err != nil {
			return Value{}, fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		return v, nil
	case float64:
		return NumberValue(x), nil
	case []any:
		items := make([]Value, len(x))
		for i, it := range x {
			v, err := fromJSON(it, depth+1)
			if err != nil {
				return Value{}, err
			}
			items[i] = v
		}
		return ArrayValue(items), nil
	case map[string]any:
		fields := make(map[string]Value, len(x))
		for k, it := range x {
			v, err := fromJSON(it, depth+1)
			if err != nil {
				return Value{}, err
			}
			fields[k] = v
		}
		return ObjectValue(Object{fields: fields}), nil
	}
	return Value{}, fmt.Errorf("%w: unsupported value %T", ErrInvalid, raw)
}
