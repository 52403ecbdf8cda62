package awsrt

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
	"github.com/aws/aws-sdk-go-v2/service/ssm"

	"github.com/interlockhq/interlock/internal/runtime/awsrt/awsfake"
)

// TestParseSecretsFrom: NAME=ARN of a secret or a parameter, comma
// separated; anything else is refused naming the entry.
func TestParseSecretsFrom(t *testing.T) {
	const sm, param = "arn:aws:secretsmanager:us-east-1:123456789012:secret:db-AbCdEf", "arn:aws:ssm:us-east-1:123456789012:parameter/etl/key"
	got, err := ParseSecretsFrom(" DB=" + sm + " , API_KEY=" + param + ",")
	if err != nil || len(got) != 2 || got[0] != (SecretSource{"DB", sm}) || got[1] != (SecretSource{"API_KEY", param}) {
		t.Fatalf("got %+v, %v", got, err)
	}
	if got, err := ParseSecretsFrom(""); err != nil || len(got) != 0 {
		t.Fatalf("empty: %+v, %v", got, err)
	}
	for entry, want := range map[string]string{
		"DB":                     `entry "DB"`,
		"1DB=" + sm:              `entry "1DB=`,
		"DB=arn:aws:s3:::bucket": `DB: "arn:aws:s3:::bucket" is neither`,
		"DB=arn:aws:ssm:us-east-1:123456789012:document/x":             "is neither",
		"DB=arn:aws:secretsmanager:us-east-1:123456789012:parameter/x": "is neither",
		"DB=" + sm + ",DB=" + param:                                    "DB is given twice",
	} {
		if _, err := ParseSecretsFrom(entry); err == nil || !strings.Contains(err.Error(), want) || !strings.HasPrefix(err.Error(), EnvSecretsFrom+": ") {
			t.Errorf("%s: %v, want an error with %q", entry, err, want)
		}
	}
}

// TestWithSecrets: SECRETS_FROM's values, read through the SDK from
// Secrets Manager and SSM (a SecureString decrypted), come before the
// environment's own; a missing or empty one fails the start, naming the
// variable and the ARN, never a value.
func TestWithSecrets(t *testing.T) {
	sm, ps := awsfake.NewSecretsManager(t), awsfake.NewSSM(t)
	reader := SecretReader{SecretsManager: secretsmanager.NewFromConfig(awsfake.Config(sm.URL)), SSM: ssm.NewFromConfig(awsfake.Config(ps.URL))}
	db := sm.Put("db", "s3cr3t-db")
	key := ps.Put("/etl/api-key", "s3cr3t-key", true)
	region := ps.Put("/etl/region", "eu-west-1", false)
	env := EnvOf(map[string]string{
		EnvSecretsFrom: "DB_PASSWORD=" + db + ",API_KEY=" + key + ",REGION=" + region,
		"DB_PASSWORD":  "from the environment", "OTHER": "kept",
	})
	got, err := WithSecrets(t.Context(), env, reader)
	if err != nil {
		t.Fatal(err)
	}
	for k, want := range map[string]string{"DB_PASSWORD": "s3cr3t-db", "API_KEY": "s3cr3t-key", "REGION": "eu-west-1", "OTHER": "kept"} {
		if v, ok := got.Lookup(k); !ok || v != want {
			t.Errorf("%s = %q (%v), want %q", k, v, ok, want)
		}
	}
	if sm.Reads() != 1 || ps.Reads() != 2 {
		t.Errorf("reads: Secrets Manager %d, SSM %d; want 1 and 2 (once per start)", sm.Reads(), ps.Reads())
	}
	// No SECRETS_FROM: the environment as it is, nothing read.
	if got, err := WithSecrets(t.Context(), EnvOf(map[string]string{"X": "1"}), reader); err != nil || got.Get("X") != "1" || sm.Reads() != 1 {
		t.Fatalf("without SECRETS_FROM: %v", err)
	}
	// A missing secret and an empty parameter: both named, no value leaked.
	ps.Put("/etl/empty", "", false)
	bad := EnvOf(map[string]string{EnvSecretsFrom: "GONE=" + strings.Replace(db, "db-", "gone-", 1) + ",EMPTY=" + ps.Put("/etl/empty", "", false) + ",DB_PASSWORD=" + db})
	_, err = WithSecrets(t.Context(), bad, reader)
	if err == nil || !strings.Contains(err.Error(), "SECRETS_FROM: GONE: read arn:aws:secretsmanager") || !strings.Contains(err.Error(), "SECRETS_FROM: EMPTY: ") || strings.Contains(err.Error(), "s3cr3t") {
		t.Fatalf("bad secrets: %v", err)
	}
}
