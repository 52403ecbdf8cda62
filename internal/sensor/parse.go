package sensor

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every error about a malformed sensor body.
var ErrInvalid = errors.New("invalid sensor data")

// ErrJSON is wrapped by every error of ReadJSON: JSON that is not one
// value, or that breaks the rules sensor bodies are read by.
var ErrJSON = errors.New("invalid JSON")

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
//
// The body is read strictly (see readJSON): invalid UTF-8, a key given
// twice and a key holding a control character are refused, at every level
// and before unwrapping, so what is stored is exactly what was sent and
// every key can be named in a rule and a message. String values may hold
// any Unicode text, control characters included (as JSON escapes): they
// are data, stored and compared as sent.
func ParseBody(body []byte) (Object, error) {
	v, err := readJSON(body, ErrInvalid, true)
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

// ReadJSON reads one JSON value with the strictness of a sensor body
// (ParseBody): no invalid UTF-8 or lone surrogate escape, no key given
// twice, no control character in a key, at most MaxDepth levels, nothing
// after it. Other JSON input (the API's request bodies) is read with it,
// so that what is acted on is exactly what was sent. Errors wrap ErrJSON.
func ReadJSON(body []byte) (Value, error) { return readJSON(body, ErrJSON, true) }

// readJSON reads exactly one JSON value, the only way JSON becomes a Value.
// It is stricter than encoding/json where encoding/json would silently
// store something other than what was sent: invalid UTF-8 and lone
// surrogate escapes (which encoding/json turns into U+FFFD) and a key
// given twice in one object (where encoding/json keeps the last) are
// refused. Values nest at most MaxDepth levels, and nothing but
// whitespace may follow. input says whether the JSON comes from outside
// (a write), where a key holding a control character is refused too;
// stored JSON is read back without that rule, so what was once accepted
// stays readable. Every error wraps base.
func readJSON(body []byte, base error, input bool) (Value, error) {
	if err := checkText(body, base); err != nil {
		return Value{}, err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	r := &jsonReader{dec: dec, base: base, input: input}
	tok, err := dec.Token()
	if err != nil {
		return Value{}, fmt.Errorf("%w: %w", base, err) // io.EOF: an empty body
	}
	v, err := r.value(tok, 0)
	if err != nil {
		return Value{}, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return Value{}, fmt.Errorf("%w: trailing content after the JSON object", base)
	}
	return v, nil
}

// jsonReader builds a Value from a token stream, keeping the path of the
// value being read for its messages.
type jsonReader struct {
	dec   *json.Decoder
	base  error    // wrapped by every error
	input bool     // refuse control characters in keys
	path  []string // object keys and array indexes ("[3]") down to here
}

// next is the next token inside a value: the stream ending there is a
// truncated body, which Token reports as a plain io.EOF.
func (r *jsonReader) next() (json.Token, error) {
	tok, err := r.dec.Token()
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", r.base, err)
	}
	return tok, nil
}

// value reads the value that starts with tok, depth levels down.
func (r *jsonReader) value(tok json.Token, depth int) (Value, error) {
	if depth > MaxDepth {
		return Value{}, fmt.Errorf("%w: nested deeper than %d levels", r.base, MaxDepth)
	}
	switch x := tok.(type) {
	case nil:
		return NullValue(), nil
	case bool:
		return BoolValue(x), nil
	case string:
		return StringValue(x), nil
	case json.Number:
		v, err := ParseNumber(string(x))
		if err != nil {
			return Value{}, fmt.Errorf("%w: %v", r.base, err)
		}
		return v, nil
	case json.Delim:
		switch x {
		case '{':
			return r.object(depth)
		case '[':
			return r.array(depth)
		}
	}
	return Value{}, fmt.Errorf("%w: unexpected %v", r.base, tok) // Token reports ] and } out of place itself
}

func (r *jsonReader) object(depth int) (Value, error) {
	fields := map[string]Value{}
	for {
		tok, err := r.next()
		if err != nil {
			return Value{}, err
		}
		if tok == json.Delim('}') {
			return ObjectValue(Object{fields: fields}), nil
		}
		key, ok := tok.(string)
		if !ok { // Token accepts only a string here; kept for safety
			return Value{}, fmt.Errorf("%w: unexpected %v where a key belongs", r.base, tok)
		}
		r.path = append(r.path, key)
		if _, dup := fields[key]; dup {
			return Value{}, fmt.Errorf("%w: duplicate key %q at %s", r.base, key, r.where())
		}
		if r.input && HasControl(key) {
			return Value{}, fmt.Errorf("%w: key %q at %s holds a control character; keys are names, control characters are allowed only in string values", r.base, key, r.where())
		}
		if tok, err = r.next(); err != nil {
			return Value{}, err
		}
		v, err := r.value(tok, depth+1)
		if err != nil {
			return Value{}, err
		}
		fields[key] = v
		r.path = r.path[:len(r.path)-1]
	}
}

func (r *jsonReader) array(depth int) (Value, error) {
	items := []Value{}
	for {
		tok, err := r.next()
		if err != nil {
			return Value{}, err
		}
		if tok == json.Delim(']') {
			return ArrayValue(items), nil
		}
		r.path = append(r.path, "["+strconv.Itoa(len(items))+"]")
		v, err := r.value(tok, depth+1)
		if err != nil {
			return Value{}, err
		}
		items = append(items, v)
		r.path = r.path[:len(r.path)-1]
	}
}

// where renders the path as a writer would spell it: data.count,
// items[2].name, and ["a.b"] for a key that is not a plain name.
func (r *jsonReader) where() string {
	var b strings.Builder
	for _, seg := range r.path {
		switch {
		case strings.HasPrefix(seg, "["):
			b.WriteString(seg) // an array index
		case plainName(seg):
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(seg)
		default:
			fmt.Fprintf(&b, "[%q]", seg)
		}
	}
	return b.String()
}

func plainName(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if !(c == '_' || c == '-' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z') {
			return false
		}
	}
	return true
}

// checkText refuses what encoding/json would silently replace with U+FFFD:
// bytes that are not UTF-8 (anywhere, strings included) and \u escapes of
// a lone UTF-16 surrogate. The surrogate scan follows JSON strings, so it
// is exact for valid JSON; in invalid JSON it may only refuse earlier than
// the syntax check would.
func checkText(body []byte, base error) error {
	for i := 0; i < len(body); {
		c, size := utf8.DecodeRune(body[i:])
		if c == utf8.RuneError && size == 1 {
			return fmt.Errorf("%w: not valid UTF-8 at byte %d", base, i)
		}
		i += size
	}
	inString := false
	for i := 0; i < len(body); i++ {
		switch c := body[i]; {
		case c == '"':
			inString = !inString
		case c == '\\' && inString && i+1 < len(body):
			i++ // the escaped byte
			if body[i] != 'u' {
				continue
			}
			hi, ok := hex4(body, i+1)
			if !ok || !utf16.IsSurrogate(hi) {
				continue
			}
			if lo, ok := hex4(body, i+7); ok && i+6 < len(body) && body[i+5] == '\\' && body[i+6] == 'u' &&
				utf16.DecodeRune(hi, lo) != utf8.RuneError {
				i += 10 // both escapes: one character
				continue
			}
			return fmt.Errorf("%w: \\u%04x at byte %d is half of a UTF-16 surrogate pair, not a character", base, hi, i-1)
		}
	}
	return nil
}

// hex4 reads the four hex digits of a \u escape at b[at:].
func hex4(b []byte, at int) (rune, bool) {
	if at < 0 || at+4 > len(b) {
		return 0, false
	}
	n, err := strconv.ParseUint(string(b[at:at+4]), 16, 32)
	return rune(n), err == nil
}

// HasControl reports whether s holds a control character (Unicode Cc:
// U+0000–U+001F, U+007F–U+009F), which no sensor key may: a key is a
// name that rules, messages and logs show, and "count\u0000" would look
// like "count" without being it.
func HasControl(s string) bool { return strings.IndexFunc(s, unicode.IsControl) >= 0 }
