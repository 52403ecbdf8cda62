package awsfake

import (
	"strings"
	"testing"
)

// SecretsManager is a fake of Secrets Manager's GetSecretValue (AWS JSON
// 1.1, target secretsmanager.GetSecretValue): secrets by name or ARN,
// ResourceNotFoundException for any other, and a count of the reads
// (Reads) so a test can see a secret is read once per cold start. A
// failure answer echoes nothing of a secret.
type SecretsManager struct {
	*named[string]
}

// NewSecretsManager starts a fake holding no secret; it is closed when the
// test ends.
func NewSecretsManager(t testing.TB) *SecretsManager {
	return &SecretsManager{serveNamed(t, "secretsmanager", "GetSecretValue", getSecretValue)}
}

// Put stores a secret string under name and returns its ARN.
func (f *SecretsManager) Put(name, value string) string {
	f.put(name, value)
	return secretARN(name)
}

func secretARN(name string) string {
	return "arn:aws:secretsmanager:" + Region + ":" + Account + ":secret:" + name + "-AbCdEf"
}

func getSecretValue(secrets map[string]string, in struct {
	SecretID string `json:"SecretId"`
}) (any, *apiError) {
	name := in.SecretID
	for n := range secrets {
		if in.SecretID == secretARN(n) {
			name = n
		}
	}
	v, ok := secrets[name]
	if !ok || strings.HasPrefix(in.SecretID, "arn:") && in.SecretID != secretARN(name) {
		return nil, &apiError{code: "ResourceNotFoundException", msg: "Secrets Manager can't find the specified secret."}
	}
	return map[string]any{
		"ARN": secretARN(name), "Name": name, "SecretString": v,
		"VersionId": "11111111-2222-3333-4444-555555555555", "VersionStages": []string{"AWSCURRENT"},
		"CreatedDate": 1.7e9,
	}, nil
}
