package dynamodb

import (
	"encoding/base64"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/interlockhq/interlock/internal/sensor"
)

// Native DynamoDB values, as anyone's PutItem writes them, to sensor data
// and back. The mapping is the one a person expects from DynamoDB JSON:
//
//	S → string · N → number, from its exact text (2^53+1 stays 2^53+1)
//	BOOL → boolean · NULL → null · M → object · L → array
//	SS → array of strings · NS → array of numbers · BS → array of base64 strings
//	B → its base64 string
//
// Sets come sorted (DynamoDB keeps no order in them). A map key holding a
// control character, or nesting deeper than sensor.MaxDepth, is refused,
// as the API refuses it in a JSON body.

// fromNative converts one attribute value; path names it in errors.
func fromNative(v types.AttributeValue, path string, depth int) (sensor.Value, error) {
	if depth > sensor.MaxDepth {
		return sensor.Value{}, fmt.Errorf("%s: nested deeper than %d levels", path, sensor.MaxDepth)
	}
	switch x := v.(type) {
	case *types.AttributeValueMemberS:
		return sensor.StringValue(x.Value), nil
	case *types.AttributeValueMemberN:
		n, err := sensor.ParseNumber(x.Value)
		if err != nil {
			return sensor.Value{}, fmt.Errorf("%s: %v", path, err)
		}
		return n, nil
	case *types.AttributeValueMemberBOOL:
		return sensor.BoolValue(x.Value), nil
	case *types.AttributeValueMemberNULL:
		return sensor.NullValue(), nil
	case *types.AttributeValueMemberB:
		return sensor.StringValue(base64.StdEncoding.EncodeToString(x.Value)), nil
	case *types.AttributeValueMemberM:
		o, err := objectFromNative(x.Value, path, depth+1)
		if err != nil {
			return sensor.Value{}, err
		}
		return sensor.ObjectValue(o), nil
	case *types.AttributeValueMemberL:
		items := make([]sensor.Value, len(x.Value))
		for i, e := range x.Value {
			var err error
			if items[i], err = fromNative(e, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return sensor.Value{}, err
			}
		}
		return sensor.ArrayValue(items), nil
	case *types.AttributeValueMemberSS:
		ss := slices.Sorted(slices.Values(x.Value))
		items := make([]sensor.Value, len(ss))
		for i, s := range ss {
			items[i] = sensor.StringValue(s)
		}
		return sensor.ArrayValue(items), nil
	case *types.AttributeValueMemberNS:
		items := make([]sensor.Value, 0, len(x.Value))
		for i, s := range x.Value {
			n, err := sensor.ParseNumber(s)
			if err != nil {
				return sensor.Value{}, fmt.Errorf("%s[%d]: %v", path, i, err)
			}
			items = append(items, n)
		}
		slices.SortFunc(items, func(a, b sensor.Value) int {
			fa, _ := a.Float()
			fb, _ := b.Float()
			switch {
			case fa < fb:
				return -1
			case fa > fb:
				return 1
			}
			return strings.Compare(a.String(), b.String())
		})
		return sensor.ArrayValue(items), nil
	case *types.AttributeValueMemberBS:
		bs := make([]string, len(x.Value))
		for i, b := range x.Value {
			bs[i] = base64.StdEncoding.EncodeToString(b)
		}
		slices.Sort(bs)
		items := make([]sensor.Value, len(bs))
		for i, s := range bs {
			items[i] = sensor.StringValue(s)
		}
		return sensor.ArrayValue(items), nil
	case nil:
		return sensor.Value{}, fmt.Errorf("%s: no value", path)
	}
	return sensor.Value{}, fmt.Errorf("%s: unsupported attribute type %T", path, v)
}

func objectFromNative(m map[string]types.AttributeValue, path string, depth int) (sensor.Object, error) {
	fields := make(map[string]sensor.Value, len(m))
	for k, e := range m {
		p := k
		if path != "" {
			p = path + "." + k
		}
		if sensor.HasControl(k) {
			return sensor.Object{}, fmt.Errorf("%s: a field name holds a control character", strings.TrimSuffix(p, k)+fmt.Sprintf("%q", k))
		}
		v, err := fromNative(e, p, depth)
		if err != nil {
			return sensor.Object{}, err
		}
		fields[k] = v
	}
	return sensor.NewObject(fields), nil
}

// toNative converts sensor data to DynamoDB values: the item a person's
// PutItem of the same JSON would make (numbers keep their text).
func toNative(v sensor.Value) types.AttributeValue {
	switch v.Kind() {
	case sensor.Bool:
		b, _ := v.Bool()
		return &types.AttributeValueMemberBOOL{Value: b}
	case sensor.Number:
		return &types.AttributeValueMemberN{Value: v.String()}
	case sensor.String:
		s, _ := v.Str()
		return &types.AttributeValueMemberS{Value: s}
	case sensor.ObjectKind:
		o, _ := v.Object()
		return &types.AttributeValueMemberM{Value: objectToNative(o)}
	case sensor.Array:
		items, _ := v.Array()
		l := make([]types.AttributeValue, len(items))
		for i, e := range items {
			l[i] = toNative(e)
		}
		return &types.AttributeValueMemberL{Value: l}
	}
	return &types.AttributeValueMemberNULL{Value: true}
}

func objectToNative(o sensor.Object) map[string]types.AttributeValue {
	m := make(map[string]types.AttributeValue, o.Len())
	for _, k := range o.Keys() {
		v, _ := o.Get(k)
		m[k] = toNative(v)
	}
	return m
}
