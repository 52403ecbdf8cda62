package awsfake

import (
	"strings"
	"testing"
)

// SSM is a fake of Systems Manager Parameter Store's GetParameter (AWS
// JSON 1.1, target AmazonSSM.GetParameter): parameters by name or ARN,
// ParameterNotFound for any other. A SecureString is answered in clear
// only when WithDecryption is set (as SSM does); otherwise its value is
// the "ciphertext" placeholder, so a reader that forgets to ask for
// decryption gets the wrong value, not the secret.
type SSM struct {
	*named[ssmParam]
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
	return &SSM{serveNamed(t, "AmazonSSM", "GetParameter", getParameter)}
}

// Put stores a parameter (name starting with "/"), a SecureString when
// secure, and returns its ARN.
func (f *SSM) Put(name, value string, secure bool) string {
	f.put(name, ssmParam{value: value, secure: secure})
	return parameterARN(name)
}

func parameterARN(name string) string {
	return "arn:aws:ssm:" + Region + ":" + Account + ":parameter" + name
}

func getParameter(params map[string]ssmParam, in struct {
	Name           string `json:"Name"`
	WithDecryption bool   `json:"WithDecryption"`
}) (any, *apiError) {
	name := in.Name
	if strings.HasPrefix(name, "arn:") {
		name = strings.TrimPrefix(name, "arn:aws:ssm:"+Region+":"+Account+":parameter")
	}
	p, ok := params[name]
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
		"ARN": parameterARN(name), "Name": name, "Type": typ, "Value": value, "Version": 1, "DataType": "text",
	}}, nil
}
