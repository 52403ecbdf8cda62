package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"

	"github.com/interlockhq/interlock/internal/deps"
	"github.com/interlockhq/interlock/internal/project"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

func init() {
	register(&command{
		name:    "graph",
		summary: "Print the pipelines' dependency graph (upstream rules) as text, Graphviz dot or JSON",
		usage:   "[--config FILE] [--output text|dot|json] [PATH…]",
		examples: []string{
			"interlock graph                          # the project of ./interlock.yaml",
			"interlock graph --output dot | dot -Tsvg > graph.svg",
			"interlock graph pipelines/ --output json",
		},
		flags: runGraph,
	})
}

// graphOutput is --output of graph: text, dot or json.
type graphOutput string

func (o *graphOutput) String() string { return string(*o) }
func (o *graphOutput) Set(s string) error {
	switch s {
	case "text", "dot", "json":
		*o = graphOutput(s)
		return nil
	}
	return fmt.Errorf("--output must be text, dot or json, got %q", s)
}
func (o *graphOutput) choices() []string { return []string{"text", "dot", "json"} }

// runGraph reads the project's pipelines as validate does and prints
// their graph. Files that do not load are left out, and said so on
// stderr; a cycle is drawn, and named there too (exit 1, as validate).
func runGraph(fs *flag.FlagSet) action {
	config := fs.String("config", "interlock.yaml", "project settings: its pipelines directory is read when no PATH is given")
	out := graphOutput("text")
	fs.Var(&out, "output", "`format`: text, dot (Graphviz) or json")
	return func(_ context.Context, env Env) int {
		rep, err := project.Validate(fs.Args(), project.Options{SettingsFile: *config})
		if err != nil {
			fmt.Fprintf(env.Stderr, "interlock graph: %v\n", err)
			return ExitUsage
		}
		g := deps.BuildGraph(rep.Pipelines())
		switch out {
		case "dot":
			writeDOT(env.Stdout, g)
		case "json":
			enc := json.NewEncoder(env.Stdout)
			enc.SetIndent("", "  ")
			_ = enc.Encode(api.GraphViewOf(g))
		default:
			writeGraphText(env.Stdout, g)
		}
		code := ExitOK
		for _, f := range rep.Files {
			for _, e := range f.Errors {
				fmt.Fprintf(env.Stderr, "interlock graph: %s\n", e.Error())
				code = ExitFailed
			}
		}
		if code != ExitOK {
			fmt.Fprintln(env.Stderr, "interlock graph: the graph leaves out what does not load; `interlock validate` lists it")
		}
		return code
	}
}

// writeGraphText prints each layer's pipelines and then the edges.
func writeGraphText(w io.Writer, g deps.Graph) {
	if len(g.Nodes) == 0 {
		fmt.Fprintln(w, "no pipelines")
		return
	}
	layer := -1
	for _, n := range g.Nodes {
		if n.Layer != layer {
			if layer >= 0 {
				fmt.Fprintln(w)
			}
			layer = n.Layer
			fmt.Fprintf(w, "layer %d:", layer)
		}
		name := " " + n.ID
		if n.Missing {
			name += " (not defined)"
		}
		fmt.Fprint(w, name)
	}
	fmt.Fprintln(w)
	if len(g.Edges) == 0 {
		fmt.Fprintln(w, "no upstream rules")
		return
	}
	fmt.Fprintln(w, "edges (upstream -> downstream):")
	for _, e := range g.Edges {
		fmt.Fprintf(w, "  %s -> %s (%s)\n", e.From, e.To, e.Mapping)
	}
}

// writeDOT prints g as a Graphviz digraph, upstreams on the left, each
// layer a rank. Ids are quoted (ids hold letters, digits, '.', '_', '-'
// only, but quoting keeps "1a" and "a.b" valid identifiers).
func writeDOT(w io.Writer, g deps.Graph) {
	fmt.Fprintln(w, "digraph interlock {")
	fmt.Fprintln(w, "  rankdir=LR;")
	fmt.Fprintln(w, "  node [shape=box];")
	for _, n := range g.Nodes {
		attrs := ""
		if n.Missing {
			attrs = " [style=dashed, label=" + strconv.Quote(n.ID+" (not defined)") + "]"
		}
		fmt.Fprintf(w, "  %s%s;\n", strconv.Quote(n.ID), attrs)
	}
	for _, e := range g.Edges {
		fmt.Fprintf(w, "  %s -> %s [label=%s];\n", strconv.Quote(e.From), strconv.Quote(e.To), strconv.Quote(e.Mapping))
	}
	fmt.Fprintln(w, "}")
}
