package deploy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	ddbstore "github.com/interlockhq/interlock/internal/store/dynamodb"
	"github.com/interlockhq/interlock/internal/testenv/ddblocal"
)

// The module judged by Terraform itself: `terraform init` from a provider
// mirror (no network), `validate`, `fmt -check`, then one `plan` of a root
// holding several instances of the module — the variable combinations that
// change resources — against a loopback stand-in for the two AWS calls a
// plan makes (STS GetCallerIdentity; Step Functions'
// ValidateStateMachineDefinition, which the stand-in accepts and records),
// checked in the plan's JSON. Then `terraform apply` of one instance's
// tables against DynamoDB Local, and the store's conformance suite on the
// tables Terraform made.
//
// Skipped, saying why, without a terraform binary or a mirror of
// hashicorp/aws; INTERLOCK_REQUIRE_BACKENDS=1 makes that a failure.

func TestMain(m *testing.M) { ddblocal.Main(m) }

// EnvTerraformPluginDir names the folder holding registry.terraform.io (a
// filesystem mirror of hashicorp/aws); unset, the test looks for one.
const EnvTerraformPluginDir = "INTERLOCK_TF_PLUGIN_DIR"

// terraformTools returns the terraform binary and the plugin directory, or
// skips (fails under INTERLOCK_REQUIRE_BACKENDS=1) saying what is missing.
func terraformTools(t *testing.T) (bin, plugins string) {
	t.Helper()
	missing := func(why string) {
		if os.Getenv(ddblocal.EnvRequire) == "1" {
			t.Fatalf("%s (%s=1: a missing backend is a failure)", why, ddblocal.EnvRequire)
		}
		t.Skip(why)
	}
	bin, err := exec.LookPath("terraform")
	if err != nil {
		missing("no terraform binary on PATH: the module is not judged by Terraform")
	}
	if plugins = os.Getenv(EnvTerraformPluginDir); plugins != "" {
		if !hasAWSProvider(plugins) {
			t.Fatalf("%s=%s holds no registry.terraform.io/hashicorp/aws", EnvTerraformPluginDir, plugins)
		}
		return bin, plugins
	}
	if plugins = findPluginDir(); plugins == "" {
		missing("no provider mirror (a folder holding registry.terraform.io/hashicorp/aws within 4 levels of /; or set " + EnvTerraformPluginDir + ")")
	}
	return bin, plugins
}

func hasAWSProvider(dir string) bool {
	fi, err := os.Stat(filepath.Join(dir, "registry.terraform.io", "hashicorp", "aws"))
	return err == nil && fi.IsDir()
}

// findPluginDir looks for a directory named registry.terraform.io holding
// hashicorp/aws, at most 4 levels below the root (where machine images
// put mirrors), not descending into the kernel's or the devices' trees.
func findPluginDir() string {
	const maxDepth = 4
	found := ""
	_ = filepath.WalkDir("/", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return nil
		}
		if found != "" {
			return filepath.SkipAll
		}
		if p == "/proc" || p == "/sys" || p == "/dev" {
			return filepath.SkipDir
		}
		if d.Name() == "registry.terraform.io" && hasAWSProvider(filepath.Dir(p)) {
			found = filepath.Dir(p)
			return filepath.SkipAll
		}
		if strings.Count(p, string(os.PathSeparator)) >= maxDepth {
			return filepath.SkipDir
		}
		return nil
	})
	return found
}

// awsStandIn answers what a plan asks of AWS: GetCallerIdentity (account
// 123456789012) and ValidateStateMachineDefinition (OK, the definition
// recorded for the test to check). Anything else is a 400 the test
// reports.
type awsStandIn struct {
	*httptest.Server
	mu          sync.Mutex
	definitions []string
	unexpected  []string
}

const standInAccount = "123456789012"

func newAWSStandIn(t *testing.T) *awsStandIn {
	s := &awsStandIn{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		switch target := r.Header.Get("X-Amz-Target"); {
		case target == "AWSStepFunctions.ValidateStateMachineDefinition":
			var in struct{ Definition string }
			if err := json.Unmarshal(body, &in); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			s.mu.Lock()
			s.definitions = append(s.definitions, in.Definition)
			s.mu.Unlock()
			w.Header().Set("Content-Type", "application/x-amz-json-1.0")
			fmt.Fprint(w, `{"result":"OK","diagnostics":[]}`)
		case bytes.Contains(body, []byte("Action=GetCallerIdentity")):
			w.Header().Set("Content-Type", "text/xml")
			fmt.Fprintf(w, `<GetCallerIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><GetCallerIdentityResult>`+
				`<Arn>arn:aws:iam::%[1]s:user/terraform-test</Arn><UserId>AIDATEST</UserId><Account>%[1]s</Account>`+
				`</GetCallerIdentityResult><ResponseMetadata><RequestId>1</RequestId></ResponseMetadata></GetCallerIdentityResponse>`, standInAccount)
		default:
			s.mu.Lock()
			s.unexpected = append(s.unexpected, fmt.Sprintf("%s %s %s %.200s", r.Method, r.URL.Path, target, body))
			s.mu.Unlock()
			http.Error(w, "not stood in for", http.StatusBadRequest)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// newTFRunner runs bin with no user configuration (no network mirror, no
// plugin cache) and nothing from the caller's TF_* settings.
func newTFRunner(t *testing.T, bin string) tfRunner {
	env := slices.DeleteFunc(os.Environ(), func(kv string) bool { return strings.HasPrefix(kv, "TF_") })
	return tfRunner{t: t, bin: bin, env: append(env, "TF_CLI_CONFIG_FILE="+os.DevNull, "TF_IN_AUTOMATION=1", "TF_INPUT=0", "CHECKPOINT_DISABLE=1")}
}

// tf runs terraform in dir, offline, and returns its standard output; it
// fails the test with the command's whole output.
type tfRunner struct {
	t   *testing.T
	bin string
	env []string
}

func (r tfRunner) run(dir string, args ...string) []byte {
	r.t.Helper()
	start := time.Now()
	cmd := exec.Command(r.bin, args...)
	cmd.Dir = dir
	cmd.Env = r.env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		r.t.Fatalf("terraform %s (in %s): %v\n%s\n%s", strings.Join(args, " "), dir, err, stdout.Bytes(), stderr.Bytes())
	}
	r.t.Logf("terraform %s: %s", args[0], time.Since(start).Round(10*time.Millisecond))
	return stdout.Bytes()
}

// copyModule copies deploy/terraform and the state machine's template
// into dir/deploy (the module reads ../statemachine.asl.json), so that
// init writes nothing into the repository.
func copyModule(t *testing.T, dir string) string {
	t.Helper()
	mod := filepath.Join(dir, "deploy", "terraform")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	tfs, err := filepath.Glob(filepath.Join(moduleDir, "*.tf"))
	if err != nil || len(tfs) == 0 {
		t.Fatalf("no .tf files in %s: %v", moduleDir, err)
	}
	for _, src := range append(tfs, "statemachine.asl.json") {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(mod, filepath.Base(src))
		if filepath.Base(src) == "statemachine.asl.json" {
			dst = filepath.Join(dir, "deploy", "statemachine.asl.json")
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return mod
}

// The instances of the plan: each a variable combination that changes
// resources. Values are HCL.
var planInstances = map[string]map[string]string{
	// Nothing optional: no key, no Slack token, no job system, unreserved.
	"defaults": {},
	// Every job grant, a key made here, the Slack token from a secret, the
	// orchestrator in a VPC with job secrets and the longest timeout, the
	// dispatcher's routes with their secrets.
	"everything": {
		"create_kms_key":                     `true`,
		"slack_secret_arn":                   `"arn:aws:secretsmanager:us-east-1:123456789012:secret:slack-AbCdEf"`,
		"enable_glue_trigger":                `true`,
		"glue_job_arns":                      `["arn:aws:glue:us-east-1:123456789012:job/sales"]`,
		"enable_emr_trigger":                 `true`,
		"emr_cluster_arns":                   `["arn:aws:elasticmapreduce:us-east-1:123456789012:cluster/j-1"]`,
		"enable_emr_serverless_trigger":      `true`,
		"emr_serverless_app_arns":            `["arn:aws:emr-serverless:us-east-1:123456789012:/applications/a1"]`,
		"emr_serverless_execution_role_arns": `["arn:aws:iam::123456789012:role/emr-job"]`,
		"enable_sfn_trigger":                 `true`,
		"sfn_trigger_arns":                   `["arn:aws:states:us-east-1:123456789012:stateMachine:etl"]`,
		"enable_lambda_trigger":              `true`,
		"lambda_trigger_arns":                `["arn:aws:lambda:us-east-1:123456789012:function:load"]`,
		"vpc_subnet_ids":                     `["subnet-1", "subnet-2"]`,
		"vpc_security_group_ids":             `["sg-1"]`,
		"job_secrets":                        `{DB_PASSWORD = "arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf", API_KEY = "arn:aws:ssm:us-east-1:123456789012:parameter/etl/api-key"}`,
		"alerts_config":                      `"alerts:\n  - {type: slack, channel: C0OPS, tokenEnv: OPS_SLACK_TOKEN}\n"`,
		"alert_secrets":                      `{OPS_SLACK_TOKEN = "arn:aws:secretsmanager:us-east-1:123456789012:secret:ops-slack-AbCdEf", HOOK_SECRET = "arn:aws:ssm:us-east-1:123456789012:parameter/alerts/hook"}`,
		"env_allow":                          `["REGION"]`,
		"orchestrator_timeout_seconds":       `900`,
		"lambda_concurrency":                 `{"alert-dispatcher" = 3, orchestrator = 10}`,
		"enable_api_function":                `true`,
		"api_tokens_secret_arn":              `"arn:aws:secretsmanager:us-east-1:123456789012:secret:api-tokens-AbCdEf"`,
		"create_dashboard":                   `true`,
		"telemetry_environment":              `{OTEL_EXPORTER_OTLP_ENDPOINT = "http://localhost:4318", OTEL_SERVICE_NAME = "interlock-prod"}`,
		"telemetry_layers":                   `["arn:aws:lambda:us-east-1:901920570463:layer:aws-otel-collector-arm64-ver-0-117-0:1"]`,
	},
	// A key brought, the Slack token as plain text.
	"brought": {
		"kms_key_arn":     `"arn:aws:kms:us-east-1:123456789012:key/11111111-2222-3333-4444-555555555555"`,
		"slack_bot_token": `"xoxb-test"`,
	},
	// The tables applied to DynamoDB Local (provider aws.ddblocal).
	"tables": {
		"point_in_time_recovery": `false`,
		"deletion_protection":    `false`,
	},
}

// tablesEnvironment is the environment of the "tables" instance: unique
// to the test run, since every test process shares one DynamoDB Local.
var tablesEnvironment string

// instanceEnvironment is an instance's environment (its prefix, without
// "-interlock").
func instanceEnvironment(name string) string {
	if name == "tables" && tablesEnvironment != "" {
		return tablesEnvironment
	}
	return "tf" + name
}

// writeRoot writes the root of the plan holding the instances named (of
// planInstances); extra adds variables (HCL) to instances. Without a
// DynamoDB endpoint there is no provider aws.ddblocal (nor may the
// "tables" instance be named).
func writeRoot(t *testing.T, dir, standIn, dynamo string, instances []string, extra map[string]map[string]string) {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "terraform {\n  required_providers {\n    aws = { source = \"hashicorp/aws\" }\n  }\n}\n")
	provider := func(alias string, endpoints map[string]string) {
		fmt.Fprintf(&b, "provider \"aws\" {\n")
		if alias != "" {
			fmt.Fprintf(&b, "  alias = %q\n", alias)
		}
		fmt.Fprintf(&b, "  region = \"us-east-1\"\n  access_key = \"test\"\n  secret_key = \"test\"\n")
		fmt.Fprintf(&b, "  skip_credentials_validation = true\n  skip_requesting_account_id = true\n  skip_metadata_api_check = true\n  skip_region_validation = true\n")
		fmt.Fprintf(&b, "  endpoints {\n")
		for _, k := range sortedKeys(endpoints) {
			fmt.Fprintf(&b, "    %s = %q\n", k, endpoints[k])
		}
		fmt.Fprintf(&b, "  }\n}\n")
	}
	provider("", map[string]string{"sts": standIn, "sfn": standIn})
	if dynamo != "" {
		provider("ddblocal", map[string]string{"sts": standIn, "sfn": standIn, "dynamodb": dynamo})
	}
	for _, name := range instances {
		fmt.Fprintf(&b, "module %q {\n  source = \"../deploy/terraform\"\n", name)
		if name == "tables" {
			fmt.Fprintf(&b, "  providers = { aws = aws.ddblocal }\n")
		}
		fmt.Fprintf(&b, "  environment = %q\n  dist_path = \"../dist\"\n  slack_channel_id = \"C0123\"\n", instanceEnvironment(name))
		vars := map[string]string{}
		for _, m := range []map[string]string{planInstances[name], extra[name]} {
			for k, v := range m {
				vars[k] = v
			}
		}
		for _, k := range sortedKeys(vars) {
			fmt.Fprintf(&b, "  %s = %s\n", k, vars[k])
		}
		fmt.Fprintf(&b, "}\n")
		fmt.Fprintf(&b, "output %q {\n  value = module.%s.function_permissions\n}\n", name+"_permissions", name)
	}
	root := filepath.Join(dir, "root")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "main.tf"), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	// A package per function (the plan hashes them; their content is not read).
	dist := filepath.Join(dir, "dist")
	if err := os.MkdirAll(dist, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, fn := range lambdaFunctions(t) {
		if err := os.WriteFile(filepath.Join(dist, fn+".zip"), []byte("not a zip: "+fn), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestTerraformModule(t *testing.T) {
	t.Parallel() // beside the package's other builds and terraform runs
	if testing.Short() {
		t.Skip("runs terraform init, validate, plan and apply (~60 s)")
	}
	bin, plugins := terraformTools(t)
	dynamo := ddblocal.Endpoint(t)
	tablesEnvironment = ddblocal.Prefix(t)
	tables := ddbstore.TablesFor(tablesEnvironment + "-interlock")
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := ddbstore.DeleteTables(ctx, ddblocal.NewClient(dynamo), tables); err != nil {
			t.Logf("delete the tables Terraform made: %v", err)
		}
	})
	begin := time.Now()
	dir := t.TempDir()
	tf := newTFRunner(t, bin)
	mod := copyModule(t, dir)
	standIn := newAWSStandIn(t)
	// The tables instance loads a pipeline at apply with the interlock
	// binary (config_loader.tf: deploy-config, with the orchestrator's
	// timeout), against DynamoDB Local.
	cli, pipelines := buildInterlock(t, dir), filepath.Join(dir, "pipelines")
	if err := os.MkdirAll(pipelines, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(pipelines, "sales.yaml"), []byte(loadedPipeline), 0o644); err != nil {
		t.Fatal(err)
	}
	// And the project's interlock.yaml: its alerts: and maintenance:
	// become the deployment's stored alert config.
	settings := filepath.Join(dir, "interlock.yaml")
	if err := os.WriteFile(settings, []byte(loadedSettings), 0o644); err != nil {
		t.Fatal(err)
	}
	writeRoot(t, dir, standIn.URL, dynamo, sortedKeys(planInstances), map[string]map[string]string{
		"tables": {"pipelines_path": fmt.Sprintf("%q", pipelines), "settings_path": fmt.Sprintf("%q", settings), "interlock_cli": fmt.Sprintf("%q", cli)},
	})
	tf.env = append(tf.env, "AWS_ENDPOINT_URL_DYNAMODB="+dynamo, "AWS_ACCESS_KEY_ID=test", "AWS_SECRET_ACCESS_KEY=test",
		"AWS_REGION=us-east-1", "AWS_EC2_METADATA_DISABLED=true") // for the local-exec's deploy-config
	root := filepath.Join(dir, "root")

	// The module alone: init from the mirror, validate, formatting.
	tf.run(mod, "init", "-backend=false", "-input=false", "-no-color", "-plugin-dir="+plugins)
	tf.run(mod, "validate", "-no-color")
	abs, err := filepath.Abs(moduleDir)
	if err != nil {
		t.Fatal(err)
	}
	tf.run(abs, "fmt", "-check", "-recursive", "-diff", "-no-color") // the repository's files, not the copy

	// One plan of every instance.
	tf.run(root, "init", "-backend=false", "-input=false", "-no-color", "-plugin-dir="+plugins)
	tf.run(root, "plan", "-input=false", "-no-color", "-refresh=false", "-out=plan.bin")
	var plan tfPlan
	if err := json.Unmarshal(tf.run(root, "show", "-json", "plan.bin"), &plan); err != nil {
		t.Fatalf("terraform show -json: %v", err)
	}
	standIn.mu.Lock()
	unexpected, definitions := standIn.unexpected, standIn.definitions
	standIn.mu.Unlock()
	if len(unexpected) > 0 {
		t.Errorf("the plan called AWS beyond the stand-in's two calls:\n%s", strings.Join(unexpected, "\n"))
	}
	checkPlan(t, plan, definitions)

	// The tables, made by Terraform on DynamoDB Local, pass the store's
	// conformance suite.
	tf.run(root, "apply", "-auto-approve", "-input=false", "-no-color", "-target=module.tables.aws_dynamodb_table.table", "-target=module.tables.terraform_data.config")
	st, err := ddbstore.Open(t.Context(), ddbstore.Config{Client: ddblocal.NewClient(dynamo), Tables: tables})
	if err != nil {
		t.Fatal(err)
	}
	if p, err := st.PipelineGet(t.Context(), "sales"); err != nil {
		t.Fatalf("the pipeline deploy-config loaded at apply: %v", err)
	} else {
		t.Logf("deploy-config loaded %s at apply", p.ID)
	}
	if rec, err := st.AlertConfigGet(t.Context()); err != nil || rec.Version != 1 || !strings.Contains(rec.YAML, "C0OPS") || !strings.Contains(rec.YAML, "nightly") {
		t.Errorf("the alert config deploy-config stored at apply: %+v (%v), want v1 with the route and the window", rec, err)
	}
	conformanceOnTables(t, dynamo, instanceEnvironment("tables")+"-interlock")
	t.Logf("the whole test: %s", time.Since(begin).Round(100*time.Millisecond))
}

// loadedSettings is the interlock.yaml config_loader.tf gives deploy-config
// (settings_path).
const loadedSettings = `
alerts:
  - {type: slack, channel: C0OPS, tokenEnv: OPS_SLACK_TOKEN}
maintenance:
  - {name: nightly, cron: "0 2 * * *", duration: 1h, pipelines: ["*"]}
`

// loadedPipeline is what config_loader.tf loads at apply.
const loadedPipeline = `
pipeline: {id: sales}
schedule: {cron: "0 6 * * *"}
validation: {rules: [{key: landed, check: exists}]}
job: {type: glue, config: {jobName: sales}}
`

// buildInterlock builds the CLI the module's config loader runs.
func buildInterlock(t *testing.T, dir string) string {
	t.Helper()
	start := time.Now()
	bin := filepath.Join(dir, "interlock")
	cmd := exec.Command("go", "build", "-ldflags=-s -w", "-o", bin, "./cmd/interlock")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/interlock: %v\n%s", err, out)
	}
	t.Logf("go build ./cmd/interlock: %s", time.Since(start).Round(10*time.Millisecond))
	return bin
}

// conformanceNotOnTables are the storetest groups the Terraform test
// leaves to the store's own TestConformance.
var conformanceNotOnTables = []string{"Commit", "Races", "Leases", "Checks", "Facts", "ConditionFacts"}

// conformanceOnTables runs internal/store/dynamodb's conformance suite on
// the tables of prefix (TestConformanceOnTables: it opens the store on
// existing tables and creates none).
func conformanceOnTables(t *testing.T, endpoint, prefix string) {
	t.Helper()
	start := time.Now()
	// Not the groups that prove the store's code rather than the tables
	// (transactions and their conditions, concurrency, leases, facts
	// derived from reads): the store's own TestConformance runs them, and
	// they are the slowest on a loaded machine. The others write and read
	// every kind of record through every index and the TTL attribute.
	cmd := exec.Command("go", "test", "-tags=terraformtables", "-count=1", "-timeout=8m", "-failfast", "-run=^TestConformanceOnTables$",
		"-skip=^TestConformanceOnTables/("+strings.Join(conformanceNotOnTables, "|")+")$", "./internal/store/dynamodb/")
	cmd.Dir = ".."
	cmd.Env = append(os.Environ(), ddblocal.EnvEndpoint+"="+endpoint, "INTERLOCK_TEST_DYNAMODB_TABLES="+prefix)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the store's conformance suite on the tables Terraform made (%s): %v\n%s", prefix, err, out)
	}
	if !bytes.Contains(out, []byte("ok")) || bytes.Contains(out, []byte("no tests to run")) {
		t.Fatalf("the conformance suite did not run on %s:\n%s", prefix, out)
	}
	t.Logf("conformance suite on the Terraform tables: %s", time.Since(start).Round(10*time.Millisecond))
}
