package deploy

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/interlockhq/interlock/internal/event"
	"github.com/interlockhq/interlock/internal/runtime/awsrt"
)

// tfPlan is what the test reads of `terraform show -json`.
type tfPlan struct {
	ResourceChanges []tfResourceChange        `json:"resource_changes"`
	OutputChanges   map[string]tfOutputChange `json:"output_changes"`
}

type tfResourceChange struct {
	Address         string          `json:"address"`
	PreviousAddress string          `json:"previous_address"` // a moved object's address in the prior state
	ModuleAddress   string          `json:"module_address"`
	Mode            string          `json:"mode"` // managed, data
	Type            string          `json:"type"`
	Name            string          `json:"name"`
	Index           json.RawMessage `json:"index"` // the for_each key or count index; absent for neither
	ProviderName    string          `json:"provider_name"`
	Change          struct {
		Actions      []string        `json:"actions"`
		Before       json.RawMessage `json:"before"`
		After        json.RawMessage `json:"after"`
		AfterUnknown json.RawMessage `json:"after_unknown"`
		// AfterSensitive marks the values that are sensitive (true), as
		// after_unknown does the unknown ones.
		AfterSensitive json.RawMessage `json:"after_sensitive"`
	} `json:"change"`
}

type tfOutputChange struct {
	After json.RawMessage `json:"after"`
}

// planOf reads one module instance's resources out of the plan.
type planOf struct {
	t        *testing.T
	instance string
	byAddr   map[string]tfResourceChange
	perms    map[string][]tfStatement
}

type tfStatement struct {
	Sid        string   `json:"sid"`
	Actions    []string `json:"actions"`
	Resources  []string `json:"resources"` // null where known only at apply
	Conditions []struct {
		Test     string   `json:"test"`
		Variable string   `json:"variable"`
		Values   []string `json:"values"`
	} `json:"conditions"`
}

func newPlanOf(t *testing.T, plan tfPlan, instance string) planOf {
	t.Helper()
	p := planOf{t: t, instance: instance, byAddr: map[string]tfResourceChange{}}
	prefix := "module." + instance + "."
	for _, rc := range plan.ResourceChanges {
		if strings.HasPrefix(rc.Address, prefix) {
			p.byAddr[strings.TrimPrefix(rc.Address, prefix)] = rc
		}
	}
	out, ok := plan.OutputChanges[instance+"_permissions"]
	if !ok {
		t.Fatalf("the plan has no output %s_permissions", instance)
	}
	if err := json.Unmarshal(out.After, &p.perms); err != nil || len(p.perms) == 0 {
		t.Fatalf("%s: function_permissions is not known at plan (%v): %s", instance, err, out.After)
	}
	return p
}

// after decodes a resource's planned values into v; false when the plan
// has no such resource.
func (p planOf) after(addr string, v any) bool {
	p.t.Helper()
	rc, ok := p.byAddr[addr]
	if !ok {
		return false
	}
	if err := json.Unmarshal(rc.Change.After, v); err != nil {
		p.t.Fatalf("%s.%s: %v", p.instance, addr, err)
	}
	return true
}

func (p planOf) must(addr string, v any) {
	p.t.Helper()
	if !p.after(addr, v) {
		p.t.Fatalf("%s: the plan has no %s", p.instance, addr)
	}
}

// unknown reports whether a top-level attribute is known only at apply
// (after_unknown), e.g. an ARN of a resource the plan creates.
func (p planOf) unknown(addr string, path ...any) bool {
	var v any
	if err := json.Unmarshal(p.byAddr[addr].Change.AfterUnknown, &v); err != nil {
		return false
	}
	for _, k := range path {
		switch k := k.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return false
			}
			v = l[k]
		}
	}
	return v == true
}

// statements returns a function's statements holding action.
func (p planOf) statements(fn, action string) []tfStatement {
	var out []tfStatement
	for _, st := range p.perms[fn] {
		if slices.Contains(st.Actions, action) {
			out = append(out, st)
		}
	}
	return out
}

func (st tfStatement) condition(variable string) []string {
	for _, c := range st.Conditions {
		if c.Variable == variable {
			return c.Values
		}
	}
	return nil
}

type lambdaFn struct {
	Timeout     int      `json:"timeout"`
	Layers      []string `json:"layers"`
	Reserved    int      `json:"reserved_concurrent_executions"`
	Environment []struct {
		Variables map[string]string `json:"variables"`
	} `json:"environment"`
	VPC []struct {
		SubnetIDs        []string `json:"subnet_ids"`
		SecurityGroupIDs []string `json:"security_group_ids"`
	} `json:"vpc_config"`
}

func (f lambdaFn) env() map[string]string {
	if len(f.Environment) == 0 {
		return nil
	}
	return f.Environment[0].Variables
}

type esm struct {
	Retries   *int  `json:"maximum_retry_attempts"`
	RecordAge *int  `json:"maximum_record_age_in_seconds"`
	Bisect    *bool `json:"bisect_batch_on_function_error"`
	Scaling   []struct {
		MaximumConcurrency int `json:"maximum_concurrency"`
	} `json:"scaling_config"`
	Destination []struct {
		OnFailure []struct{} `json:"on_failure"`
	} `json:"destination_config"`
}

type alarm struct {
	Namespace  string            `json:"namespace"`
	Metric     string            `json:"metric_name"`
	Dimensions map[string]string `json:"dimensions"`
}

// checkPlan checks, in every instance's planned values, what issue 24
// requires of the module (items 2, 3 and 8).
func checkPlan(t *testing.T, plan tfPlan, validated []string) {
	t.Helper()
	fns := lambdaFunctions(t)
	if len(validated) != len(planInstances) {
		t.Errorf("Step Functions was asked to validate %d definitions, want one per instance (%d)", len(validated), len(planInstances))
	}
	for _, name := range sortedKeys(planInstances) {
		t.Run(name, func(t *testing.T) {
			p := newPlanOf(t, plan, name)
			vars := planInstances[name]
			env := instanceEnvironment(name)

			// The functions: unreserved unless listed; the orchestrator's
			// timeout and VPC; the execution interface (issue 24, rt).
			var orch lambdaFn
			p.must(`aws_lambda_function.fn["orchestrator"]`, &orch)
			wantTimeout := 300
			if v, ok := vars["orchestrator_timeout_seconds"]; ok {
				fmt.Sscan(v, &wantTimeout)
			}
			if orch.Timeout != wantTimeout {
				t.Errorf("the orchestrator's timeout is %d s, want %d", orch.Timeout, wantTimeout)
			}
			if _, vpc := vars["vpc_subnet_ids"]; vpc != (len(orch.VPC) == 1 && len(orch.VPC[0].SubnetIDs) > 0 && len(orch.VPC[0].SecurityGroupIDs) > 0) {
				t.Errorf("the orchestrator's vpc_config is %+v; VPC variables set: %v", orch.VPC, vpc)
			}
			checkAPIFunction(t, p, vars, env)
			for _, fn := range fns {
				if fn == awsrt.FnAPI && vars["enable_api_function"] != "true" {
					continue // opt-in: checkAPIFunction
				}
				var f lambdaFn
				p.must(fmt.Sprintf("aws_lambda_function.fn[%q]", fn), &f)
				if _, listed := vars["lambda_concurrency"]; !listed && f.Reserved != -1 {
					t.Errorf("%s reserves %d executions by default, want unreserved (-1)", fn, f.Reserved)
				}
				if fn != "orchestrator" && len(f.VPC) > 0 {
					t.Errorf("%s runs in a VPC; only the orchestrator does", fn)
				}
				// Traces (docs/telemetry.md): telemetry_environment and
				// telemetry_layers reach every function, and nothing of
				// them without.
				_, traced := vars["telemetry_environment"]
				if got := f.env()["OTEL_EXPORTER_OTLP_ENDPOINT"]; traced != (got == "http://localhost:4318") {
					t.Errorf("%s: OTEL_EXPORTER_OTLP_ENDPOINT %q; telemetry_environment set: %v", fn, got, traced)
				}
				if _, layered := vars["telemetry_layers"]; layered != (len(f.Layers) == 1) {
					t.Errorf("%s: layers %v; telemetry_layers set: %v", fn, f.Layers, layered)
				}
			}
			for _, fn := range []string{"orchestrator", "watchdog", "stream-router"} {
				var f lambdaFn
				p.must(fmt.Sprintf("aws_lambda_function.fn[%q]", fn), &f)
				want := fmt.Sprintf("arn:aws:states:us-east-1:%s:stateMachine:%s-interlock-pipeline", standInAccount, env)
				if got := f.env()["STATE_MACHINE_ARN"]; got != want {
					t.Errorf("%s's STATE_MACHINE_ARN is %q, want %q", fn, got, want)
				}
			}
			// The run's state machine and its executions, each in one
			// statement of its own (a job's state machines are others).
			machine := fmt.Sprintf("arn:aws:states:us-east-1:%s:stateMachine:%s-interlock-pipeline", standInAccount, env)
			executions := fmt.Sprintf("arn:aws:states:us-east-1:%s:execution:%s-interlock-pipeline:*", standInAccount, env)
			for _, fn := range []string{"orchestrator", "watchdog"} {
				for action, want := range map[string]string{"states:StartExecution": machine, "states:DescribeExecution": executions, "states:StopExecution": executions} {
					var on []tfStatement
					for _, st := range p.statements(fn, action) {
						if slices.ContainsFunc(st.Resources, func(r string) bool { return strings.Contains(r, env+"-interlock-pipeline") }) {
							on = append(on, st)
						}
					}
					if len(on) != 1 || !slices.Equal(on[0].Resources, []string{want}) {
						t.Errorf("%s's %s on the run's state machine: %+v, want one statement on %s alone", fn, action, on, want)
					}
				}
			}

			// The event path: the publisher retries until the record
			// expires; the others give up after 3, to their DLQ.
			for _, m := range []string{"router-control", "router-joblog", "sla-timers", "publisher-event"} {
				var e esm
				addr := fmt.Sprintf("aws_lambda_event_source_mapping.stream[%q]", m)
				p.must(addr, &e)
				wantRetries := 3
				if m == "publisher-event" {
					wantRetries = -1
				}
				if e.Retries == nil || *e.Retries != wantRetries || e.RecordAge == nil || *e.RecordAge != -1 || e.Bisect == nil || !*e.Bisect {
					t.Errorf("%s: retries %v, record age %v, bisect %v; want %d, -1, true", m, deref(e.Retries), deref(e.RecordAge), deref(e.Bisect), wantRetries)
				}
				if len(e.Destination) != 1 || len(e.Destination[0].OnFailure) != 1 || !p.unknown(addr, "destination_config", 0, "on_failure", 0, "destination_arn") {
					t.Errorf("%s: no on-failure destination (its DLQ)", m)
				}
			}
			// The alert queue's mapping never invokes the dispatcher more
			// often than it may run.
			var alerts esm
			p.must(`aws_lambda_event_source_mapping.read["alerts"]`, &alerts)
			var disp lambdaFn
			p.must(`aws_lambda_function.fn["alert-dispatcher"]`, &disp)
			switch {
			case len(alerts.Scaling) != 1:
				t.Errorf("the alert mapping has no maximum_concurrency")
			case alerts.Scaling[0].MaximumConcurrency < 2:
				t.Errorf("the alert mapping's maximum_concurrency is %d: AWS's minimum is 2", alerts.Scaling[0].MaximumConcurrency)
			case disp.Reserved >= 0 && alerts.Scaling[0].MaximumConcurrency > disp.Reserved:
				t.Errorf("the alert mapping's maximum_concurrency %d exceeds the dispatcher's reserved concurrency %d: throttled receives drain alerts into the DLQ", alerts.Scaling[0].MaximumConcurrency, disp.Reserved)
			}
			// Every Interlock event reaches the alert queue: the dispatcher
			// routes by the stored alert config, whose routes may ask for any
			// type or level (a narrower pattern would drop them unseen).
			var alertRule struct {
				Pattern string `json:"event_pattern"`
			}
			p.must(`aws_cloudwatch_event_rule.route["alert-events"]`, &alertRule)
			if alertRule.Pattern != `{"source":["interlock"]}` {
				t.Errorf("the alert rule's pattern is %s, want every Interlock event", alertRule.Pattern)
			}
			// The queues a function reads: visibility at least six times its
			// timeout, and at least 5 receives before the DLQ (AWS's guidance).
			var sla lambdaFn
			p.must(`aws_lambda_function.fn["sla-monitor"]`, &sla)
			for q, reader := range map[string]lambdaFn{"alerts": disp, "sla-dlq": sla} {
				var queue struct {
					Visibility int    `json:"visibility_timeout_seconds"`
					Redrive    string `json:"redrive_policy"`
				}
				p.must(fmt.Sprintf("aws_sqs_queue.read[%q]", q), &queue)
				var redrive struct {
					MaxReceiveCount int    `json:"maxReceiveCount"`
					Target          string `json:"deadLetterTargetArn"`
				}
				if err := json.Unmarshal([]byte(queue.Redrive), &redrive); err != nil {
					t.Errorf("%s's redrive policy %q: %v", q, queue.Redrive, err)
				}
				if queue.Visibility < 6*reader.Timeout || redrive.MaxReceiveCount < 5 || !strings.HasPrefix(redrive.Target, "arn:aws:sqs:us-east-1:"+standInAccount+":"+env+"-interlock-") {
					t.Errorf("the %s queue: visibility %d s (its reader's timeout %d s), redrive %+v; want ≥ 6× the timeout, ≥ 5 receives, a DLQ of the module", q, queue.Visibility, reader.Timeout, redrive)
				}
			}
			// The sla-monitor's asynchronous invocations (Scheduler's) end
			// in the SLA DLQ, which its replay mapping reads.
			var invoke struct {
				Retries     int `json:"maximum_retry_attempts"`
				Destination []struct {
					OnFailure []struct{} `json:"on_failure"`
				} `json:"destination_config"`
			}
			addr := `aws_lambda_function_event_invoke_config.async["sla-monitor"]`
			p.must(addr, &invoke)
			if len(invoke.Destination) != 1 || len(invoke.Destination[0].OnFailure) != 1 || !p.unknown(addr, "destination_config", 0, "on_failure", 0, "destination") {
				t.Errorf("the sla-monitor's async invocations have no on-failure destination: %+v", invoke)
			}
			var replay esm
			p.must(`aws_lambda_event_source_mapping.read["sla-dlq"]`, &replay)
			var slaDLQ struct {
				Name string `json:"name"`
			}
			p.must(`aws_sqs_queue.read["sla-dlq"]`, &slaDLQ)
			if got, want := sla.env()["SLA_DLQ_ARN"], fmt.Sprintf("arn:aws:sqs:us-east-1:%s:%s", standInAccount, slaDLQ.Name); got != want || slaDLQ.Name == "" {
				t.Errorf("the sla-monitor's SLA_DLQ_ARN is %q, want the SLA DLQ's ARN %q", got, want)
			}
			if st := p.statements("sla-monitor", "sqs:ReceiveMessage"); len(st) != 1 {
				t.Errorf("the sla-monitor may not read the SLA DLQ: %+v", st)
			}

			// Every alarm watches a dimension its metric is published with.
			allowed := map[string][]string{"AWS/Lambda": {"FunctionName"}, "AWS/SQS": {"QueueName"}, "AWS/States": {"StateMachineArn"}, awsrt.MetricsNamespace: {"Environment"}}
			ours := map[string]bool{}
			iteratorAge := map[string]bool{}
			queues := map[string]bool{}
			for a := range p.byAddr {
				if !strings.HasPrefix(a, "aws_cloudwatch_metric_alarm.alarm[") {
					continue
				}
				var al alarm
				p.must(a, &al)
				if len(al.Dimensions) != 1 || !slices.Contains(allowed[al.Namespace], sortedKeys(al.Dimensions)[0]) {
					t.Errorf("%s watches %s %s by %v: not a dimension %s publishes it with (%v)", a, al.Namespace, al.Metric, al.Dimensions, al.Namespace, allowed[al.Namespace])
				}
				if al.Namespace == awsrt.MetricsNamespace {
					if !knownMetric(al.Metric) || al.Dimensions["Environment"] != env {
						t.Errorf("%s watches %s by %v: not a metric the functions write, or not this environment's", a, al.Metric, al.Dimensions)
					}
					ours[al.Metric] = true
				}
				if al.Metric == "IteratorAge" {
					iteratorAge[al.Dimensions["FunctionName"]] = true
				}
				if al.Namespace == "AWS/SQS" {
					queues[al.Dimensions["QueueName"]] = true
				}
			}
			for _, m := range []string{"AlertsDeadLettered", "WATCHDOG_DEGRADED"} {
				if !ours[m] {
					t.Errorf("no alarm on the functions' metric %s (alarms on %v)", m, sortedKeys(ours))
				}
			}
			checkMetrics(t, p, env, fns, vars)
			for _, fn := range []string{"stream-router", "sla-monitor", "event-publisher"} {
				if !iteratorAge[env+"-interlock-"+fn] {
					t.Errorf("no iterator-age alarm on %s (alarms on %v)", fn, sortedKeys(iteratorAge))
				}
			}
			for _, q := range []string{"sla-dlq", "sla-dlq-final", "alert-dlq", "async-dlq"} {
				if !queues[env+"-interlock-"+q] {
					t.Errorf("no alarm on the queue %s (alarms on %v)", q, sortedKeys(queues))
				}
			}

			// IAM.
			for fn, sts := range p.perms {
				for _, st := range sts {
					if slices.Contains(st.Actions, "logs:FilterLogEvents") {
						t.Errorf("%s may logs:FilterLogEvents: no code calls it", fn)
					}
					if slices.Contains(st.Actions, "iam:PassRole") && len(st.condition("iam:PassedToService")) == 0 {
						t.Errorf("%s may iam:PassRole %v to any service", fn, st.Resources)
					}
				}
			}
			pass := p.statements("orchestrator", "iam:PassRole")
			if _, emr := vars["enable_emr_serverless_trigger"]; emr {
				if len(pass) != 1 || !slices.Equal(pass[0].Resources, []string{"arn:aws:iam::123456789012:role/emr-job"}) || !slices.Equal(pass[0].condition("iam:PassedToService"), []string{"emr-serverless.amazonaws.com"}) {
					t.Errorf("the orchestrator's iam:PassRole for EMR Serverless: %+v", pass)
				}
			} else if len(pass) > 0 {
				t.Errorf("the orchestrator may iam:PassRole without EMR Serverless: %+v", pass)
			}
			checkSecretGrants(t, p, vars)
			checkKeyGrants(t, p, vars)

			// Tables: point-in-time recovery as asked.
			var table struct {
				PITR []struct {
					Enabled bool `json:"enabled"`
				} `json:"point_in_time_recovery"`
			}
			p.must(`aws_dynamodb_table.table["control"]`, &table)
			if want := vars["point_in_time_recovery"] != "false"; len(table.PITR) != 1 || table.PITR[0].Enabled != want {
				t.Errorf("point-in-time recovery is %+v, want %v", table.PITR, want)
			}

			// The state machine: every Task times out before the
			// orchestrator would be killed.
			var sm struct {
				Definition string `json:"definition"`
			}
			p.must("aws_sfn_state_machine.pipeline", &sm)
			checkTaskTimeouts(t, sm.Definition, wantTimeout)
		})
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

// checkSecretGrants: the Slack secret and the job secrets are readable,
// and decryptable through their service for themselves alone.
func checkSecretGrants(t *testing.T, p planOf, vars map[string]string) {
	t.Helper()
	viaService := func(fn, service, contextKey, arn string) {
		for _, st := range p.statements(fn, "kms:Decrypt") {
			if slices.Equal(st.condition("kms:ViaService"), []string{service + ".us-east-1.amazonaws.com"}) && slices.Contains(st.condition(contextKey), arn) {
				return
			}
		}
		t.Errorf("%s may not decrypt %s through %s: %+v", fn, arn, service, p.statements(fn, "kms:Decrypt"))
	}
	var slack []tfStatement
	for _, st := range p.statements("alert-dispatcher", "secretsmanager:GetSecretValue") {
		if st.Sid != "AlertSecrets" {
			slack = append(slack, st)
		}
	}
	if v, ok := vars["slack_secret_arn"]; ok {
		arn := strings.Trim(v, `"`)
		if len(slack) != 1 || !slices.Equal(slack[0].Resources, []string{arn}) {
			t.Errorf("the dispatcher's secretsmanager:GetSecretValue: %+v, want %s alone", slack, arn)
		}
		viaService("alert-dispatcher", "secretsmanager", "kms:EncryptionContext:SecretARN", arn)
	} else if len(slack) > 0 {
		t.Errorf("the dispatcher may read secrets without slack_secret_arn: %+v", slack)
	}
	checkAlertSecrets(t, p, vars, viaService)
	var orch lambdaFn
	p.must(`aws_lambda_function.fn["orchestrator"]`, &orch)
	if _, ok := vars["job_secrets"]; !ok {
		if orch.env()["SECRETS_FROM"] != "" || len(p.statements("orchestrator", "secretsmanager:GetSecretValue")) > 0 || len(p.statements("orchestrator", "ssm:GetParameter")) > 0 {
			t.Errorf("the orchestrator reads secrets without job_secrets")
		}
		return
	}
	db, key := "arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf", "arn:aws:ssm:us-east-1:123456789012:parameter/etl/api-key"
	if got, want := orch.env()["SECRETS_FROM"], "API_KEY="+key+",DB_PASSWORD="+db; got != want {
		t.Errorf("the orchestrator's SECRETS_FROM is %q, want %q", got, want)
	}
	if got := orch.env()["ENV_ALLOW"]; got != "REGION,API_KEY,DB_PASSWORD" {
		t.Errorf("the orchestrator's ENV_ALLOW is %q, want env_allow then the secrets' names", got)
	}
	if st := p.statements("orchestrator", "secretsmanager:GetSecretValue"); len(st) != 1 || !slices.Equal(st[0].Resources, []string{db}) {
		t.Errorf("the orchestrator's secretsmanager:GetSecretValue: %+v, want %s alone", st, db)
	}
	if st := p.statements("orchestrator", "ssm:GetParameter"); len(st) != 1 || !slices.Equal(st[0].Resources, []string{key}) {
		t.Errorf("the orchestrator's ssm:GetParameter: %+v, want %s alone", st, key)
	}
	viaService("orchestrator", "secretsmanager", "kms:EncryptionContext:SecretARN", db)
	viaService("orchestrator", "ssm", "kms:EncryptionContext:PARAMETER_ARN", key)
}

// checkAlertSecrets: alerts_config is the dispatcher's ALERTS_CONFIG,
// alert_secrets its SECRETS_FROM, each readable (and decryptable through
// its service) alone.
func checkAlertSecrets(t *testing.T, p planOf, vars map[string]string, viaService func(fn, service, contextKey, arn string)) {
	t.Helper()
	var d lambdaFn
	p.must(`aws_lambda_function.fn["alert-dispatcher"]`, &d)
	if _, ok := vars["alerts_config"]; !ok {
		if d.env()["ALERTS_CONFIG"] != "" {
			t.Errorf("the dispatcher has ALERTS_CONFIG without alerts_config")
		}
	} else {
		// The dispatcher's routes; the windows of every engine that fires timers.
		for _, fn := range []string{"alert-dispatcher", "sla-monitor", "watchdog", "stream-router"} {
			var f lambdaFn
			p.must(`aws_lambda_function.fn["`+fn+`"]`, &f)
			if got := f.env()["ALERTS_CONFIG"]; !strings.Contains(got, "channel: C0OPS, tokenEnv: OPS_SLACK_TOKEN") {
				t.Errorf("the %s's ALERTS_CONFIG is %q", fn, got)
			}
		}
	}
	if _, ok := vars["alert_secrets"]; !ok {
		if d.env()["SECRETS_FROM"] != "" || len(p.statements("alert-dispatcher", "ssm:GetParameter")) > 0 {
			t.Errorf("the dispatcher reads secrets without alert_secrets")
		}
		return
	}
	ops, hook := "arn:aws:secretsmanager:us-east-1:123456789012:secret:ops-slack-AbCdEf", "arn:aws:ssm:us-east-1:123456789012:parameter/alerts/hook"
	if got, want := d.env()["SECRETS_FROM"], "HOOK_SECRET="+hook+",OPS_SLACK_TOKEN="+ops; got != want {
		t.Errorf("the dispatcher's SECRETS_FROM is %q, want %q", got, want)
	}
	var sm []tfStatement
	for _, st := range p.statements("alert-dispatcher", "secretsmanager:GetSecretValue") {
		if st.Sid == "AlertSecrets" {
			sm = append(sm, st)
		}
	}
	if len(sm) != 1 || !slices.Equal(sm[0].Resources, []string{ops}) {
		t.Errorf("the dispatcher's AlertSecrets: %+v, want %s alone", sm, ops)
	}
	if st := p.statements("alert-dispatcher", "ssm:GetParameter"); len(st) != 1 || !slices.Equal(st[0].Resources, []string{hook}) {
		t.Errorf("the dispatcher's ssm:GetParameter: %+v, want %s alone", st, hook)
	}
	viaService("alert-dispatcher", "secretsmanager", "kms:EncryptionContext:SecretARN", ops)
	viaService("alert-dispatcher", "ssm", "kms:EncryptionContext:PARAMETER_ARN", hook)
}

// checkKeyGrants: the tables' key, when there is one, to the functions
// and the Scheduler role (which sends to the encrypted SLA DLQ).
func checkKeyGrants(t *testing.T, p planOf, vars map[string]string) {
	t.Helper()
	_, made := vars["create_kms_key"]
	brought, has := vars["kms_key_arn"]
	has = has || made
	for fn, sts := range p.perms {
		n := 0
		for _, st := range sts {
			if st.Sid == "Key" {
				n++
				if has && !made && !slices.Equal(st.Resources, []string{strings.Trim(brought, `"`)}) {
					t.Errorf("%s's key statement is on %v, want the key brought", fn, st.Resources)
				}
			}
		}
		if has != (n == 1) {
			t.Errorf("%s has %d key statements; a key: %v", fn, n, has)
		}
	}
	if _, ok := p.byAddr["aws_kms_key.this[0]"]; ok != made {
		t.Errorf("a key is created: %v; create_kms_key: %v", ok, made)
	}
}

// checkTaskTimeouts: every Task of the definition has TimeoutSeconds
// below the orchestrator's timeout.
func checkTaskTimeouts(t *testing.T, definition string, orchestratorTimeout int) {
	t.Helper()
	var asl struct {
		States map[string]struct {
			Type           string `json:"Type"`
			TimeoutSeconds *int   `json:"TimeoutSeconds"`
		} `json:"States"`
	}
	if err := json.Unmarshal([]byte(definition), &asl); err != nil {
		t.Fatalf("the state machine's definition is not JSON: %v", err)
	}
	tasks := 0
	for name, st := range asl.States {
		if st.Type != "Task" {
			continue
		}
		tasks++
		switch {
		case st.TimeoutSeconds == nil:
			t.Errorf("Task %s has no TimeoutSeconds", name)
		case *st.TimeoutSeconds >= orchestratorTimeout:
			t.Errorf("Task %s times out after %d s, not before the orchestrator's %d s", name, *st.TimeoutSeconds, orchestratorTimeout)
		}
	}
	if tasks == 0 {
		t.Errorf("the state machine has no Task")
	}
}

// checkAPIFunction: the api function is deployed only with
// enable_api_function, then behind a function URL whose auth is AWS_IAM
// (Lambda refuses unsigned requests), with its token secret in its
// environment and readable by its role alone.
func checkAPIFunction(t *testing.T, p planOf, vars map[string]string, env string) {
	t.Helper()
	var f lambdaFn
	deployed := p.after(`aws_lambda_function.fn["api"]`, &f)
	var url struct {
		AuthType   string `json:"authorization_type"`
		InvokeMode string `json:"invoke_mode"`
	}
	hasURL := p.after("aws_lambda_function_url.api[0]", &url)
	if vars["enable_api_function"] != "true" {
		if deployed || hasURL || p.perms["api"] != nil {
			t.Errorf("the api function is deployed (%v), has a URL (%v) or a role (%v) without enable_api_function", deployed, hasURL, p.perms["api"] != nil)
		}
		return
	}
	if !deployed || !hasURL {
		t.Fatalf("enable_api_function: function planned %v, URL planned %v", deployed, hasURL)
	}
	if url.AuthType != "AWS_IAM" || url.InvokeMode != "BUFFERED" {
		t.Errorf("the api function's URL: auth %q, mode %q; want AWS_IAM (unsigned requests refused by Lambda), BUFFERED", url.AuthType, url.InvokeMode)
	}
	secret := strings.Trim(vars["api_tokens_secret_arn"], `"`)
	if got := f.env()[awsrt.EnvAPITokensSecretARN]; got != secret {
		t.Errorf("the api function's %s is %q, want %q", awsrt.EnvAPITokensSecretARN, got, secret)
	}
	if got := f.env()[awsrt.EnvControlTable]; got != env+"-interlock-control" {
		t.Errorf("the api function's %s is %q", awsrt.EnvControlTable, got)
	}
	reads := p.statements("api", "secretsmanager:GetSecretValue")
	if len(reads) != 1 || !slices.Equal(reads[0].Resources, []string{secret}) {
		t.Errorf("the api function's secret reads: %+v, want one on %s alone", reads, secret)
	}
	for fn := range p.perms {
		if fn == "api" {
			continue
		}
		for _, st := range p.statements(fn, "secretsmanager:GetSecretValue") {
			if slices.Contains(st.Resources, secret) {
				t.Errorf("%s may read the API tokens", fn)
			}
		}
	}
}

// knownMetric reports whether the functions write a metric of that name
// (their own, or an event type's).
func knownMetric(name string) bool {
	if _, ok := event.Lookup(event.Type(name)); ok {
		return true
	}
	return slices.Contains(awsrt.MetricNames(), name)
}

// checkMetrics: every function that writes metrics names its
// environment (their Environment dimension); the dashboard exists only when asked for, and
// each of its graphs of the functions' metrics names one they write, in
// this environment.
func checkMetrics(t *testing.T, p planOf, env string, fns []string, vars map[string]string) {
	t.Helper()
	for _, fn := range fns {
		if !slices.Contains(awsrt.MeteredFunctions(), fn) {
			continue
		}
		var f lambdaFn
		p.must(fmt.Sprintf("aws_lambda_function.fn[%q]", fn), &f)
		if got := f.env()[awsrt.EnvEnvironment]; got != env {
			t.Errorf("%s's %s is %q, want %q", fn, awsrt.EnvEnvironment, got, env)
		}
	}
	const addr = "aws_cloudwatch_dashboard.this[0]"
	_, made := p.byAddr[addr]
	if made != (vars["create_dashboard"] == "true") {
		t.Fatalf("dashboard made: %v, create_dashboard %q", made, vars["create_dashboard"])
	}
	if !made {
		return
	}
	var dash struct {
		Body string `json:"dashboard_body"`
	}
	p.must(addr, &dash)
	var body struct {
		Widgets []struct {
			Properties struct {
				Metrics [][]string `json:"metrics"`
			} `json:"properties"`
		} `json:"widgets"`
	}
	if err := json.Unmarshal([]byte(dash.Body), &body); err != nil {
		t.Fatalf("dashboard body: %v", err)
	}
	n := 0
	for _, w := range body.Widgets {
		for _, m := range w.Properties.Metrics {
			if len(m) < 2 || m[0] != awsrt.MetricsNamespace {
				continue
			}
			n++
			if !knownMetric(m[1]) || len(m) != 4 || m[2] != "Environment" || m[3] != env {
				t.Errorf("the dashboard graphs %v: not a metric the functions write by Environment %s", m, env)
			}
		}
	}
	if n == 0 {
		t.Error("the dashboard graphs none of the functions' metrics")
	}
}
