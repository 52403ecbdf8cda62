package dynamodb

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestItemReaderTypes: each typed read takes its own member type (a
// string also from binary), gives the zero value for an absent attribute,
// and fails on another type, naming the attribute and the type it wants.
func TestItemReaderTypes(t *testing.T) {
	bin := &types.AttributeValueMemberB{Value: []byte("raw")}
	yes := &types.AttributeValueMemberBOOL{Value: true}
	r := readItem(item{attrPK: s("PIPELINE#p"), attrSK: s("X"), "s": s("text"), "b": bin, "n": n("42"), "f": yes})
	if got := r.str("s"); got != "text" {
		t.Errorf("str(s) = %q", got)
	}
	if got := r.str("b"); got != "raw" {
		t.Errorf("str(b) = %q, want the binary's bytes", got)
	}
	if got := r.num("n"); got != 42 {
		t.Errorf("num(n) = %d", got)
	}
	if !r.flag("f") {
		t.Error("flag(f) = false")
	}
	if got := r.bytes("b"); !slices.Equal(got, []byte("raw")) {
		t.Errorf("bytes(b) = %q", got)
	}
	if r.str("none") != "" || r.num("none") != 0 || r.flag("none") || r.bytes("none") != nil || r.err != nil {
		t.Errorf("absent attributes: not zero, or %v", r.err)
	}
	for _, c := range []struct {
		read func(r *itemReader)
		want string
	}{
		{func(r *itemReader) { r.str("n") }, "attribute n: wrong type *types.AttributeValueMemberN, want a string"},
		{func(r *itemReader) { r.num("s") }, "attribute s: wrong type *types.AttributeValueMemberS, want a number"},
		{func(r *itemReader) { r.num("bad") }, "attribute bad: strconv.ParseInt"},
		{func(r *itemReader) { r.flag("s") }, "attribute s: wrong type *types.AttributeValueMemberS, want a boolean"},
		{func(r *itemReader) { r.bytes("f") }, "attribute f: wrong type *types.AttributeValueMemberBOOL, want binary"},
	} {
		r := readItem(item{attrPK: s("PIPELINE#p"), attrSK: s("X"), "s": s("text"), "n": n("42"), "f": yes, "bad": n("4x")})
		c.read(r)
		if r.err == nil || !strings.Contains(r.err.Error(), "item PIPELINE#p/X: "+c.want) {
			t.Errorf("error %v, want %q", r.err, c.want)
		}
		if strings.Contains(c.want, "wrong type") && !errors.Is(r.err, errWrongType) {
			t.Errorf("error %v does not wrap errWrongType", r.err)
		}
	}
}
