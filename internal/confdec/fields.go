package confdec

import (
	"reflect"
	"strings"
	"sync"
)

// field is one YAML-visible struct field.
type field struct {
	name     string
	index    []int // reflect.Value.FieldByIndex path (through ,inline structs)
	required bool
}

// structInfo lists the YAML fields of a struct type.
type structInfo struct {
	fields []field
	byName map[string]int
	names  []string // sorted, for suggestions
}

var structCache sync.Map // reflect.Type → *structInfo

// fieldsOf reads the yaml tags of t. Tag options: "required" (a missing
// or null value is an error at the parent's line), "inline" (a struct
// field whose fields are decoded as the parent's own), "-" (ignored).
// An untagged exported field is named like yaml.v3 does: lowercased.
func fieldsOf(t reflect.Type) *structInfo {
	if si, ok := structCache.Load(t); ok {
		return si.(*structInfo)
	}
	si := &structInfo{byName: map[string]int{}}
	var collect func(t reflect.Type, prefix []int)
	collect = func(t reflect.Type, prefix []int) {
		for i := range t.NumField() {
			sf := t.Field(i)
			tag := sf.Tag.Get("yaml")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			index := append(append([]int(nil), prefix...), i)
			// An inline struct may be an embedded unexported type: its
			// exported fields are still settable, as in encoding/json.
			if hasOpt(opts, "inline") && sf.Type.Kind() == reflect.Struct && (sf.IsExported() || sf.Anonymous) {
				collect(sf.Type, index)
				continue
			}
			if !sf.IsExported() {
				continue
			}
			if name == "" {
				name = strings.ToLower(sf.Name)
			}
			if _, dup := si.byName[name]; dup {
				continue // the first declaration wins
			}
			si.byName[name] = len(si.fields)
			si.fields = append(si.fields, field{name: name, index: index, required: hasOpt(opts, "required")})
		}
	}
	collect(t, nil)
	si.names = sortedKeys(si.byName)
	structCache.Store(t, si)
	return si
}

func hasOpt(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}
