package confdec

import (
	"fmt"
	"reflect"
	"strconv"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/interlockhq/interlock/internal/sensor"
)

// Describe says what a node is, for "want X, got Y" messages: "a list",
// "a mapping", `the string "abc"`, "the number 3", "null".
func Describe(n *yaml.Node) string {
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return "nothing"
		}
		return Describe(n.Content[0])
	case yaml.AliasNode:
		return Describe(n.Alias)
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:37] + "..."
	}
	switch n.ShortTag() {
	case "!!null":
		return "null"
	case "!!bool":
		return "the bool " + v
	case "!!int", "!!float":
		return "the number " + v
	case "!!str":
		return "the string " + strconv.Quote(v)
	case "!!timestamp":
		return "the timestamp " + v
	}
	return fmt.Sprintf("a value tagged %s", n.ShortTag())
}

var (
	durationType = reflect.TypeFor[time.Duration]()
	timeType     = reflect.TypeFor[time.Time]()
	nodePtrType  = reflect.TypeFor[*yaml.Node]()
	valueType    = reflect.TypeFor[sensor.Value]()
)

// want says what a Go type accepts, for "want X, got Y" messages.
func want(t reflect.Type) string {
	switch t {
	case durationType:
		return `a duration like "5m"`
	case timeType:
		return `a timestamp like "2026-03-10T06:00:00Z"`
	}
	switch t.Kind() {
	case reflect.Pointer:
		return want(t.Elem())
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	}
	return t.String()
}
