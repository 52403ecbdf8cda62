package pipeline

// JobType names what kind of job a pipeline triggers (job.type).
type JobType string

// The job types (reference §6).
const (
	JobHTTP          JobType = "http"
	JobCommand       JobType = "command"
	JobAirflow       JobType = "airflow"
	JobGlue          JobType = "glue"
	JobEMR           JobType = "emr"
	JobEMRServerless JobType = "emr-serverless"
	JobStepFunction  JobType = "step-function"
	JobDatabricks    JobType = "databricks"
	JobLambda        JobType = "lambda"
)

// JobTypes lists every job type.
func JobTypes() []JobType {
	return []JobType{JobHTTP, JobCommand, JobAirflow, JobGlue, JobEMR, JobEMRServerless, JobStepFunction, JobDatabricks, JobLambda}
}

// ConfigKind is the kind of value a job.config field holds. Every string
// in job.config may use template variables (${DATE}, ${env:NAME}, …).
type ConfigKind uint8

// The config field kinds.
const (
	// KindString is a string (a number is taken as written: jobId: 42).
	KindString ConfigKind = iota + 1
	// KindURL is an absolute http or https URL with a host.
	KindURL
	// KindJSON is a string that is JSON once variables are replaced.
	KindJSON
	// KindArgs is a command: a string split on white space, or a list of
	// arguments. It is never given to a shell (product spec §3 item 11).
	KindArgs
	// KindStringMap is a mapping of names to strings.
	KindStringMap
	// KindHeaders is a KindStringMap of HTTP headers. A header that
	// carries a secret (Authorization, *token*, *secret*, …) must take it
	// from ${env:NAME}; a literal value is refused.
	KindHeaders
	// KindEnv is a KindStringMap whose names are environment variable
	// names, for the command's environment.
	KindEnv
	// KindDuration is a duration ("30s", "5m"), greater than 0, at most 24h.
	KindDuration
	// KindMethod is an HTTP method, case-insensitive, stored upper-case.
	KindMethod
)

// ConfigField describes one job.config field of one job type.
type ConfigField struct {
	Name     string
	Kind     ConfigKind
	Required bool
	Doc      string
}

// HTTPMethods are the methods an http job may use.
var HTTPMethods = []string{"GET", "POST", "PUT", "PATCH", "DELETE"}

// jobSchemas is the table each job type's config is checked against: a
// key that is not listed is an error, a required one must be present.
// Names are the reference's JSON names (§6), matched exactly.
var jobSchemas = map[JobType][]ConfigField{
	JobHTTP: {
		{Name: "url", Kind: KindURL, Required: true, Doc: "URL to call"},
		{Name: "method", Kind: KindMethod, Doc: "HTTP method, default POST"},
		{Name: "headers", Kind: KindHeaders, Doc: "request headers"},
		{Name: "body", Kind: KindString, Doc: "request body"},
		{Name: "timeout", Kind: KindDuration, Doc: "request timeout, default 30s"},
	},
	JobCommand: {
		{Name: "command", Kind: KindArgs, Required: true, Doc: "program and arguments, run without a shell"},
		{Name: "env", Kind: KindEnv, Doc: "extra environment variables"},
		{Name: "dir", Kind: KindString, Doc: "working directory"},
		{Name: "timeout", Kind: KindDuration, Doc: "kill the command after this long"},
	},
	JobAirflow: {
		{Name: "url", Kind: KindURL, Required: true, Doc: "Airflow base URL"},
		{Name: "dagId", Kind: KindString, Required: true, Doc: "DAG to run"},
		{Name: "headers", Kind: KindHeaders, Doc: "request headers (sent on status polls too)"},
		{Name: "body", Kind: KindJSON, Doc: "JSON sent as the DAG run's conf"},
		{Name: "timeout", Kind: KindDuration, Doc: "request timeout, default 30s"},
	},
	JobGlue: withAWS(
		ConfigField{Name: "jobName", Kind: KindString, Required: true, Doc: "Glue job name"},
		ConfigField{Name: "arguments", Kind: KindStringMap, Doc: "job arguments; --par_day (YYYYMMDD) and, for hourly periods, --par_hour (HH) are added unless set here"},
	),
	JobEMR: withAWS(
		ConfigField{Name: "clusterId", Kind: KindString, Required: true, Doc: "EMR cluster id"},
		ConfigField{Name: "stepName", Kind: KindString, Required: true, Doc: "step name"},
		ConfigField{Name: "command", Kind: KindString, Required: true, Doc: "JAR to run"},
		ConfigField{Name: "arguments", Kind: KindStringMap, Doc: "step arguments, passed as k=v in key order"},
	),
	JobEMRServerless: withAWS(
		ConfigField{Name: "applicationId", Kind: KindString, Required: true, Doc: "EMR Serverless application id"},
		ConfigField{Name: "jobName", Kind: KindString, Required: true, Doc: "job run name"},
		ConfigField{Name: "executionRoleArn", Kind: KindString, Required: true, Doc: "IAM role the job runs as (the API requires one)"},
		ConfigField{Name: "entryPoint", Kind: KindString, Required: true, Doc: "Spark entry point: the S3 URI of the script or JAR"},
		ConfigField{Name: "arguments", Kind: KindStringMap, Doc: "entry point arguments, passed as k=v in key order"},
		ConfigField{Name: "sparkSubmitParameters", Kind: KindString, Doc: "spark-submit options, e.g. --conf spark.executor.cores=2"},
	),
	JobStepFunction: withAWS(
		ConfigField{Name: "stateMachineArn", Kind: KindString, Required: true, Doc: "state machine ARN"},
		ConfigField{Name: "arguments", Kind: KindStringMap, Doc: "execution input, sent as a JSON object"},
	),
	JobDatabricks: {
		{Name: "workspaceUrl", Kind: KindURL, Required: true, Doc: "workspace URL"},
		{Name: "jobId", Kind: KindString, Required: true, Doc: "job id"},
		{Name: "headers", Kind: KindHeaders, Doc: "request headers, e.g. Authorization: Bearer ${env:INTERLOCK_DATABRICKS_TOKEN}"},
		{Name: "arguments", Kind: KindStringMap, Doc: "notebook parameters"},
	},
	JobLambda: withAWS(
		ConfigField{Name: "functionName", Kind: KindString, Required: true, Doc: "function name or ARN"},
		ConfigField{Name: "payload", Kind: KindJSON, Doc: "JSON payload, default {}"},
		ConfigField{Name: "timeout", Kind: KindDuration, Doc: "the function's own timeout: the call waits this long plus 10s for the answer; default 15m, Lambda's limit"},
	),
}

// awsFields are the fields every AWS job type accepts besides its own.
var awsFields = []ConfigField{
	{Name: "region", Kind: KindString, Doc: "AWS region; default: the region the job started in (polls), the resource ARN's region, then AWS_REGION or the profile's"},
	{Name: "endpoint", Kind: KindURL, Doc: "service endpoint URL (e.g. a VPC endpoint); default: AWS_ENDPOINT_URL_<SERVICE>, AWS_ENDPOINT_URL, then the region's public endpoint"},
}

func withAWS(fs ...ConfigField) []ConfigField { return append(fs, awsFields...) }

// JobSchema returns the config fields of job type t, and whether t is a
// known job type.
func JobSchema(t JobType) ([]ConfigField, bool) {
	fs, ok := jobSchemas[t]
	return fs, ok
}
