package dynamodb

import (
	"fmt"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// lambdaImage converts a Lambda stream record's attribute values to the
// SDK's: every type, numbers as their exact text, sets, nulls and binary.
func lambdaImage(m map[string]events.DynamoDBAttributeValue) (map[string]types.AttributeValue, error) {
	if m == nil {
		return nil, nil
	}
	out := make(map[string]types.AttributeValue, len(m))
	for k, v := range m {
		c, err := lambdaValue(v, 0)
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		out[k] = c
	}
	return out, nil
}

// lambdaDepth bounds the nesting a stream record can bring (DynamoDB's own
// limit is 32 levels).
const lambdaDepth = 64

func lambdaValue(v events.DynamoDBAttributeValue, depth int) (out types.AttributeValue, err error) {
	if depth > lambdaDepth {
		return nil, fmt.Errorf("nested deeper than %d levels", lambdaDepth)
	}
	// The accessors panic on a value of another type, and a zero
	// DynamoDBAttributeValue (no JSON behind it) claims to be binary with
	// no value: such a record is malformed, never a crash.
	defer func() {
		if r := recover(); r != nil {
			out, err = nil, fmt.Errorf("malformed %v value", v.DataType())
		}
	}()
	switch v.DataType() {
	case events.DataTypeString:
		return &types.AttributeValueMemberS{Value: v.String()}, nil
	case events.DataTypeNumber:
		return &types.AttributeValueMemberN{Value: v.Number()}, nil
	case events.DataTypeBoolean:
		return &types.AttributeValueMemberBOOL{Value: v.Boolean()}, nil
	case events.DataTypeNull:
		return &types.AttributeValueMemberNULL{Value: true}, nil
	case events.DataTypeBinary:
		return &types.AttributeValueMemberB{Value: v.Binary()}, nil
	case events.DataTypeStringSet:
		return &types.AttributeValueMemberSS{Value: v.StringSet()}, nil
	case events.DataTypeNumberSet:
		return &types.AttributeValueMemberNS{Value: v.NumberSet()}, nil
	case events.DataTypeBinarySet:
		return &types.AttributeValueMemberBS{Value: v.BinarySet()}, nil
	case events.DataTypeList:
		items := v.List()
		l := make([]types.AttributeValue, len(items))
		for i, e := range items {
			if l[i], err = lambdaValue(e, depth+1); err != nil {
				return nil, fmt.Errorf("[%d]: %w", i, err)
			}
		}
		return &types.AttributeValueMemberL{Value: l}, nil
	case events.DataTypeMap:
		m := v.Map()
		out := make(map[string]types.AttributeValue, len(m))
		for k, e := range m {
			if out[k], err = lambdaValue(e, depth+1); err != nil {
				return nil, fmt.Errorf(".%s: %w", k, err)
			}
		}
		return &types.AttributeValueMemberM{Value: out}, nil
	}
	return nil, fmt.Errorf("unknown attribute type %v", v.DataType())
}

// lambdaText is a string attribute's text, "" for anything else.
func lambdaText(v events.DynamoDBAttributeValue) (s string) {
	defer func() {
		if recover() != nil {
			s = ""
		}
	}()
	if v.DataType() == events.DataTypeString {
		return v.String()
	}
	return ""
}
