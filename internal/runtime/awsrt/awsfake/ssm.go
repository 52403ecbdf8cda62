package awsfake

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// SSM is a fake of Systems Manager Parameter Store's GetParameter (AWS
// JSON 1.1, target AmazonSSM.GetParameter): parameters by name or ARN,
// ParameterNotFound for any other. A SecureString is answered in clear
// only when WithDecryption is set (as SSM does); otherwise its value is
// the "ciphertext" placeholder, so a reader that forgets to ask for
// decryption gets the wrong value, not the secret.
type SSM struct {
	*httptest.Server

	mu     sync.Mutex
	params map[string]ssmParam // by name ("/a/b")
	reads  int
}

type ssmParam struct {
	value  string
	secure bool
}

// EncryptedPlaceholder is what the fake answers for a SecureString read
// without decryption.
const EncryptedPlaceholder = "AQICAHencrypted"

// NewSSM starts a fake holding no parameter; it is closed when the test ends.
func NewSSM(t testing.TB) *SSM {
	f := &SSM{params: map[string]ssmParam{}}
	f.Server = httptest.NewServer(jsonService{version: "1.1", prefix: "AmazonSSM", ops: map[string]func(context.Context, []byte) (any, *apiError){
		"GetParameter": f.getParameter,
	}})
	t.Cleanup(f.Close)
	return f
}

// Put stores a parameter (name starting with "/"), a SecureString when
// secure, and returns its ARN.
func (f *SSM) Put(name, value string, secure bool) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.params[name] = ssmParam{value: value, secure: secure}
	return f.arn(name)
}

func (f *SSM) arn(name string) string {
	return "arn:aws:ssm:" + Region + ":" + Account + ":parameter" + name
}

// Reads is how many GetParameter calls the fake answered.
func (f *SSM) Reads() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.reads
}

func (f *SSM) getParameter(ctx context.Context, body []byte) (any, *apiError) {
	var in struct {
		Name           string `json:"Name"`
		WithDecryption bool   `json:"WithDecryption"`
	}
	if err := decode(body, &in); err != nil {
		return nil, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reads++
	name := in.Name
	if strings.HasPrefix(name, "arn:") {
		name = strings.TrimPrefix(name, "arn:aws:ssm:"+Region+":"+Account+":parameter")
	}
	p, ok := f.params[name]
	if !ok {
		return nil, &apiError{code: "ParameterNotFound", msg: "Parameter " + in.Name + " not found."}
	}
	typ, value := "String", p.value
	if p.secure {
		typ = "SecureString"
		if !in.WithDecryption {
			value = EncryptedPlaceholder
		}
	}
	return map[string]any{"Parameter": map[string]any{
		"ARN": f.arn(name), "Name": name, "Type": typ, "Value": value, "Version": 1, "DataType": "text",
	}}, nil
}
