package confdec

import (
	"errors"
	"sort"
	"strconv"
	"strings"
)

// ErrInvalid is matched (errors.Is) by every configuration error this
// package reports, so callers can tell "the file is wrong" from I/O errors.
var ErrInvalid = errors.New("invalid configuration")

// Error is one problem in one configuration file, located by line and by
// the dotted field path (schedule.exclude.dates[1]).
type Error struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	Path string `json:"path,omitempty"`
	Msg  string `json:"message"`
}

// Error renders "file:line: path: msg", leaving out the parts that are
// empty (a line of 0 means unknown).
func (e Error) Error() string {
	var b strings.Builder
	switch {
	case e.File != "" && e.Line > 0:
		b.WriteString(e.File + ":" + strconv.Itoa(e.Line) + ": ")
	case e.File != "":
		b.WriteString(e.File + ": ")
	case e.Line > 0:
		b.WriteString("line " + strconv.Itoa(e.Line) + ": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Is reports that every Error is an ErrInvalid.
func (e Error) Is(target error) bool { return target == ErrInvalid }

// Errors is every problem found in a configuration, reported at once.
type Errors []Error

// Error renders one error per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Is reports that Errors is an ErrInvalid.
func (es Errors) Is(target error) bool { return target == ErrInvalid }

// Sorted returns the errors ordered by file and line (stable, so errors on
// one line keep the order they were found in), without exact duplicates.
func (es Errors) Sorted() Errors {
	out := make(Errors, 0, len(es))
	seen := make(map[Error]bool, len(es))
	for _, e := range es {
		if !seen[e] {
			seen[e] = true
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].File != out[j].File {
			return out[i].File < out[j].File
		}
		return out[i].Line < out[j].Line
	})
	return out
}

// AsErrors flattens err into Errors: Errors and Error are taken as they
// are; any other error becomes one Error of file with no line. A nil err
// gives nil.
func AsErrors(file string, err error) Errors {
	if err == nil {
		return nil
	}
	var es Errors
	if errors.As(err, &es) {
		return es
	}
	var e Error
	if errors.As(err, &e) {
		return Errors{e}
	}
	return Errors{{File: file, Msg: err.Error()}}
}
