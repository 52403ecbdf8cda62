package archtest

import (
	"cmp"
	"fmt"
	"go/token"
	"maps"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/callgraph"
	"golang.org/x/tools/go/callgraph/cha"
	"golang.org/x/tools/go/callgraph/vta"
	"golang.org/x/tools/go/packages"
	"golang.org/x/tools/go/ssa"
	"golang.org/x/tools/go/ssa/ssautil"
)

// The way of a sensor write (docs/architecture.md), measured from the
// code: the module's functions a call of the HTTP handler can reach
// (a static call graph, SSA with VTA resolving closures and interface
// calls among the module's own types), walked depth first in call-site
// order. A port's method with no implementation in the walked packages
// (store.Store.ReadFacts, Commit, the job port) ends the walk there: the
// store backends are not linked by the API package.
//
// Counted: steps (the distinct functions reached), packages, the calls
// from the engine down into the core (package decide and the core's
// packages) — and climbs: a call from a package into one of a layer
// above it (one whose layer may import the caller's: archtest's layers),
// which only a function value or an interface can make. A climb from the
// core or package decide back into the engine is a decision made between
// two of the engine's steps; the test fails on one.

// walkRoots are where the walk starts: the HTTP handler, the engine's
// entry it calls, and an OpenLineage event's write.
var walkRoots = []struct{ pkg, fn string }{
	{"internal/runtime/local/api", "(*server).putSensor"},
	{"internal/engine", "(*Engine).PutSensor"},
	{"internal/engine", "(*Engine).PutLineage"},
}

// walk is what a walk from one root found.
type walk struct {
	steps    []*ssa.Function // in the order first reached
	packages map[string]int  // module package (rel) → functions reached in it
	ports    map[string]bool // port methods reached with no body walked
	down     map[string]bool // engine → core/decide calls, "caller → callee"
	climbs   []string        // "caller (layer) → callee (layer)"
	// intoEngine are the climbs whose callee is the engine's: a decision
	// made between two of the engine's steps.
	intoEngine []string
	made       map[*ssa.Function]bool
}

func TestSensorWriteWalk(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the API package's call graph")
	}
	prog, cg := sensorWriteGraph(t)
	for _, root := range walkRoots {
		fn := findFunc(prog, module+"/"+root.pkg, root.fn)
		if fn == nil {
			t.Fatalf("%s.%s not found: the walk's root moved (walkRoots)", root.pkg, root.fn)
		}
		w := walkFrom(cg, fn)
		t.Logf("from %s.%s: %d steps through %d packages, %d engine → core calls, %d climbs; ports reached: %s",
			root.pkg, root.fn, len(w.steps), len(w.packages), len(w.down), len(w.climbs), strings.Join(sortedKeys(w.ports), ", "))
		if os.Getenv("WALK_VERBOSE") != "" {
			for _, f := range w.steps {
				t.Logf("  step %s", f.String())
			}
			for _, d := range sortedKeys(w.down) {
				t.Logf("  down %s", d)
			}
			for pkg, n := range w.packages {
				t.Logf("  package %s: %d", pkg, n)
			}
		}
		for _, c := range w.climbs {
			t.Logf("  climb %s", c)
		}
		for _, port := range []string{"(internal/store.FactsReader).Facts", "(internal/store.Store).Commit"} {
			if !w.ports[port] {
				t.Errorf("from %s: the walk never reaches %s; ports reached: %v", root.fn, port, sortedKeys(w.ports))
			}
		}
		for _, c := range w.intoEngine {
			t.Errorf("from %s: a climb back into the engine: %s", root.fn, c)
		}
	}
}

// inputRoots are the engine's other inputs: each is walked the same way
// and fails on a climb back into the engine (a timer, a job call, the
// operator's inputs, a config and calendar load and refusal, an item's
// report, an engine's start, a watchdog pass).
var inputRoots = []string{
	"(*Engine).ProcessTimer", "(*Engine).MakeCall", "(*Engine).RequestRerun", "(*Engine).Pause",
	"(*Engine).Resume", "(*Engine).RequestBackfill", "(*Engine).CancelBackfill", "(*Engine).ApplyConfig",
	"(*Engine).ReportJob", "(*Engine).Reject", "(*Engine).HandOff", "(*Engine).Explain",
	"(*Engine).CreateSilence", "(*Engine).ExpireSilence", "(*Engine).ArmMaintenance",
	"(*Engine).DeleteSensor", "(*Engine).Forget", "(*Engine).SetCalendars", "(*Engine).Open",
	"(*Engine).RefuseConfig", "(*Engine).WatchdogPass",
}

func TestNoInputClimbsIntoTheEngine(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the API package's call graph")
	}
	prog, cg := sensorWriteGraph(t)
	for _, name := range inputRoots {
		fn := findFunc(prog, module+"/internal/engine", name)
		if fn == nil {
			t.Errorf("engine.%s not found: an input moved (inputRoots)", name)
			continue
		}
		w := walkFrom(cg, fn)
		for _, c := range w.intoEngine {
			t.Errorf("from %s: a climb back into the engine: %s", name, c)
		}
	}
}

// graph is the call graph the walks share, built once per test binary.
var graph struct {
	once sync.Once
	prog *ssa.Program
	cg   *callgraph.Graph
	err  error
}

// sensorWriteGraph is the SSA program of the API package and every
// module package it links (their syntax; the rest from export data) and
// its call graph.
func sensorWriteGraph(t *testing.T) (*ssa.Program, *callgraph.Graph) {
	t.Helper()
	graph.once.Do(func() { graph.prog, graph.cg, graph.err = buildGraph() })
	if graph.err != nil {
		t.Fatal(graph.err)
	}
	return graph.prog, graph.cg
}

func buildGraph() (*ssa.Program, *callgraph.Graph, error) {
	deps, err := packages.Load(&packages.Config{Mode: packages.NeedName | packages.NeedImports | packages.NeedDeps}, module+"/internal/runtime/local/api")
	if err != nil {
		return nil, nil, fmt.Errorf("go list: %w", err)
	}
	var paths []string
	packages.Visit(deps, nil, func(p *packages.Package) {
		if inModule(p.PkgPath) {
			paths = append(paths, p.PkgPath)
		}
	})
	mode := packages.NeedName | packages.NeedFiles | packages.NeedImports | packages.NeedTypes | packages.NeedSyntax | packages.NeedTypesInfo | packages.NeedTypesSizes
	pkgs, err := packages.Load(&packages.Config{Mode: mode}, paths...)
	if err != nil {
		return nil, nil, fmt.Errorf("load: %w", err)
	}
	if n := packages.PrintErrors(pkgs); n > 0 {
		return nil, nil, fmt.Errorf("%d errors loading the module's packages", n)
	}
	prog, _ := ssautil.Packages(pkgs, ssa.InstantiateGenerics)
	prog.Build()
	all := ssautil.AllFunctions(prog)
	return prog, vta.CallGraph(all, cha.CallGraph(prog)), nil
}

// findFunc is the function of pkg whose name relative to it is name
// ("(*T).M" or "F").
func findFunc(prog *ssa.Program, pkg, name string) *ssa.Function {
	for _, p := range prog.AllPackages() {
		if p.Pkg.Path() != pkg {
			continue
		}
		for fn := range ssautil.AllFunctions(prog) {
			if fn.Pkg == p && fn.RelString(p.Pkg) == name {
				return fn
			}
		}
	}
	return nil
}

// walkFrom walks the module's functions root reaches, depth first, each
// call site's callees in order. A call of a function value (a closure, a
// method value, a decision entry passed to a helper) follows only the
// functions a function walked before made into values: the analysis
// alone would let every closure of a type reach every call of that type
// (each input's needs from another's loadFacts). A function handed to
// one outside the module (sync.WaitGroup.Go: the watchdog's findings
// committed at once) is walked as called there. A synthetic wrapper (a
// method value's) is walked through, not counted.
//
// The values the engine's constructor makes (engine.New: what it keeps
// in its fields, which any input may pass down) count as made before
// the walk starts.
func walkFrom(cg *callgraph.Graph, root *ssa.Function) walk {
	// Walked again until the values made are all known: a value made
	// late in the walk may be called by a function walked early.
	made := map[*ssa.Function]bool{}
	if ctor := findFunc(root.Prog, module+"/internal/engine", "New"); ctor != nil && ctor != root {
		maps.Copy(made, walkFrom(cg, ctor).made)
	}
	for {
		n := len(made)
		w := walkOnce(cg, root, made)
		if len(made) == n {
			w.made = made
			return w
		}
	}
}

// walkOnce is one walk from root, following the function values in made
// and adding those the functions it walks make.
func walkOnce(cg *callgraph.Graph, root *ssa.Function, made map[*ssa.Function]bool) walk {
	w := walk{packages: map[string]int{}, ports: map[string]bool{}, down: map[string]bool{}}
	seen := map[*ssa.Function]bool{}
	var visit func(fn, from *ssa.Function)
	visit = func(fn, from *ssa.Function) {
		wrapper := isWrapper(fn)
		if seen[fn] || (!wrapper && !inModule(pkgPath(fn))) {
			return
		}
		if !wrapper { // a wrapper is walked from each caller: its call is theirs
			seen[fn] = true
			w.steps = append(w.steps, fn)
			w.packages[rel(pkgPath(fn))]++
			from = fn
		}
		for v := range valuesMade(fn) {
			made[v] = true
		}
		node := cg.Nodes[fn]
		for _, site := range callSites(fn) {
			common := site.Common()
			var callees []*ssa.Function
			if node != nil {
				for _, e := range node.Out {
					if e.Site != site {
						continue
					}
					if common.StaticCallee() == nil && !common.IsInvoke() && !made[e.Callee.Func] {
						continue // a value no function walked made
					}
					callees = append(callees, e.Callee.Func)
				}
			}
			if sc := common.StaticCallee(); sc != nil && !isWrapper(sc) && !inModule(pkgPath(sc)) {
				// A function handed to one outside the module
				// (sync.WaitGroup.Go, sync.Once.Do) is called there: its
				// call is this one's.
				for _, arg := range common.Args {
					if f := funcValue(arg); f != nil && inModule(pkgPath(f)) {
						callees = append(callees, f)
					}
				}
			}
			if common.IsInvoke() && len(callees) == 0 {
				if typ := strings.TrimLeft(common.Value.Type().String(), "*"); inModule(typePkg(typ)) {
					w.ports[fmt.Sprintf("(%s).%s", strings.TrimPrefix(typ, module+"/"), common.Method.Name())] = true
				}
			}
			slices.SortFunc(callees, func(a, b *ssa.Function) int { return cmp.Compare(a.String(), b.String()) })
			for _, callee := range callees {
				w.edge(from, callee)
				visit(callee, from)
			}
		}
	}
	visit(root, root)
	return w
}

// funcValue is the function v makes a value of (a function, a closure),
// or nil.
func funcValue(v ssa.Value) *ssa.Function {
	switch v := v.(type) {
	case *ssa.Function:
		return v
	case *ssa.MakeClosure:
		f, _ := v.Fn.(*ssa.Function)
		return f
	}
	return nil
}

// isWrapper: fn is a synthetic wrapper of no package (a method value's).
func isWrapper(fn *ssa.Function) bool {
	return fn.Pkg == nil && fn.Synthetic != "" && fn.Origin() == nil
}

// valuesMade are the functions fn makes into values: closures, method
// values, functions passed or stored (every function operand but a
// call's static callee).
func valuesMade(fn *ssa.Function) map[*ssa.Function]bool {
	out := map[*ssa.Function]bool{}
	for _, b := range fn.Blocks {
		for _, in := range b.Instrs {
			var skip ssa.Value
			if c, ok := in.(ssa.CallInstruction); ok && c.Common().StaticCallee() != nil {
				skip = c.Common().Value
			}
			for _, op := range in.Operands(nil) {
				if op == nil || *op == skip {
					continue
				}
				if f, ok := (*op).(*ssa.Function); ok {
					out[f] = true
				}
			}
		}
	}
	return out
}

// edge counts the call from caller to callee: a descent from the engine
// into the core, or a climb.
func (w *walk) edge(caller, callee *ssa.Function) {
	if isWrapper(callee) {
		return // its call of the method is the edge
	}
	from, to := rel(pkgPath(caller)), rel(pkgPath(callee))
	if !inModule(pkgPath(callee)) || from == to {
		return
	}
	lf, okf := layerOf(from)
	lt, okt := layerOf(to)
	if !okf || !okt || lf.name == lt.name {
		return
	}
	if lf.name == "engine" && (lt.name == "core" || lt.name == "decide") {
		w.down[caller.RelString(nil)+" → "+callee.RelString(nil)] = true
	}
	if slices.Contains(lt.may, lf.name) {
		c := fmt.Sprintf("%s (%s) → %s (%s)", shortName(caller), lf.name, shortName(callee), lt.name)
		w.climbs = append(w.climbs, c)
		if lt.name == "engine" {
			w.intoEngine = append(w.intoEngine, c)
		}
	}
}

// callSites are fn's calls in block and instruction order.
func callSites(fn *ssa.Function) []ssa.CallInstruction {
	var out []ssa.CallInstruction
	for _, b := range fn.Blocks {
		for _, in := range b.Instrs {
			if c, ok := in.(ssa.CallInstruction); ok {
				out = append(out, c)
			}
		}
	}
	return out
}

func pkgPath(fn *ssa.Function) string {
	if fn.Pkg != nil {
		return fn.Pkg.Pkg.Path()
	}
	if fn.Origin() != nil && fn.Origin().Pkg != nil {
		return fn.Origin().Pkg.Pkg.Path()
	}
	return ""
}

// typePkg is the package path of a named type's string ("*a/b.T" → "a/b").
func typePkg(typ string) string {
	typ = strings.TrimLeft(typ, "*")
	if i := strings.LastIndex(typ, "."); i >= 0 {
		return typ[:i]
	}
	return ""
}

// shortName is fn's name below the module, with its position's line.
func shortName(fn *ssa.Function) string {
	name := strings.ReplaceAll(fn.String(), module+"/", "")
	if pos := fn.Prog.Fset.Position(fn.Pos()); pos.IsValid() && fn.Pos() != token.NoPos {
		name += fmt.Sprintf(" [%s:%d]", shortFile(pos.Filename), pos.Line)
	}
	return name
}

func shortFile(path string) string {
	if i := strings.Index(path, "/internal/"); i >= 0 {
		return path[i+1:]
	}
	return path
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
