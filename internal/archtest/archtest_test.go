package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"sort"
	"strings"
	"testing"
)

const module = "github.com/interlockhq/interlock"

// layer is a set of packages and the layers they may import (their own
// always: packages of one layer may import each other).
type layer struct {
	name     string
	packages []string // paths below the module; "x/..." is x and everything under it
	may      []string // the lower layers it may import
}

// layers is the picture of docs/architecture.md. Lower layers come first.
var layers = []layer{
	{"base", []string{"internal/sensor", "internal/duration", "internal/textsafe", "internal/clock", "internal/confdec", "internal/eventid",
		"internal/emf", "internal/store/pgurl", "internal/store/sqlmigrate", "internal/secret/secrettest", "internal/seen"}, nil},
	{"core", []string{"internal/event", "internal/rule", "internal/schedule", "internal/silence", "internal/pipeline",
		"internal/run", "internal/sla", "internal/backfill", "internal/deps", "internal/board", "internal/pause",
		"internal/dryrun", "internal/needs", "internal/run/runtest", "internal/secret", "internal/apitoken", "internal/scenario", "internal/lineage",
		"internal/watchdog", "internal/store/record"}, []string{"base"}},
	// The ports: the store, the job trigger, alert delivery, leases.
	{"ports", []string{"internal/store", "internal/trigger", "internal/alert", "internal/lease"},
		[]string{"base", "core"}},
	// The pure decision: facts in, outcome out (decisionRules).
	{"decide", []string{"internal/decide"}, []string{"base", "core", "ports"}},
	{"engine", []string{"internal/engine"}, []string{"base", "core", "ports", "decide"}},
	// The adapters implement a port; their test kits drive them. Neither
	// knows the engine.
	{"adapters", []string{"internal/store/sqlite", "internal/store/postgres", "internal/store/dynamodb",
		"internal/store/storetest", "internal/store/sqlstore", "internal/trigger/...", "internal/alert/...", "internal/telemetry/..."}, []string{"base", "core", "ports"}},
	// The kits that drive a real engine on a real store.
	{"engine kits", []string{"internal/engine/enginetest", "internal/engine/enginebench"},
		[]string{"base", "core", "ports", "decide", "engine", "adapters"}},
	{"app", []string{"internal/app/..."}, []string{"base", "core", "ports", "decide", "engine", "adapters"}},
	{"runtimes", []string{"internal/runtime/...", "internal/simulate"},
		[]string{"base", "core", "ports", "decide", "engine", "adapters", "app"}},
	{"cli", []string{"internal/project", "internal/cli/..."},
		[]string{"base", "core", "ports", "decide", "engine", "adapters", "app", "runtimes"}},
	{"cmd", []string{"", "cmd/...", "deploy/..."},
		[]string{"base", "core", "ports", "decide", "engine", "adapters", "app", "runtimes", "cli"}},
	// Test support: imported by tests only (the check below).
	{"test support", []string{"internal/testenv/...", "internal/e2e/...", "internal/runtime/awsrt/e2e", "internal/archtest"}, []string{"base", "test support"}},
}

// pureLayers may not link a database driver or the AWS SDK, even
// indirectly (go list's Deps).
var pureLayers = []string{"base", "core", "ports", "decide", "engine"}

// decisionPorts are the only ports the decide layer may import: the
// store's record types. With no context imported (decisionRules) it can
// call no port: a decision reads the facts it is given and returns its
// outcome.
var decisionPorts = []string{"internal/store"}

// decisionRules are the decide layer's own: no context, and of the ports
// only decisionPorts.
func decisionRules(path string, p pkg) []string {
	var out []string
	for _, imp := range p.Imports {
		switch to, ok := layerOf(rel(imp)); {
		case imp == "context":
			out = append(out, fmt.Sprintf("%s (decide) imports context: a decision calls no port", path))
		case inModule(imp) && ok && to.name == "ports" && !slices.Contains(decisionPorts, rel(imp)):
			out = append(out, fmt.Sprintf("%s (decide) imports the port %s: a decision reads its facts, it calls no port", path, rel(imp)))
		}
	}
	return out
}

var drivers = []string{"github.com/jackc/pgx", "modernc.org/sqlite", "github.com/aws/aws-sdk-go-v2"}

// adapterHelpers are the packages of the adapters' layer that are not
// adapters: the shared row model, the protocol helpers and the test kits.
// Every other package of that layer is a concrete adapter (a store, a job
// type, a sink), which only the app builds.
var adapterHelpers = []string{"internal/store/storetest", "internal/store/sqlstore",
	"internal/trigger/httpx", "internal/trigger/httpx/httpxtest", "internal/trigger/triggertest", "internal/trigger/awsjob/awstest",
	"internal/alert/alerthttp", "internal/alert/alerttest", "internal/alert/slack/slacktest",
	"internal/telemetry/tracehttp"}

func isAdapter(path string) bool {
	l, ok := layerOf(path)
	return ok && l.name == "adapters" && !slices.Contains(adapterHelpers, path)
}

// adapterImporters may import an adapter besides the app: an adapter's own
// family and test kits, the engine kits, and the exceptions with a reason.
var adapterImporters = map[string]string{
	"internal/engine/enginetest":  "drives a real engine on SQLite",
	"internal/engine/enginebench": "measures a real engine on SQLite",
	// The AWS runtime's functions read the tables' stream records, whose
	// item types and decoder are the DynamoDB store's; the store itself
	// is opened by app.OpenDynamoDBTables.
	"internal/runtime/awsrt": "decodes the DynamoDB store's stream records",
	// The simulator's virtual job system is the simulator's own.
	"internal/simulate": "plays scenarios on simjob, its virtual job system",
}

type pkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
	Standard   bool
}

func listPackages(t *testing.T) map[string]pkg {
	t.Helper()
	cmd := exec.Command("go", "list", "-json=ImportPath,Imports,Deps,Standard", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	pkgs := map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list output: %v", err)
		}
		pkgs[rel(p.ImportPath)] = p
	}
	if len(pkgs) < 50 {
		t.Fatalf("go list listed %d packages; want the whole module", len(pkgs))
	}
	return pkgs
}

// rel is path below the module ("" for the module's root package).
func rel(path string) string {
	if path == module {
		return ""
	}
	return strings.TrimPrefix(path, module+"/")
}

func inModule(path string) bool { return path == module || strings.HasPrefix(path, module+"/") }

// matches reports whether path is pattern, or under it for "x/...", and
// how specific the match is.
func matches(pattern, path string) (int, bool) {
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		if path == base || strings.HasPrefix(path, base+"/") {
			return len(base), true
		}
		return 0, false
	}
	return len(pattern) + 1, pattern == path
}

// layerOf is the layer of the most specific pattern that matches path.
func layerOf(path string) (layer, bool) {
	best, found := -1, layer{}
	for _, l := range layers {
		for _, p := range l.packages {
			if n, ok := matches(p, path); ok && n > best {
				best, found = n, l
			}
		}
	}
	return found, best >= 0
}

func allowed(from layer, to string) bool { return from.name == to || slices.Contains(from.may, to) }

// violations are the layering's broken rules in pkgs, one line each.
func violations(pkgs map[string]pkg) []string {
	var out []string
	for path, p := range pkgs {
		from, ok := layerOf(path)
		if !ok {
			out = append(out, fmt.Sprintf("%s has no layer: give it one in internal/archtest", path))
			continue
		}
		if from.name == "decide" {
			out = append(out, decisionRules(path, p)...)
		}
		for _, imp := range p.Imports {
			if !inModule(imp) {
				continue
			}
			to, ok := layerOf(rel(imp))
			switch {
			case !ok:
				continue // reported as a package without a layer
			case to.name == "test support" && from.name != "test support":
				out = append(out, fmt.Sprintf("%s (%s) imports %s: test support is for tests only", path, from.name, rel(imp)))
			case !allowed(from, to.name):
				out = append(out, fmt.Sprintf("%s (%s) imports %s (%s): an arrow pointing up", path, from.name, rel(imp), to.name))
			case isAdapter(rel(imp)) && !buildsAdapters(path, rel(imp)):
				out = append(out, fmt.Sprintf("%s imports the adapter %s: only internal/app builds adapters", path, rel(imp)))
			}
		}
		if slices.Contains(pureLayers, from.name) {
			for _, drv := range drivers {
				if i := slices.IndexFunc(p.Deps, func(d string) bool { return d == drv || strings.HasPrefix(d, drv+"/") }); i >= 0 {
					out = append(out, fmt.Sprintf("%s (%s) links %s: no driver or SDK below the adapters", path, from.name, p.Deps[i]))
				}
			}
		}
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// buildsAdapters reports whether importer may import the adapter: the
// app, the adapter's own family (emr → awsjob; a kit under trigger/ or
// alert/), or a listed exception.
func buildsAdapters(importer, adapter string) bool {
	if _, ok := matches("internal/app/...", importer); ok {
		return true
	}
	if _, ok := adapterImporters[importer]; ok {
		return true
	}
	for _, family := range []string{"internal/trigger/", "internal/alert/", "internal/store/"} {
		if strings.HasPrefix(importer, family) && strings.HasPrefix(adapter, family) {
			return true
		}
	}
	return false
}

func TestLayering(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Fatalf("the go command is needed to list the imports: %v", err)
	}
	for _, v := range violations(listPackages(t)) {
		t.Error(v)
	}
}

// TestLayeringCatches: the check itself fails on each kind of arrow it
// forbids, on a made-up graph.
func TestLayeringCatches(t *testing.T) {
	m := func(p string) string { return module + "/" + p }
	good := map[string]pkg{
		"internal/run":          {Imports: []string{m("internal/sensor"), "time"}},
		"internal/sensor":       {},
		"internal/engine":       {Imports: []string{m("internal/run"), m("internal/store"), m("internal/decide"), "context"}},
		"internal/decide":       {Imports: []string{m("internal/run"), m("internal/store"), "time"}},
		"internal/store":        {Imports: []string{m("internal/run")}},
		"internal/store/sqlite": {Imports: []string{m("internal/store")}, Deps: []string{"modernc.org/sqlite"}},
		"internal/app":          {Imports: []string{m("internal/store/sqlite"), m("internal/engine")}},
		"internal/cli":          {Imports: []string{m("internal/app")}},
	}
	if v := violations(good); len(v) != 0 {
		t.Fatalf("a good graph fails: %v", v)
	}
	for name, c := range map[string]struct {
		path string
		p    pkg
		want string
	}{
		"core imports the engine":         {"internal/run", pkg{Imports: []string{m("internal/engine")}}, "pointing up"},
		"a kit imports the engine":        {"internal/trigger/triggertest", pkg{Imports: []string{m("internal/engine")}}, "pointing up"},
		"the core links a driver":         {"internal/pipeline", pkg{Deps: []string{"github.com/jackc/pgx/v5/pgxpool"}}, "links github.com/jackc/pgx"},
		"the engine links the SDK":        {"internal/engine", pkg{Deps: []string{"github.com/aws/aws-sdk-go-v2/aws"}}, "no driver"},
		"the CLI builds a store":          {"internal/cli", pkg{Imports: []string{m("internal/store/sqlite")}}, "only internal/app builds adapters"},
		"a runtime builds a sink":         {"internal/runtime/local", pkg{Imports: []string{m("internal/alert/slack")}}, "only internal/app builds adapters"},
		"a new sink built by the CLI":     {"internal/cli", pkg{Imports: []string{m("internal/alert/pager")}}, "only internal/app builds adapters"},
		"a package without a layer":       {"internal/misc", pkg{}, "has no layer"},
		"code imports test support":       {"internal/app", pkg{Imports: []string{m("internal/testenv/ddblocal")}}, "tests only"},
		"a store imports the engine":      {"internal/store/postgres", pkg{Imports: []string{m("internal/engine")}}, "pointing up"},
		"the decision imports context":    {"internal/decide", pkg{Imports: []string{m("internal/run"), "context"}}, "imports context"},
		"the decision calls a job":        {"internal/decide", pkg{Imports: []string{m("internal/trigger")}}, "imports the port internal/trigger"},
		"the decision imports the engine": {"internal/decide", pkg{Imports: []string{m("internal/engine")}}, "pointing up"},
	} {
		t.Run(name, func(t *testing.T) {
			g := map[string]pkg{}
			for k, v := range good {
				g[k] = v
			}
			g[c.path] = c.p
			got := strings.Join(violations(g), "\n")
			if !strings.Contains(got, c.want) {
				t.Errorf("violations = %q, want one about %q", got, c.want)
			}
		})
	}
}

// TestProjectDoesNotImportTheAPI: validate checks tokens and alert routes
// as serve does, through apitoken and app/routing, not the HTTP API.
func TestProjectDoesNotImportTheAPI(t *testing.T) {
	p := listPackages(t)["internal/project"]
	for _, d := range p.Deps {
		if strings.HasPrefix(d, module+"/internal/runtime/") {
			t.Errorf("internal/project links %s", rel(d))
		}
	}
}
