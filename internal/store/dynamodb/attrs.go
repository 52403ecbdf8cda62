package dynamodb

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/sensor"
	"github.com/interlockhq/interlock/internal/store"
)

// Attribute encodings of the store's own items. Times are numbers of Unix
// nanoseconds (exact: DynamoDB numbers hold 38 digits), absent for Go's
// zero time; counts are numbers; sensor data, details and maps are their
// canonical JSON text (so numbers like 2^53+1 and every JSON shape come
// back exactly, whatever DynamoDB's number range); empty values are left
// out. Items written by anyone (the sensor inbox, job reports, rerun
// requests) are read by Decode, which takes DynamoDB's native types.

type item = map[string]types.AttributeValue

// itemWriter builds an item, keeping the first encoding error.
type itemWriter struct {
	it  item
	err error
}

func newItem(pk, sk string) *itemWriter {
	return &itemWriter{it: item{attrPK: &types.AttributeValueMemberS{Value: pk}, attrSK: &types.AttributeValueMemberS{Value: sk}}}
}

func (w *itemWriter) fail(err error) {
	if w.err == nil {
		w.err = err
	}
}

// str sets a string attribute; an empty string is left out. DynamoDB
// strings are UTF-8, and the SDK would replace what is not: such a string
// is stored as binary, its bytes exactly (str reads both back).
func (w *itemWriter) str(name, v string) {
	switch {
	case v == "":
	case utf8.ValidString(v):
		w.it[name] = &types.AttributeValueMemberS{Value: v}
	default:
		w.it[name] = &types.AttributeValueMemberB{Value: []byte(v)}
	}
}

func (w *itemWriter) num(name string, n int64) {
	w.it[name] = &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

// numNZ sets a number unless it is zero.
func (w *itemWriter) numNZ(name string, n int64) {
	if n != 0 {
		w.num(name, n)
	}
}

func (w *itemWriter) flag(name string, b bool) {
	if b {
		w.it[name] = &types.AttributeValueMemberBOOL{Value: true}
	}
}

func (w *itemWriter) time(name string, t time.Time) {
	if t.IsZero() {
		return
	}
	n, err := store.StoredNanos(name, t)
	if err != nil {
		w.fail(err)
		return
	}
	w.num(name, n)
}

func (w *itemWriter) object(name string, o sensor.Object) {
	if o.Len() == 0 {
		return
	}
	b, err := o.MarshalJSON()
	if err != nil {
		w.fail(fmt.Errorf("%s: %w", name, err))
		return
	}
	w.it[name] = &types.AttributeValueMemberS{Value: string(b)}
}

// json sets a value's JSON text (maps: encoding/json sorts their keys);
// n == 0 leaves it out.
func (w *itemWriter) json(name string, v any, n int) {
	if n == 0 {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		w.fail(fmt.Errorf("%s: %w", name, err))
		return
	}
	w.it[name] = &types.AttributeValueMemberS{Value: string(b)}
}

func (w *itemWriter) bytes(name string, b []byte) {
	if len(b) > 0 {
		w.it[name] = &types.AttributeValueMemberB{Value: b}
	}
}

// itemReader reads the attributes of one item, keeping the first error;
// what names the item in it.
type itemReader struct {
	it   item
	what string
	err  error
}

func readItem(it item) *itemReader { return &itemReader{it: it} }

func (r *itemReader) fail(name string, err error) {
	if r.err == nil {
		r.err = fmt.Errorf("dynamodb: item %s/%s: attribute %s: %w", r.text(attrPK), r.text(attrSK), name, err)
	}
}

// text is a string attribute without error (for messages).
func (r *itemReader) text(name string) string {
	if s, ok := r.it[name].(*types.AttributeValueMemberS); ok {
		return s.Value
	}
	return ""
}

var errWrongType = errors.New("wrong type")

// has reports whether the item has the attribute.
func (r *itemReader) has(name string) bool {
	_, ok := r.it[name]
	return ok
}

// attr reads attribute name as the member type M, through get: the zero
// value when the item has no such attribute, and the reader's error (want
// names the type expected) when it has one of another type.
func attr[M types.AttributeValue, T any](r *itemReader, name, want string, get func(M) T) T {
	var zero T
	switch v := r.it[name].(type) {
	case nil:
		return zero
	case M:
		return get(v)
	default:
		r.fail(name, fmt.Errorf("%w %T, want %s", errWrongType, v, want))
		return zero
	}
}

// str reads a string attribute; a binary one is taken as its bytes.
func (r *itemReader) str(name string) string {
	if b, ok := r.it[name].(*types.AttributeValueMemberB); ok {
		return string(b.Value)
	}
	return attr(r, name, "a string", func(v *types.AttributeValueMemberS) string { return v.Value })
}

func (r *itemReader) num(name string) int64 {
	return attr(r, name, "a number", func(v *types.AttributeValueMemberN) int64 {
		n, err := strconv.ParseInt(v.Value, 10, 64)
		if err != nil {
			r.fail(name, err)
		}
		return n
	})
}

func (r *itemReader) flag(name string) bool {
	return attr(r, name, "a boolean", func(v *types.AttributeValueMemberBOOL) bool { return v.Value })
}

func (r *itemReader) time(name string) time.Time {
	if r.it[name] == nil {
		return time.Time{}
	}
	return time.Unix(0, r.num(name)).UTC()
}

func (r *itemReader) object(name string) sensor.Object {
	s := r.str(name)
	if s == "" {
		return sensor.Object{}
	}
	var o sensor.Object
	if err := o.UnmarshalJSON([]byte(s)); err != nil {
		r.fail(name, err)
	}
	return o
}

func (r *itemReader) json(name string, dst any) {
	if s := r.str(name); s != "" {
		if err := json.Unmarshal([]byte(s), dst); err != nil {
			r.fail(name, err)
		}
	}
}

func (r *itemReader) bytes(name string) []byte {
	return attr(r, name, "binary", func(v *types.AttributeValueMemberB) []byte { return v.Value })
}

func strAttr(s string) types.AttributeValue { return &types.AttributeValueMemberS{Value: s} }

func numAttr(n int64) types.AttributeValue {
	return &types.AttributeValueMemberN{Value: strconv.FormatInt(n, 10)}
}

func keyOf(pk, sk string) item { return item{attrPK: strAttr(pk), attrSK: strAttr(sk)} }
