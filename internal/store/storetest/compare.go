package storetest

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/interlockhq/interlock/internal/sensor"
)

// diff compares what a store returned with what was written, field by
// field, and describes each difference. It compares meaning, not
// representation, where the port allows a backend to choose:
//
//   - times must be the same instant, and a non-zero time must come back in
//     UTC (the port stores instants; callers format them);
//   - sensor objects and values compare with their own Equal (1e6 equals
//     1000000; "5" never equals 5);
//   - an empty map, slice or object equals a nil one (DynamoDB, for one,
//     cannot tell them apart).
//
// Everything else must be equal exactly.
func diff(got, want any) []string {
	var out []string
	walk(&out, "", reflect.ValueOf(got), reflect.ValueOf(want))
	return out
}

var (
	timeType   = reflect.TypeFor[time.Time]()
	objectType = reflect.TypeFor[sensor.Object]()
	valueType  = reflect.TypeFor[sensor.Value]()
)

func walk(out *[]string, path string, g, w reflect.Value) {
	report := func(format string, args ...any) {
		p := path
		if p == "" {
			p = "value"
		}
		*out = append(*out, p+": "+fmt.Sprintf(format, args...))
	}
	if !g.IsValid() || !w.IsValid() {
		if g.IsValid() != w.IsValid() {
			report("got %v, want %v", g, w)
		}
		return
	}
	if g.Type() != w.Type() {
		report("got type %s, want %s", g.Type(), w.Type())
		return
	}
	switch g.Type() {
	case timeType:
		gt, wt := g.Interface().(time.Time), w.Interface().(time.Time)
		switch {
		case wt.IsZero() && !gt.IsZero():
			report("got %s, want the zero time", gt.Format(time.RFC3339Nano))
		case !wt.IsZero() && gt.IsZero():
			report("got the zero time, want %s", wt.UTC().Format(time.RFC3339Nano))
		case !gt.Equal(wt):
			report("got %s, want %s (differs by %s)", gt.UTC().Format(time.RFC3339Nano), wt.UTC().Format(time.RFC3339Nano), gt.Sub(wt))
		case !gt.IsZero() && gt.Location() != time.UTC:
			report("got %s in %s, want it in UTC", gt.Format(time.RFC3339Nano), gt.Location())
		}
		return
	case objectType:
		gv, wv := g.Interface().(sensor.Object), w.Interface().(sensor.Object)
		if !gv.Equal(wv) {
			gj, _ := gv.MarshalJSON()
			wj, _ := wv.MarshalJSON()
			report("got %s, want %s", gj, wj)
		}
		return
	case valueType:
		gv, wv := g.Interface().(sensor.Value), w.Interface().(sensor.Value)
		if !gv.Equal(wv) {
			report("got %s, want %s", gv, wv)
		}
		return
	}
	switch g.Kind() {
	case reflect.Struct:
		for i := range g.NumField() {
			f := g.Type().Field(i)
			if !f.IsExported() {
				continue
			}
			walk(out, join(path, f.Name), g.Field(i), w.Field(i))
		}
	case reflect.Pointer:
		switch {
		case g.IsNil() && w.IsNil():
		case g.IsNil():
			report("got nil, want %+v", w.Elem())
		case w.IsNil():
			report("got %+v, want nil", g.Elem())
		default:
			walk(out, path, g.Elem(), w.Elem())
		}
	case reflect.Map:
		keys := map[string]reflect.Value{}
		for _, k := range append(g.MapKeys(), w.MapKeys()...) {
			keys[fmt.Sprint(k)] = k
		}
		for _, n := range slices.Sorted(maps.Keys(keys)) {
			k := keys[n]
			gv, wv := g.MapIndex(k), w.MapIndex(k)
			p := fmt.Sprintf("%s[%q]", path, n)
			switch {
			case !gv.IsValid():
				*out = append(*out, p+": missing")
			case !wv.IsValid():
				*out = append(*out, p+": unexpected")
			default:
				walk(out, p, gv, wv)
			}
		}
	case reflect.Slice, reflect.Array:
		if g.Len() != w.Len() {
			report("got %d elements, want %d", g.Len(), w.Len())
			return
		}
		for i := range g.Len() {
			walk(out, fmt.Sprintf("%s[%d]", path, i), g.Index(i), w.Index(i))
		}
	default:
		if !g.CanInterface() {
			return
		}
		if !reflect.DeepEqual(g.Interface(), w.Interface()) {
			report("got %#v, want %#v", g.Interface(), w.Interface())
		}
	}
}

func join(path, field string) string {
	if path == "" {
		return field
	}
	return path + "." + field
}

// mustMatch fails the test with every difference between got and want.
func mustMatch(t *testing.T, what string, got, want any) {
	t.Helper()
	for _, d := range diff(got, want) {
		t.Errorf("%s: %s", what, d)
	}
}

// requireAllSet fails when a field of v holds its zero value. Round-trip
// fixtures call it so a field added to a record later cannot be forgotten
// by the fixture — and so by the backends, whose round trip of that field
// would otherwise go unchecked.
func requireAllSet(t *testing.T, what string, v any) {
	t.Helper()
	if zero := zeroFields(v); len(zero) > 0 {
		t.Fatalf("fixture %s leaves fields unset, so their round trip goes unchecked: %v", what, zero)
	}
}

// zeroFields lists the exported fields of v (recursing into structs other
// than times and objects) that are zero, empty maps and objects included.
func zeroFields(v any) []string {
	var zero []string
	var visit func(path string, x reflect.Value)
	visit = func(path string, x reflect.Value) {
		if x.Kind() == reflect.Struct && x.Type() != timeType && x.Type() != objectType {
			for i := range x.NumField() {
				if f := x.Type().Field(i); f.IsExported() {
					visit(join(path, f.Name), x.Field(i))
				}
			}
			return
		}
		if x.IsZero() || (x.Kind() == reflect.Map && x.Len() == 0) ||
			(x.Type() == objectType && x.Interface().(sensor.Object).Len() == 0) {
			zero = append(zero, path)
		}
	}
	visit("", reflect.ValueOf(v))
	return zero
}
