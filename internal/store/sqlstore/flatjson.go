package sqlstore

import (
	"unicode/utf8"

	"github.com/interlockhq/interlock/internal/sensor"
)

// flatObject decodes the form most stored objects take — sensor data and
// event and marker details of one level: plain keys holding numbers,
// plain strings, booleans and nulls — without a JSON token stream,
// which cost a simulation more than its rule evaluations. It reports false
// for anything else (an escape, a control character, invalid UTF-8, a nested
// value, anything malformed), and the caller reads that with sensor's own
// decoder, which also words the errors. What it accepts, it decodes as
// that decoder does (FuzzFlatObject).
func flatObject(b []byte) (sensor.Object, bool) {
	d := flatDecoder{b: b}
	d.space()
	if !d.byte('{') {
		return sensor.Object{}, false
	}
	fields := map[string]sensor.Value{}
	d.space()
	if !d.byte('}') {
		for {
			d.space()
			k, ok := d.plainString()
			if !ok {
				return sensor.Object{}, false
			}
			if _, dup := fields[k]; dup {
				return sensor.Object{}, false
			}
			d.space()
			if !d.byte(':') {
				return sensor.Object{}, false
			}
			d.space()
			v, ok := d.scalar()
			if !ok {
				return sensor.Object{}, false
			}
			fields[k] = v
			d.space()
			if d.byte(',') {
				continue
			}
			if d.byte('}') {
				break
			}
			return sensor.Object{}, false
		}
	}
	d.space()
	if d.i != len(d.b) {
		return sensor.Object{}, false
	}
	return sensor.NewObject(fields), true
}

type flatDecoder struct {
	b []byte
	i int
}

// space skips JSON whitespace.
func (d *flatDecoder) space() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

// byte consumes c if it comes next.
func (d *flatDecoder) byte(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

// plainString reads a string without escapes or control characters:
// printable ASCII, and valid UTF-8 beyond it (the watchdog's hints hold
// a dash), which the decoder keeps byte for byte too.
func (d *flatDecoder) plainString() (string, bool) {
	if !d.byte('"') {
		return "", false
	}
	start := d.i
	high := false
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			if high && !utf8.Valid(d.b[start:d.i]) {
				return "", false
			}
			s := string(d.b[start:d.i])
			d.i++
			return s, true
		case c == '\\' || c < 0x20 || c == 0x7f:
			return "", false
		case c >= 0x80:
			high = true
		}
		d.i++
	}
	return "", false
}

// scalar reads a plain string, a number, true, false or null.
func (d *flatDecoder) scalar() (sensor.Value, bool) {
	if d.i >= len(d.b) {
		return sensor.Value{}, false
	}
	switch c := d.b[d.i]; {
	case c == '"':
		s, ok := d.plainString()
		return sensor.StringValue(s), ok
	case c == 't':
		return sensor.BoolValue(true), d.word("true")
	case c == 'f':
		return sensor.BoolValue(false), d.word("false")
	case c == 'n':
		return sensor.NullValue(), d.word("null")
	}
	start := d.i
	if !d.number() {
		return sensor.Value{}, false
	}
	v, err := sensor.ParseNumber(string(d.b[start:d.i]))
	return v, err == nil
}

// word consumes w.
func (d *flatDecoder) word(w string) bool {
	if len(d.b)-d.i < len(w) || string(d.b[d.i:d.i+len(w)]) != w {
		return false
	}
	d.i += len(w)
	return true
}

// number consumes a number as JSON writes it:
// -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?
func (d *flatDecoder) number() bool {
	d.byte('-')
	switch {
	case d.byte('0'):
	case d.i < len(d.b) && d.b[d.i] >= '1' && d.b[d.i] <= '9':
		d.digits()
	default:
		return false
	}
	if d.byte('.') && !d.digits() {
		return false
	}
	if d.byte('e') || d.byte('E') {
		if !d.byte('+') {
			d.byte('-')
		}
		if !d.digits() {
			return false
		}
	}
	return true
}

// digits consumes one or more digits.
func (d *flatDecoder) digits() bool {
	start := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	return d.i > start
}
