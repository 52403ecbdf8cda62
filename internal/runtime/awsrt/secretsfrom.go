package awsrt

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"
)

// EnvSecretsFrom lists the orchestrator's job secrets, "NAME=ARN,…": each
// NAME is set, for the job templates' ${env:NAME}, to the value of a
// Secrets Manager secret (its secret string) or of an SSM parameter (a
// SecureString decrypted), read once at the function's start. The module
// sets it from var.job_secrets (and adds each NAME to ENV_ALLOW).
const EnvSecretsFrom = "SECRETS_FROM"

// SecretSource is one entry of SECRETS_FROM.
type SecretSource struct {
	Name string // the environment variable
	ARN  string // arn:…:secretsmanager:…:secret:… or arn:…:ssm:…:parameter/…
}

var (
	envName   = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	secretARN = regexp.MustCompile(`^arn:[a-z-]+:(secretsmanager|ssm):[a-z0-9-]+:[0-9]{12}:(secret:.+|parameter/.+)$`)
)

// service is the ARN's service: "secretsmanager" or "ssm".
func (s SecretSource) service() string { return strings.Split(s.ARN, ":")[2] }

// ParseSecretsFrom reads SECRETS_FROM; an entry that is not NAME=ARN of a
// secret or a parameter, or a NAME given twice, is an error naming it.
func ParseSecretsFrom(v string) ([]SecretSource, error) {
	var out []SecretSource
	seen := map[string]bool{}
	for _, entry := range listVar(v) {
		name, arn, ok := strings.Cut(entry, "=")
		name, arn = strings.TrimSpace(name), strings.TrimSpace(arn)
		m := secretARN.FindStringSubmatch(arn)
		switch {
		case !ok || !envName.MatchString(name):
			return nil, fmt.Errorf("%s: entry %q: want NAME=ARN with NAME an environment variable name", EnvSecretsFrom, entry)
		case m == nil || (m[1] == "ssm") != strings.HasPrefix(m[2], "parameter/"):
			return nil, fmt.Errorf("%s: %s: %q is neither a Secrets Manager secret ARN nor an SSM parameter ARN", EnvSecretsFrom, name, arn)
		case seen[name]:
			return nil, fmt.Errorf("%s: %s is given twice", EnvSecretsFrom, name)
		}
		seen[name] = true
		out = append(out, SecretSource{Name: name, ARN: arn})
	}
	return out, nil
}

// SecretReader reads job secrets from Secrets Manager and SSM.
type SecretReader struct {
	SecretsManager *secretsmanager.Client
	SSM            *ssm.Client
}

// NewSecretReader reads with the function's AWS configuration.
func NewSecretReader(cfg aws.Config) SecretReader {
	return SecretReader{SecretsManager: secretsmanager.NewFromConfig(cfg), SSM: ssm.NewFromConfig(cfg)}
}

// Read returns each source's value by NAME. An error names the variable
// and the ARN, never a value; a secret without a secret string (binary)
// or an empty value is an error, as a job would otherwise run with "".
func (r SecretReader) Read(ctx context.Context, sources []SecretSource) (map[string]string, error) {
	values := map[string]string{}
	var errs []error
	for _, s := range sources {
		var v *string
		var err error
		switch s.service() {
		case "secretsmanager":
			var out *secretsmanager.GetSecretValueOutput
			if out, err = r.SecretsManager.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(s.ARN)}); err == nil {
				v = out.SecretString
			}
		case "ssm":
			var out *ssm.GetParameterOutput
			if out, err = r.SSM.GetParameter(ctx, &ssm.GetParameterInput{Name: aws.String(s.ARN), WithDecryption: aws.Bool(true)}); err == nil && out.Parameter != nil {
				v = out.Parameter.Value
			}
		}
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("%s: %s: read %s: %w", EnvSecretsFrom, s.Name, s.ARN, err))
		case aws.ToString(v) == "":
			errs = append(errs, fmt.Errorf("%s: %s: %s holds no value (an empty or binary secret)", EnvSecretsFrom, s.Name, s.ARN))
		default:
			values[s.Name] = *v
		}
	}
	return values, errors.Join(errs...)
}

// WithSecrets is env with SECRETS_FROM read: the secrets' values first,
// then env's own variables. No SECRETS_FROM: env itself.
func WithSecrets(ctx context.Context, env Env, r SecretReader) (Env, error) {
	sources, err := ParseSecretsFrom(env.Get(EnvSecretsFrom))
	if err != nil || len(sources) == 0 {
		return env, err
	}
	values, err := r.Read(ctx, sources)
	if err != nil {
		return env, err
	}
	lookup := env.lookupFunc()
	return Env{Lookup: func(k string) (string, bool) {
		if v, ok := values[k]; ok {
			return v, true
		}
		return lookup(k)
	}}, nil
}
