package awsfake

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// SecretsManager is a fake of Secrets Manager's GetSecretValue (AWS JSON
// 1.1, target secretsmanager.GetSecretValue): secrets by name or ARN,
// ResourceNotFoundException for any other, and a count of the reads so a
// test can see a secret is read once per cold start. A failure answer
// echoes nothing of a secret.
type SecretsManager struct {
	*httptest.Server

	mu      sync.Mutex
	secrets map[string]string // by name
	reads   int
}

// NewSecretsManager starts a fake holding no secret; it is closed when the
// test ends.
func NewSecretsManager(t testing.TB) *SecretsManager {
	f := &SecretsManager{secrets: map[string]string{}}
	f.Server = httptest.NewServer(jsonService{version: "1.1", prefix: "secretsmanager", ops: map[string]func(context.Context, []byte) (any, *apiError){
		"GetSecretValue": f.getSecretValue,
	}})
	t.Cleanup(f.Close)
	return f
}

// Put stores a secret string under name and returns its ARN.
func (f *SecretsManager) Put(name, value string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.secrets[name] = value
	return f.arn(name)
}

func (f *SecretsManager) arn(name string) string {
	return "arn:aws:secretsmanager:" + Region + ":" + Account + ":secret:" + name + "-AbCdEf"
}

// Reads is how many GetSecretValue calls the fake answered.
func (f *SecretsManager) Reads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

func (f *SecretsManager) getSecretValue(ctx context.Context, body []byte) (any, *apiError) {
	var in struct {
		SecretID string `json:"SecretId"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	name := in.SecretID
	for n := range f.secrets {
		if in.SecretID == f.arn(n) {
			name = n
		}
	}
	v, ok := f.secrets[name]
	if !ok || strings.HasPrefix(in.SecretID, "arn:") && in.SecretID != f.arn(name) {
		return nil, &apiError{code: "ResourceNotFoundException", msg: "Secrets Manager can't find the specified secret."}
	}
	return map[string]any{
		"ARN": f.arn(name), "Name": name, "SecretString": v,
		"VersionId": "11111111-2222-3333-4444-555555555555", "VersionStages": []string{"AWSCURRENT"},
		"CreatedDate": 1.7e9,
	}, nil
}
