package confdec

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Limits that keep a hostile or broken file from exhausting memory or the
// stack. Real configuration is a few hundred nodes deep and wide.
const (
	// MaxNodes bounds how many nodes a document may expand to beyond its
	// size in bytes once aliases are followed: an "alias bomb" is small on
	// disk and huge expanded, while a document without aliases never has
	// more nodes than bytes, so large honest files (a month-long scenario
	// timeline) still load.
	MaxNodes = 200_000
	// MaxDepth bounds nesting, which also stops cyclic aliases.
	MaxDepth = 64
)

var syntaxLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// ParseDocument parses data as exactly one YAML document and returns its
// root node (never the DocumentNode wrapper). Syntax errors come back as
// Errors with the line the parser named. A file with no content (empty,
// only comments, or a lone null) is an error: a configuration file that
// says nothing is almost always a mistake. A second document ("---") is
// an error too, because the rest of the file would otherwise be ignored
// silently; a trailing empty document is tolerated.
func ParseDocument(file string, data []byte) (root *yaml.Node, err error) {
	defer func() {
		// yaml.v3 has had panics on malformed input; a config loader must
		// report, never crash.
		if r := recover(); r != nil {
			root, err = nil, Errors{{File: file, Msg: fmt.Sprintf("cannot parse YAML: %v", r)}}
		}
	}()
	empty := Errors{{File: file, Msg: "empty file: want a YAML mapping"}}
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, empty
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, empty
		}
		return nil, syntaxError(file, err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		return nil, syntaxError(file, err)
	case len(extra.Content) > 0 && !isNull(extra.Content[0]):
		return nil, Errors{{File: file, Line: extra.Line, Msg: "more than one YAML document: want one document per file"}}
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, empty
	}
	root = doc.Content[0]
	if limit := MaxNodes + len(data); !expandedWithin(root, limit) {
		return nil, Errors{{File: file, Line: root.Line, Msg: fmt.Sprintf("document nests deeper than %d levels or expands (through aliases) to more than %d nodes", MaxDepth, limit)}}
	}
	return root, nil
}

func syntaxError(file string, err error) Errors {
	msg := err.Error()
	if m := syntaxLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		return Errors{{File: file, Line: line, Msg: "YAML syntax: " + m[2]}}
	}
	return Errors{{File: file, Msg: "YAML syntax: " + strings.TrimPrefix(msg, "yaml: ")}}
}

// expandedSize counts the nodes under n with aliases followed, giving up
// (ok=false) past limit nodes or MaxDepth levels.
func expandedSize(n *yaml.Node, limit int) (count int, ok bool) {
	var walk func(n *yaml.Node, depth int) bool
	walk = func(n *yaml.Node, depth int) bool {
		if n == nil {
			return true
		}
		count++
		if count > limit || depth > MaxDepth {
			return false
		}
		if n.Kind == yaml.AliasNode {
			return walk(n.Alias, depth+1)
		}
		for _, c := range n.Content {
			if !walk(c, depth+1) {
				return false
			}
		}
		return true
	}
	ok = walk(n, 0)
	return count, ok
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

func expandedWithin(root *yaml.Node, limit int) bool {
	_, ok := expandedSize(root, limit)
	return ok
}
