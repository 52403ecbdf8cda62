// Package confdec owns strict decoding of Interlock's YAML configuration:
// a YAML node tree is decoded into Go structs by reflection, and every
// problem (unknown field, duplicate key, wrong type, value out of range,
// missing required field) is recorded with its file, line and field path
// instead of stopping at the first one. Loaders (internal/pipeline,
// internal/scenario) add their own semantic checks through the same
// Decoder so that one file's errors come back together, sorted by line.
//
// Decoding never panics and never guesses: an unknown field is an error
// (with the closest known name suggested), and null counts as absent.
package confdec

import (
	"fmt"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Decoder decodes the nodes of one file and collects its errors. It
// remembers the line of every path it decoded, so checks made after
// decoding (cross-field rules) can still point at the right line.
type Decoder struct {
	// File names the file in error messages.
	File string

	errs    Errors
	lines   map[string]int
	nodes   int  // nodes visited, against limit
	limit   int  // node budget: MaxNodes, plus what AllowNodes added
	depth   int  // current nesting, against MaxDepth
	stopped bool // set when a limit was hit: decoding further is pointless
}

// NewDecoder returns a Decoder whose errors name file.
func NewDecoder(file string) *Decoder {
	return &Decoder{File: file, lines: map[string]int{}, limit: MaxNodes}
}

// AllowNodes widens the node budget by n: callers decoding a large
// document pass its size in bytes, which bounds its alias-free node count
// (the same rule ParseDocument applies).
func (d *Decoder) AllowNodes(n int) {
	if n > 0 {
		d.limit += n
	}
}

// Errorf records an error at n's line, or when n is nil at the recorded
// line of path or of its nearest recorded parent (see NearestLine).
func (d *Decoder) Errorf(n *yaml.Node, path, format string, args ...any) {
	line := 0
	if n != nil {
		line = n.Line
	} else {
		line = d.NearestLine(path)
	}
	d.errs = append(d.errs, Error{File: d.File, Line: line, Path: path, Msg: fmt.Sprintf(format, args...)})
}

// ErrorAt records an error at the recorded line of path (or of its
// nearest recorded parent).
func (d *Decoder) ErrorAt(path, format string, args ...any) {
	d.Errorf(nil, path, format, args...)
}

// Add records errors found elsewhere (a referenced file, a sub-parser).
// Errors and Error values keep their own file and line; any other error
// becomes an error of this Decoder's file without a line.
func (d *Decoder) Add(err error) {
	d.errs = append(d.errs, AsErrors(d.File, err)...)
}

// Line returns the line recorded for path while decoding, 0 if path was
// never decoded.
func (d *Decoder) Line(path string) int { return d.lines[path] }

// NearestLine returns the line of path or, for a path that was never
// decoded (a missing field), of its nearest recorded parent; 0 when
// nothing is known. Errorf and ErrorAt use it, so an error about a
// missing field points at the mapping that lacks it.
func (d *Decoder) NearestLine(path string) int {
	for {
		if l, ok := d.lines[path]; ok {
			return l
		}
		parent, ok := Parent(path)
		if !ok {
			return 0
		}
		path = parent
	}
}

// Has reports whether path itself appeared in the decoded input (its key
// was present, even with a null or ill-typed value).
func (d *Decoder) Has(path string) bool {
	_, ok := d.lines[path]
	return ok
}

// Failed reports whether an error was recorded at path or below it, so
// later checks can skip a value that is already known to be wrong rather
// than report its zero value as a second problem.
func (d *Decoder) Failed(path string) bool {
	for _, e := range d.errs {
		if e.Path == path || strings.HasPrefix(e.Path, path+".") || strings.HasPrefix(e.Path, path+"[") {
			return true
		}
	}
	return false
}

// SetLine records the line of path unless one is recorded already
// (custom decoders use it for paths they decode themselves).
func (d *Decoder) SetLine(path string, line int) {
	if d.lines == nil {
		d.lines = map[string]int{}
	}
	if _, ok := d.lines[path]; !ok && line > 0 {
		d.lines[path] = line
	}
}

// ErrorCount is the number of errors recorded so far; a caller compares
// it before and after decoding a part to learn whether that part failed.
func (d *Decoder) ErrorCount() int { return len(d.errs) }

// Errors returns the errors recorded so far, sorted by line, without
// exact duplicates.
func (d *Decoder) Errors() Errors { return d.errs.Sorted() }

// Err returns nil when nothing was recorded, else the sorted Errors.
func (d *Decoder) Err() error {
	if len(d.errs) == 0 {
		return nil
	}
	return d.Errors()
}

// Join appends a field name to a path: Join("schedule", "cron") is
// "schedule.cron"; Join("", "pipeline") is "pipeline".
func Join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Index appends a list index to a path: "schedule.exclude.dates[1]".
func Index(path string, i int) string {
	return path + "[" + strconv.Itoa(i) + "]"
}

// Key appends a map key to a path: plain keys as fields
// ("job.config.headers.Authorization"), others quoted
// (`job.config.headers["a b"]`).
func Key(path, key string) string {
	if key != "" && strings.IndexFunc(key, func(r rune) bool {
		return !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
	}) < 0 {
		return Join(path, key)
	}
	return path + "[" + strconv.Quote(key) + "]"
}

// Parent strips the last segment of a path: "a.b[2]" → "a.b" → "a" → "".
// It reports false for the empty path.
func Parent(path string) (string, bool) {
	if path == "" {
		return "", false
	}
	if strings.HasSuffix(path, "]") {
		// Find the bracket that opens the last segment, skipping a quoted
		// key that may itself contain brackets.
		if i := lastOpenBracket(path); i >= 0 {
			return path[:i], true
		}
	}
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[:i], true
	}
	return "", true
}

func lastOpenBracket(path string) int {
	inner := path[:len(path)-1]
	for i := strings.LastIndexByte(inner, '['); i >= 0; i = strings.LastIndexByte(inner[:i], '[') {
		seg := inner[i+1:]
		if _, err := strconv.Atoi(seg); err == nil {
			return i
		}
		if _, err := strconv.Unquote(seg); err == nil && strings.HasPrefix(seg, `"`) {
			return i
		}
	}
	return -1
}
