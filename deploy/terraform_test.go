package deploy

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	interlock "github.com/interlockhq/interlock"
	"github.com/interlockhq/interlock/internal/runtime/awsrt"
	"github.com/interlockhq/interlock/internal/runtime/gcpfn"
)

// What Terraform itself does not check: the module's files parsed with
// hcl/v2 and compared with what the code expects — the functions of
// cmd/lambda, the variables each one requires, the state machine's
// template variables. Terraform judges the module in
// terraform_cli_test.go (validate, fmt, plan, the tables applied); the
// resolver here checks the GCP example, whose provider has no mirror here.

const moduleDir = "terraform"

// module is the parsed Terraform module: its top-level declarations.
type module struct {
	files     map[string]*hclsyntax.Body
	variables map[string]*hclsyntax.Block
	locals    map[string]*hclsyntax.Attribute
	resources map[string]*hclsyntax.Block // "type.name"
	data      map[string]*hclsyntax.Block // "type.name"
	modules   map[string]*hclsyntax.Block
	outputs   map[string]*hclsyntax.Block
}

// parseModule parses every .tf file of dir (or the sources given, for the
// checker's own tests) and collects the declarations; a duplicate is an
// error, as it is to Terraform.
func parseModule(dir string, sources map[string]string) (*module, error) {
	p := hclparse.NewParser()
	if sources == nil {
		names, err := filepath.Glob(filepath.Join(dir, "*.tf"))
		if err != nil {
			return nil, err
		}
		sources = map[string]string{}
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				return nil, err
			}
			sources[filepath.Base(n)] = string(b)
		}
	}
	if len(sources) == 0 {
		return nil, fmt.Errorf("no .tf file in %s", dir)
	}
	m := &module{files: map[string]*hclsyntax.Body{}, variables: map[string]*hclsyntax.Block{}, locals: map[string]*hclsyntax.Attribute{},
		resources: map[string]*hclsyntax.Block{}, data: map[string]*hclsyntax.Block{}, modules: map[string]*hclsyntax.Block{}, outputs: map[string]*hclsyntax.Block{}}
	var errs []error
	names := make([]string, 0, len(sources))
	for n := range sources {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		f, diags := p.ParseHCL([]byte(sources[name]), name)
		if diags.HasErrors() {
			errs = append(errs, diags)
			continue
		}
		body := f.Body.(*hclsyntax.Body)
		m.files[name] = body
		for _, attr := range body.Attributes {
			errs = append(errs, fmt.Errorf("%s: an attribute %q at the top level of a module", attr.SrcRange, attr.Name))
		}
		for _, b := range body.Blocks {
			add := func(into any, key string) {
				switch into := into.(type) {
				case map[string]*hclsyntax.Block:
					if _, dup := into[key]; dup {
						errs = append(errs, fmt.Errorf("%s: %s %q is declared twice", b.DefRange(), b.Type, key))
					}
					into[key] = b
				}
			}
			switch b.Type {
			case "variable":
				add(m.variables, b.Labels[0])
			case "resource":
				add(m.resources, b.Labels[0]+"."+b.Labels[1])
			case "data":
				add(m.data, b.Labels[0]+"."+b.Labels[1])
			case "module":
				add(m.modules, b.Labels[0])
			case "output":
				add(m.outputs, b.Labels[0])
			case "locals":
				for n, a := range b.Body.Attributes {
					if _, dup := m.locals[n]; dup {
						errs = append(errs, fmt.Errorf("%s: local.%s is defined twice", a.SrcRange, n))
					}
					m.locals[n] = a
				}
			case "terraform", "provider", "moved", "import", "check", "removed":
			default:
				errs = append(errs, fmt.Errorf("%s: unknown block type %q", b.DefRange(), b.Type))
			}
		}
	}
	return m, errors.Join(errs...)
}

// scope is what a reference may name where it is written.
type scope struct {
	each, count, self bool
	iterators         []string // dynamic blocks' iterators
	onlyVar           string   // a variable's validation: only var.<it> (Terraform before 1.9), "*": any variable
}

// crossVariableValidation reports whether the module requires Terraform
// 1.9 or later, where a variable's validation may reference other
// variables (before, only its own).
func (m *module) crossVariableValidation() bool {
	for _, f := range m.files {
		for _, b := range f.Blocks {
			if b.Type != "terraform" {
				continue
			}
			if a, ok := b.Body.Attributes["required_version"]; ok {
				v, diags := a.Expr.Value(nil)
				if diags.HasErrors() || v.Type() != cty.String {
					return false
				}
				sm := regexp.MustCompile(`>=\s*1\.(\d+)`).FindStringSubmatch(v.AsString())
				if sm == nil {
					return false
				}
				minor, _ := strconv.Atoi(sm[1])
				return minor >= 9
			}
		}
	}
	return false
}

// resolve checks every reference and function call of the module.
func (m *module) resolve() []error {
	var errs []error
	for _, name := range sortedKeys(m.files) {
		for _, b := range m.files[name].Blocks {
			switch b.Type {
			case "terraform":
				// required_providers and versions: no references.
			case "variable":
				for n, a := range b.Body.Attributes {
					if n == "type" {
						continue // a type constraint, not an expression
					}
					errs = append(errs, m.checkExpr(a.Expr, scope{onlyVar: "-"})...)
				}
				for _, v := range b.Body.Blocks {
					if v.Type != "validation" {
						errs = append(errs, fmt.Errorf("%s: unexpected block %q in a variable", v.DefRange(), v.Type))
						continue
					}
					own := b.Labels[0]
					if m.crossVariableValidation() {
						own = "*"
					}
					for _, a := range v.Body.Attributes {
						errs = append(errs, m.checkExpr(a.Expr, scope{onlyVar: own})...)
					}
				}
			case "locals", "output", "provider":
				errs = append(errs, m.checkBody(b.Body, scope{})...)
			default: // resource, data, module
				s := scope{}
				if _, ok := b.Body.Attributes["for_each"]; ok {
					s.each = true
				}
				if _, ok := b.Body.Attributes["count"]; ok {
					s.count = true
				}
				if s.each && s.count {
					errs = append(errs, fmt.Errorf("%s: both count and for_each", b.DefRange()))
				}
				errs = append(errs, m.checkBody(b.Body, s)...)
			}
		}
	}
	return errs
}

func (m *module) checkBody(body *hclsyntax.Body, s scope) []error {
	var errs []error
	for _, n := range sortedKeys(body.Attributes) {
		a := body.Attributes[n]
		switch n {
		case "for_each", "count":
			// Evaluated before the instances exist: no each or count in it.
			inner := s
			inner.each, inner.count = false, false
			errs = append(errs, m.checkExpr(a.Expr, inner)...)
		default:
			errs = append(errs, m.checkExpr(a.Expr, s)...)
		}
	}
	for _, b := range body.Blocks {
		switch b.Type {
		case "lifecycle":
			for n, a := range b.Body.Attributes {
				if n == "ignore_changes" || n == "replace_triggered_by" {
					continue // attribute names, not references
				}
				errs = append(errs, m.checkExpr(a.Expr, s)...)
			}
			errs = append(errs, m.checkBody(&hclsyntax.Body{Blocks: b.Body.Blocks}, s)...)
		case "provisioner", "connection":
			inner := s
			inner.self = true
			errs = append(errs, m.checkBody(b.Body, inner)...)
		case "dynamic":
			it := b.Labels[0]
			if a, ok := b.Body.Attributes["iterator"]; ok {
				it = hcl.ExprAsKeyword(a.Expr)
			}
			fe, ok := b.Body.Attributes["for_each"]
			if !ok {
				errs = append(errs, fmt.Errorf("%s: dynamic %q has no for_each", b.DefRange(), b.Labels[0]))
			} else {
				errs = append(errs, m.checkExpr(fe.Expr, s)...)
			}
			inner := s
			inner.iterators = append(slices.Clone(s.iterators), it)
			var content bool
			for _, c := range b.Body.Blocks {
				if c.Type == "content" {
					content = true
					errs = append(errs, m.checkBody(c.Body, inner)...)
				}
			}
			if !content {
				errs = append(errs, fmt.Errorf("%s: dynamic %q has no content block", b.DefRange(), b.Labels[0]))
			}
		default:
			errs = append(errs, m.checkBody(b.Body, s)...)
		}
	}
	return errs
}

func (m *module) checkExpr(expr hclsyntax.Expression, s scope) []error {
	var errs []error
	for _, t := range hclsyntax.Variables(expr) {
		if err := m.checkTraversal(t, s); err != nil {
			errs = append(errs, fmt.Errorf("%s: %s: %w", t.SourceRange(), traversalText(t), err))
		}
	}
	hclsyntax.VisitAll(expr, func(n hclsyntax.Node) hcl.Diagnostics {
		if call, ok := n.(*hclsyntax.FunctionCallExpr); ok && !terraformFunctions[call.Name] {
			errs = append(errs, fmt.Errorf("%s: %s is not a Terraform function", call.NameRange, call.Name))
		}
		return nil
	})
	return errs
}

func (m *module) checkTraversal(t hcl.Traversal, s scope) error {
	root := t.RootName()
	if s.onlyVar != "" && root != "var" && len(t) > 0 {
		return fmt.Errorf("a variable's default or validation may reference nothing but the variable")
	}
	attr := func(i int) string {
		if i < len(t) {
			if a, ok := t[i].(hcl.TraverseAttr); ok {
				return a.Name
			}
		}
		return ""
	}
	switch root {
	case "var":
		name := attr(1)
		if _, ok := m.variables[name]; !ok {
			return fmt.Errorf("no variable %q is declared", name)
		}
		if s.onlyVar != "" && s.onlyVar != "*" && name != s.onlyVar {
			return fmt.Errorf("a variable's validation may reference only var.%s", s.onlyVar)
		}
		return nil
	case "local":
		name := attr(1)
		a, ok := m.locals[name]
		if !ok {
			return fmt.Errorf("no local value %q is defined", name)
		}
		return checkKey(t, 2, a.Expr, m)
	case "data":
		addr := attr(1) + "." + attr(2)
		b, ok := m.data[addr]
		if !ok {
			return fmt.Errorf("no data source %s is declared", addr)
		}
		return m.checkInstance(t, 3, b)
	case "module":
		if _, ok := m.modules[attr(1)]; !ok {
			return fmt.Errorf("no module %q is declared", attr(1))
		}
		return nil
	case "path":
		if n := attr(1); n != "module" && n != "root" && n != "cwd" {
			return fmt.Errorf("path.%s does not exist", n)
		}
		return nil
	case "terraform":
		if attr(1) != "workspace" {
			return fmt.Errorf("terraform.%s does not exist", attr(1))
		}
		return nil
	case "each":
		if !s.each {
			return fmt.Errorf("each is only valid in a resource, data source or module with for_each")
		}
		if n := attr(1); n != "key" && n != "value" {
			return fmt.Errorf("each.%s does not exist", n)
		}
		return nil
	case "count":
		if !s.count {
			return fmt.Errorf("count.index is only valid with count")
		}
		if attr(1) != "index" {
			return fmt.Errorf("count.%s does not exist", attr(1))
		}
		return nil
	case "self":
		if !s.self {
			return fmt.Errorf("self is only valid in a provisioner or connection block")
		}
		return nil
	}
	if slices.Contains(s.iterators, root) {
		if n := attr(1); n != "key" && n != "value" {
			return fmt.Errorf("%s.%s: a dynamic block's iterator has key and value", root, n)
		}
		return nil
	}
	addr := root + "." + attr(1)
	b, ok := m.resources[addr]
	if !ok {
		return fmt.Errorf("no resource %s is declared", addr)
	}
	return m.checkInstance(t, 2, b)
}

// checkInstance checks how t, from step i, addresses the instances of b:
// a resource with for_each is indexed by a key of its map (when the keys
// are known without applying), with count by a number, and a single one
// not at all.
func (m *module) checkInstance(t hcl.Traversal, i int, b *hclsyntax.Block) error {
	var next hcl.Traverser
	if i < len(t) {
		next = t[i]
	}
	_, each := b.Body.Attributes["for_each"]
	_, count := b.Body.Attributes["count"]
	idx, indexed := next.(hcl.TraverseIndex)
	switch {
	case each:
		if _, isAttr := next.(hcl.TraverseAttr); isAttr {
			return fmt.Errorf("the resource has for_each: an attribute needs an instance key first")
		}
		if indexed {
			return checkKey(t, i, b.Body.Attributes["for_each"].Expr, m)
		}
	case count:
		if _, isAttr := next.(hcl.TraverseAttr); isAttr {
			return fmt.Errorf("the resource has count: an attribute needs an instance index first")
		}
		if indexed && idx.Key.Type() != cty.Number {
			return fmt.Errorf("the resource has count: its index is a number")
		}
	case indexed:
		return fmt.Errorf("the resource has neither count nor for_each: it has no index")
	}
	return nil
}

// checkKey checks a literal string index at step i of t against the keys
// of the map expr makes, when those are known without applying.
func checkKey(t hcl.Traversal, i int, expr hclsyntax.Expression, m *module) error {
	if i >= len(t) {
		return nil
	}
	idx, ok := t[i].(hcl.TraverseIndex)
	if !ok || idx.Key.Type() != cty.String {
		return nil
	}
	keys, known := m.keysOf(expr)
	if known && !keys[idx.Key.AsString()] {
		return fmt.Errorf("no key %q (the keys are %s)", idx.Key.AsString(), strings.Join(sortedKeys(keys), ", "))
	}
	return nil
}

// keysOf returns the keys of the map or set expr makes, when they are
// known without applying: an object constructor, a local naming one,
// toset of literal strings, merge of known maps, and a conditional
// between known maps — the keys either branch has, those it may have (an
// opt-in function: local.functions holds "api" only when enabled).
func (m *module) keysOf(expr hclsyntax.Expression) (map[string]bool, bool) {
	switch e := expr.(type) {
	case *hclsyntax.ConditionalExpr:
		t, tok := m.keysOf(e.TrueResult)
		f, fok := m.keysOf(e.FalseResult)
		if !tok || !fok {
			return nil, false
		}
		for k := range f {
			t[k] = true
		}
		return t, true
	case *hclsyntax.ObjectConsExpr:
		keys := map[string]bool{}
		for _, item := range e.Items {
			v, diags := item.KeyExpr.Value(nil)
			if diags.HasErrors() || v.Type() != cty.String {
				return nil, false
			}
			keys[v.AsString()] = true
		}
		return keys, true
	case *hclsyntax.ScopeTraversalExpr:
		if e.Traversal.RootName() == "local" && len(e.Traversal) == 2 {
			if a, ok := m.locals[e.Traversal[1].(hcl.TraverseAttr).Name]; ok {
				return m.keysOf(a.Expr)
			}
		}
	case *hclsyntax.FunctionCallExpr:
		switch e.Name {
		case "toset":
			if len(e.Args) == 1 {
				v, diags := e.Args[0].Value(nil)
				if diags.HasErrors() || !v.CanIterateElements() {
					return nil, false
				}
				keys := map[string]bool{}
				for it := v.ElementIterator(); it.Next(); {
					_, el := it.Element()
					if el.Type() != cty.String {
						return nil, false
					}
					keys[el.AsString()] = true
				}
				return keys, true
			}
		case "merge":
			keys := map[string]bool{}
			for _, a := range e.Args {
				k, ok := m.keysOf(a)
				if !ok {
					return nil, false
				}
				for n := range k {
					keys[n] = true
				}
			}
			return keys, true
		}
	}
	return nil, false
}

// sureKeys returns the keys the map expr makes always has: those of an
// object constructor, a local, every argument of merge, both branches of
// a conditional.
func (m *module) sureKeys(expr hclsyntax.Expression) map[string]bool {
	keys := map[string]bool{}
	switch e := expr.(type) {
	case *hclsyntax.ObjectConsExpr, *hclsyntax.ScopeTraversalExpr:
		if k, ok := m.keysOf(e); ok {
			return k
		}
		if st, ok := e.(*hclsyntax.ScopeTraversalExpr); ok && st.Traversal.RootName() == "local" && len(st.Traversal) == 2 {
			if a, ok := m.locals[st.Traversal[1].(hcl.TraverseAttr).Name]; ok {
				return m.sureKeys(a.Expr)
			}
		}
	case *hclsyntax.FunctionCallExpr:
		if e.Name == "merge" {
			for _, a := range e.Args {
				for k := range m.sureKeys(a) {
					keys[k] = true
				}
			}
		}
	case *hclsyntax.ConditionalExpr:
		t, f := m.sureKeys(e.TrueResult), m.sureKeys(e.FalseResult)
		for k := range t {
			if f[k] {
				keys[k] = true
			}
		}
	}
	return keys
}

// resolvedModule parses the module of dir and reports every reference
// that does not resolve and every dependency cycle.
func resolvedModule(t *testing.T, dir string) *module {
	t.Helper()
	m, err := parseModule(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, err := range m.resolve() {
		t.Error(err)
	}
	for _, c := range m.cycles() {
		t.Errorf("a dependency cycle: %s", c)
	}
	return m
}

func insideOwnValidation(m *module, name string, r hcl.Range) bool {
	b := m.variables[name]
	return b != nil && r.Filename == b.Range().Filename && r.Start.Byte >= b.Range().Start.Byte && r.End.Byte <= b.Range().End.Byte
}

// cycles returns the dependency cycles of the module, as Terraform's graph
// would refuse them: a resource, data source, module, output or local is a
// node; a reference is an edge (a for_each resource is one node, so one of
// its instances naming another is a cycle too, as in Terraform).
func (m *module) cycles() []string {
	deps := map[string][]string{}
	node := func(t hcl.Traversal) string {
		attr := func(i int) string {
			if i < len(t) {
				if a, ok := t[i].(hcl.TraverseAttr); ok {
					return a.Name
				}
			}
			return ""
		}
		switch root := t.RootName(); root {
		case "var", "path", "each", "count", "self", "terraform":
			return ""
		case "local":
			return "local." + attr(1)
		case "data":
			return "data." + attr(1) + "." + attr(2)
		case "module":
			return "module." + attr(1)
		default:
			if _, ok := m.resources[root+"."+attr(1)]; ok {
				return root + "." + attr(1)
			}
			return ""
		}
	}
	refs := func(from string, body hcl.Body) {
		hclsyntax.VisitAll(body.(*hclsyntax.Body), func(n hclsyntax.Node) hcl.Diagnostics {
			if e, ok := n.(hclsyntax.Expression); ok {
				if st, ok := e.(*hclsyntax.ScopeTraversalExpr); ok {
					if to := node(st.Traversal); to != "" {
						deps[from] = append(deps[from], to)
					}
				}
			}
			return nil
		})
	}
	for n, a := range m.locals {
		for _, t := range hclsyntax.Variables(a.Expr) {
			if to := node(t); to != "" {
				deps["local."+n] = append(deps["local."+n], to)
			}
		}
	}
	for addr, b := range m.resources {
		refs(addr, b.Body)
	}
	for addr, b := range m.data {
		refs("data."+addr, b.Body)
	}
	for name, b := range m.outputs {
		refs("output."+name, b.Body)
	}
	var found []string
	state := map[string]int{} // 1 visiting, 2 done
	var path []string
	var visit func(n string)
	visit = func(n string) {
		switch state[n] {
		case 1:
			i := slices.Index(path, n)
			found = append(found, strings.Join(append(slices.Clone(path[i:]), n), " -> "))
			return
		case 2:
			return
		}
		state[n] = 1
		path = append(path, n)
		for _, d := range deps[n] {
			visit(d)
		}
		path = path[:len(path)-1]
		state[n] = 2
	}
	for _, n := range sortedKeys(deps) {
		visit(n)
	}
	return found
}

// TestTerraformResolverCatchesBrokenReferences breaks references on
// purpose: the checker must refuse each.
func TestTerraformResolverCatchesBrokenReferences(t *testing.T) {
	base := `
variable "environment" { type = string }
variable "names" {
  type = list(string)
  validation {
    condition     = length(var.names) > 0
    error_message = "names"
  }
}
locals {
  fns = { "a" = 1, "b" = 2 }
}
resource "aws_thing" "one" { name = var.environment }
resource "aws_thing" "many" {
  for_each = local.fns
  name     = "${var.environment}-${each.key}"
  dynamic "tag" {
    for_each = var.names
    content { value = tag.value }
  }
}
resource "aws_thing" "counted" {
  count = 2
  name  = "n${count.index}"
}
data "aws_region" "current" {}
output "o" { value = [aws_thing.one.id, aws_thing.many["a"].id, aws_thing.counted[0].id, data.aws_region.current.name, path.module] }
`
	m, err := parseModule("", map[string]string{"main.tf": base})
	if err != nil {
		t.Fatal(err)
	}
	if errs := m.resolve(); len(errs) > 0 {
		t.Fatalf("the valid module was refused: %v", errs)
	}
	if c := m.cycles(); len(c) > 0 {
		t.Fatalf("the valid module has cycles: %v", c)
	}
	t.Run("cycle", func(t *testing.T) {
		src := strings.Replace(base, `resource "aws_thing" "one" { name = var.environment }`, `resource "aws_thing" "one" { name = aws_thing.many["a"].id }`, 1)
		src = strings.Replace(src, `name     = "${var.environment}-${each.key}"`, `name     = aws_thing.one.id`, 1)
		m, err := parseModule("", map[string]string{"main.tf": src})
		if err != nil {
			t.Fatal(err)
		}
		if c := m.cycles(); len(c) == 0 {
			t.Error("the checker found no cycle in aws_thing.one -> aws_thing.many -> aws_thing.one")
		}
	})
	broken := map[string][2]string{
		"undeclared variable":       {"name = var.environment }", "name = var.environmnet }"},
		"undefined local":           {"for_each = local.fns", "for_each = local.fn"},
		"undeclared resource":       {"aws_thing.one.id", "aws_thing.two.id"},
		"undeclared data source":    {"data.aws_region.current.name", "data.aws_region.here.name"},
		"unknown for_each key":      {`aws_thing.many["a"]`, `aws_thing.many["c"]`},
		"for_each without a key":    {`aws_thing.many["a"].id`, `aws_thing.many.id`},
		"count without an index":    {`aws_thing.counted[0].id`, `aws_thing.counted.id`},
		"index on a single one":     {`aws_thing.one.id`, `aws_thing.one[0].id`},
		"each without for_each":     {`resource "aws_thing" "one" { name = var.environment }`, `resource "aws_thing" "one" { name = each.key }`},
		"count.index without count": {`name = var.environment }`, `name = "n${count.index}" }`},
		"iterator outside content":  {`content { value = tag.value }`, `content { value = other.value }`},
		"validation of another var": {`length(var.names) > 0`, `length(var.environment) > 0`},
		"unknown function":          {`length(var.names)`, `size(var.names)`},
		"bad path":                  {`path.module`, `path.modul`},
	}
	for name, edit := range broken {
		t.Run(name, func(t *testing.T) {
			src := strings.Replace(base, edit[0], edit[1], 1)
			if src == base {
				t.Fatalf("the edit %q does not apply", edit[0])
			}
			m, err := parseModule("", map[string]string{"main.tf": src})
			if err != nil {
				return // refused at parse: fine
			}
			if errs := m.resolve(); len(errs) == 0 {
				t.Errorf("the checker accepted %q", edit[1])
			}
		})
	}
}

// The functions being added in parallel (issue 13): the module declares
// them before their directories land on main. Any other function the
// module declares without a directory is an error.
var functionsComing = []string{"orchestrator", "sla-monitor", "watchdog"}

// lambdaFunctions lists the directories of cmd/lambda that hold a main.
func lambdaFunctions(t *testing.T) []string {
	t.Helper()
	mains, err := filepath.Glob("../cmd/lambda/*/main.go")
	if err != nil {
		t.Fatal(err)
	}
	var fns []string
	for _, m := range mains {
		fns = append(fns, filepath.Base(filepath.Dir(m)))
	}
	if len(fns) == 0 {
		t.Fatal("no function under cmd/lambda")
	}
	return fns
}

func TestTerraformDeclaresEveryFunction(t *testing.T) {
	m, err := parseModule(moduleDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	declared, ok := m.keysOf(m.locals["functions"].Expr)
	if !ok {
		t.Fatal("local.functions is not a map with literal keys")
	}
	fn := m.resources["aws_lambda_function.fn"]
	if fn == nil {
		t.Fatal("no aws_lambda_function.fn")
	}
	if got := exprText(t, fn.Body.Attributes["for_each"]); got != "local.functions" {
		t.Errorf("aws_lambda_function.fn's for_each is %s, want local.functions", got)
	}
	// Each function's package is "<dist_path>/<function>.zip", as build.sh writes it.
	for _, a := range []string{"filename", "source_code_hash"} {
		if got := exprText(t, fn.Body.Attributes[a]); !strings.Contains(got, `"${var.dist_path}/${each.key}.zip"`) {
			t.Errorf("aws_lambda_function.fn's %s is %s: not the package build.sh writes", a, got)
		}
	}
	for a, want := range map[string]string{"handler": `"bootstrap"`, "runtime": `"provided.al2023"`, "architectures": `["arm64"]`} {
		if got := exprText(t, fn.Body.Attributes[a]); got != want {
			t.Errorf("aws_lambda_function.fn's %s is %s, want %s", a, got, want)
		}
	}
	dirs := lambdaFunctions(t)
	for _, d := range dirs {
		if !declared[d] {
			t.Errorf("cmd/lambda/%s has no function in the module (local.functions)", d)
		}
	}
	for name := range declared {
		if !slices.Contains(dirs, name) {
			if slices.Contains(functionsComing, name) {
				t.Logf("the module declares %s, whose cmd/lambda directory is not on this branch yet", name)
				continue
			}
			t.Errorf("the module declares a function %s that cmd/lambda does not have", name)
		}
	}
	// Every function has its environment and its role's statements.
	for _, local := range []string{"function_env", "function_statements"} {
		keys, ok := m.keysOf(m.locals[local].Expr)
		if !ok || !maps(keys, declared) {
			t.Errorf("local.%s has keys %v, want the functions %v", local, sortedKeys(keys), sortedKeys(declared))
		}
	}
}

func maps(a, b map[string]bool) bool {
	return slices.Equal(sortedKeys(a), sortedKeys(b))
}

// TestTerraformSetsEveryRequiredVariable runs each function of cmd/lambda
// without any environment: it exits at start naming the variables it
// requires ("<function>: missing required env vars: A, B" — each
// …FromEnv's own list), and the module must set each on that function.
// The expectation is the code's, not a list kept here.
func TestTerraformSetsEveryRequiredVariable(t *testing.T) {
	t.Parallel() // beside the package's other builds and terraform runs
	if testing.Short() {
		t.Skip("builds the functions")
	}
	m, err := parseModule(moduleDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	envItems := map[string]hclsyntax.Expression{}
	obj, ok := m.locals["function_env"].Expr.(*hclsyntax.ObjectConsExpr)
	if !ok {
		t.Fatal("local.function_env is not a map")
	}
	for _, item := range obj.Items {
		k, _ := item.KeyExpr.Value(nil)
		envItems[k.AsString()] = item.ValueExpr
	}
	fn := m.resources["aws_lambda_function.fn"]
	var envVars string
	for _, b := range fn.Body.Blocks {
		if b.Type == "environment" {
			envVars = exprText(t, b.Body.Attributes["variables"])
		}
	}
	if envVars != "local.function_env[each.key]" {
		t.Fatalf("aws_lambda_function.fn's environment is %q, want local.function_env[each.key]", envVars)
	}

	bin := t.TempDir()
	// Without symbols or DWARF: a third less linking, and the probe needs neither.
	build := exec.Command("go", "build", "-ldflags=-s -w", "-o", bin+string(os.PathSeparator), "./cmd/lambda/...")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/lambda/...: %v\n%s", err, out)
	}
	missing := regexp.MustCompile(`^(\S+): missing required env vars: (.+)$`)
	for _, name := range lambdaFunctions(t) {
		cmd := exec.Command(filepath.Join(bin, name))
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir(), "AWS_EC2_METADATA_DISABLED=true"}
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("%s started without environment: %v, want exit status 1\n%s", name, err, out)
			continue
		}
		sm := missing.FindStringSubmatch(strings.TrimSpace(string(out)))
		if sm == nil || sm[1] != name {
			t.Errorf("%s started without environment said %q, not \"%s: missing required env vars: …\"", name, out, name)
			continue
		}
		set := m.sureKeys(envItems[name])
		for _, v := range strings.Split(sm[2], ", ") {
			if !set[v] {
				t.Errorf("%s requires %s; the module does not always set it (it sets %s)", name, v, strings.Join(sortedKeys(set), ", "))
			}
		}
		// The optional settings a function reads are the module's
		// variables too: a deployment must be able to set them.
		for _, v := range optionalEnv[name] {
			if !set[v] {
				t.Errorf("%s reads %s; the module does not set it (it sets %s)", name, v, strings.Join(sortedKeys(set), ", "))
			}
		}
	}
}

// optionalEnv are the optional variables of the functions
// (internal/runtime/awsrt: each …FromEnv's documentation).
var optionalEnv = map[string][]string{
	awsrt.FnOrchestrator:    {awsrt.EnvEventsTTLDays, awsrt.EnvTriggerAllowAddresses, awsrt.EnvEnvAllow, awsrt.EnvEnvironment},
	awsrt.FnWatchdog:        {awsrt.EnvEventsTTLDays, awsrt.EnvStuckRunThreshold, awsrt.EnvEnvironment},
	awsrt.FnSLAMonitor:      {awsrt.EnvEventsTTLDays, awsrt.EnvEnvironment},
	awsrt.FnStreamRouter:    {awsrt.EnvEventsTTLDays, awsrt.EnvEnvironment},
	awsrt.FnAlertDispatcher: {awsrt.EnvEnvironment},
}

// TestTerraformStateMachineTemplate: stepfunctions.tf renders
// deploy/statemachine.asl.json with exactly the variables the file uses.
func TestTerraformStateMachineTemplate(t *testing.T) {
	m, err := parseModule(moduleDir, nil)
	if err != nil {
		t.Fatal(err)
	}
	var calls []*hclsyntax.FunctionCallExpr
	for _, f := range m.files {
		hclsyntax.VisitAll(f, func(n hclsyntax.Node) hcl.Diagnostics {
			if c, ok := n.(*hclsyntax.FunctionCallExpr); ok && c.Name == "templatefile" {
				calls = append(calls, c)
			}
			return nil
		})
	}
	if len(calls) != 1 || len(calls[0].Args) != 2 {
		t.Fatalf("want one templatefile(path, vars) call, found %d", len(calls))
	}
	call := calls[0]
	path := string(call.Args[0].Range().SliceBytes(m.srcOf(call.Args[0].Range().Filename)))
	if path != `"${path.module}/../statemachine.asl.json"` {
		t.Errorf("templatefile renders %s, want \"${path.module}/../statemachine.asl.json\"", path)
	}
	passed, ok := m.keysOf(call.Args[1])
	if !ok {
		t.Fatal("templatefile's variables are not an object with literal keys")
	}
	want := map[string]bool{"orchestrator_arn": true, "sfn_timeout_seconds": true, "trigger_max_attempts": true, "task_timeout_seconds": true}
	if !maps(passed, want) {
		t.Errorf("templatefile passes %v, want %v", sortedKeys(passed), sortedKeys(want))
	}
	asl, err := os.ReadFile("statemachine.asl.json")
	if errors.Is(err, os.ErrNotExist) {
		t.Logf("deploy/statemachine.asl.json is not on this branch yet: the variables it uses are not compared")
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	used := templateVariables(string(asl))
	if !maps(used, passed) {
		t.Errorf("statemachine.asl.json uses %v; templatefile passes %v", sortedKeys(used), sortedKeys(passed))
	}
}

// templateVariables returns the names a Terraform template interpolates:
// ${name} (not the escape $${…}); a ${…} holding more than a name counts
// each name it starts with.
func templateVariables(s string) map[string]bool {
	used := map[string]bool{}
	re := regexp.MustCompile(`\$?\$\{\s*([A-Za-z_][A-Za-z0-9_-]*)`)
	for _, sm := range re.FindAllStringSubmatch(s, -1) {
		if strings.HasPrefix(sm[0], "$$") {
			continue
		}
		used[sm[1]] = true
	}
	return used
}

func (m *module) srcOf(filename string) []byte {
	b, _ := os.ReadFile(filepath.Join(moduleDir, filename))
	return b
}

func exprText(t *testing.T, a *hclsyntax.Attribute) string {
	t.Helper()
	if a == nil {
		return "<unset>"
	}
	b, err := os.ReadFile(filepath.Join(moduleDir, a.SrcRange.Filename))
	if err != nil {
		t.Fatal(err)
	}
	return string(a.Expr.Range().SliceBytes(b))
}

func traversalText(t hcl.Traversal) string {
	var b strings.Builder
	for i, s := range t {
		switch s := s.(type) {
		case hcl.TraverseRoot:
			b.WriteString(s.Name)
		case hcl.TraverseAttr:
			if i > 0 {
				b.WriteByte('.')
			}
			b.WriteString(s.Name)
		case hcl.TraverseIndex:
			if s.Key.Type() == cty.String {
				fmt.Fprintf(&b, "[%q]", s.Key.AsString())
			} else if s.Key.Type() == cty.Number {
				fmt.Fprintf(&b, "[%s]", s.Key.AsBigFloat().String())
			}
		case hcl.TraverseSplat:
			b.WriteString("[*]")
		}
	}
	return b.String()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// terraformFunctions are Terraform's built-in functions (1.5+).
var terraformFunctions = map[string]bool{}

func init() {
	for _, f := range strings.Fields(`abs abspath alltrue anytrue base64decode base64encode base64gzip base64sha256
		base64sha512 basename bcrypt can ceil chomp chunklist cidrhost cidrnetmask cidrsubnet cidrsubnets
		coalesce coalescelist compact concat contains csvdecode dirname distinct element endswith file
		filebase64 filebase64sha256 filebase64sha512 fileexists filemd5 fileset filesha1 filesha256
		filesha512 flatten floor format formatdate formatlist indent index join jsondecode jsonencode keys
		length log lookup lower matchkeys max md5 merge min nonsensitive one parseint pathexpand plantimestamp
		pow range regex regexall replace reverse rsadecrypt sensitive setintersection setproduct setsubtract
		setunion sha1 sha256 sha512 signum slice sort split startswith strcontains strrev substr sum
		templatefile textdecodebase64 textencodebase64 timeadd timecmp timestamp title tobool tolist tomap
		tonumber toset tostring transpose trim trimprefix trimspace trimsuffix try type upper urlencode
		uuid uuidv5 values yamldecode yamlencode zipmap`) {
		terraformFunctions[f] = true
	}
}

// gcpModuleDir is the GCP example (docs/gcp.md): the watchdog as a Cloud
// Function, checked with the same parser and resolver.
const gcpModuleDir = "gcp"

// TestGCPTerraform: deploy/gcp's references resolve, the function is
// built from the package that registers its entry point, it gets every
// variable the function requires (INTERLOCK_STORE_URL and the Slack token
// from Secret Manager), and Cloud Scheduler calls it every five minutes
// with an OIDC token of an invoker.
func TestGCPTerraform(t *testing.T) {
	m := resolvedModule(t, gcpModuleDir)
	block := func(b *hclsyntax.Block, typ string) []*hclsyntax.Block {
		var out []*hclsyntax.Block
		for _, c := range b.Body.Blocks {
			if c.Type == typ {
				out = append(out, c)
			}
		}
		return out
	}
	str := func(a *hclsyntax.Attribute) string {
		if a == nil {
			return ""
		}
		v, diags := a.Expr.Value(nil)
		if diags.HasErrors() || v.Type() != cty.String {
			return ""
		}
		return v.AsString()
	}
	fn, ok := m.resources["google_cloudfunctions2_function.watchdog"]
	if !ok {
		t.Fatal("no google_cloudfunctions2_function.watchdog")
	}
	builds := block(fn, "build_config")
	services := block(fn, "service_config")
	if len(builds) != 1 || len(services) != 1 {
		t.Fatalf("the function has %d build_config and %d service_config blocks, want 1 each", len(builds), len(services))
	}
	if got := str(builds[0].Body.Attributes["entry_point"]); got != interlock.GCPEntryPoint {
		t.Errorf("entry_point %q, want %q (the module root's package)", got, interlock.GCPEntryPoint)
	}
	// Google's Go buildpack builds the package at the source's root and
	// does not read GOOGLE_FUNCTION_SOURCE: pointing it elsewhere would
	// only mislead.
	if a := builds[0].Body.Attributes["environment_variables"]; a != nil {
		if m.sureKeys(a.Expr)["GOOGLE_FUNCTION_SOURCE"] {
			t.Error("build_config sets GOOGLE_FUNCTION_SOURCE, which the Go buildpack does not read: the function is the module root's package")
		}
	}
	set := map[string]bool{}
	if a := services[0].Body.Attributes["environment_variables"]; a != nil {
		set = m.sureKeys(a.Expr)
	}
	for _, s := range block(services[0], "secret_environment_variables") {
		set[str(s.Body.Attributes["key"])] = true
	}
	for _, v := range []string{gcpfn.EnvStoreURL, gcpfn.EnvConfig, "SLACK_BOT_TOKEN"} {
		if !set[v] {
			t.Errorf("the function requires %s; the module does not set it (it sets %s)", v, strings.Join(sortedKeys(set), ", "))
		}
	}
	job, ok := m.resources["google_cloud_scheduler_job.watchdog"]
	if !ok {
		t.Fatal("no google_cloud_scheduler_job.watchdog")
	}
	if def := str(m.variables["schedule"].Body.Attributes["default"]); def != "*/5 * * * *" {
		t.Errorf("the schedule's default is %q, want every five minutes", def)
	}
	targets := block(job, "http_target")
	if len(targets) != 1 || len(block(targets[0], "oidc_token")) != 1 {
		t.Fatal("the scheduler job has no http_target with an oidc_token")
	}
	oidc := block(targets[0], "oidc_token")[0]
	invoker := "google_service_account.scheduler"
	if got := traversalText(hclsyntax.Variables(oidc.Body.Attributes["service_account_email"].Expr)[0]); !strings.HasPrefix(got, invoker) {
		t.Errorf("the OIDC token is minted for %s, want %s", got, invoker)
	}
	roles := map[string]bool{}
	for addr, r := range m.resources {
		if !strings.HasSuffix(strings.SplitN(addr, ".", 2)[0], "_iam_member") {
			continue
		}
		for _, v := range hclsyntax.Variables(r.Body.Attributes["member"].Expr) {
			if strings.HasPrefix(traversalText(v), invoker) {
				roles[str(r.Body.Attributes["role"])] = true
			}
		}
	}
	for _, r := range []string{"roles/run.invoker", "roles/cloudfunctions.invoker"} {
		if !roles[r] {
			t.Errorf("the scheduler's account lacks %s (it has %v)", r, sortedKeys(roles))
		}
	}
}
