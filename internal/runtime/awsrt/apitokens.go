package awsrt

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"

	"github.com/interlockhq/interlock/internal/pipeline"
	"github.com/interlockhq/interlock/internal/runtime/local/api"
)

// apiTokenEntry is one token of the api function's secret: the name and
// role of a server.tokens entry with its value in place of tokenEnv or
// tokenFile.
type apiTokenEntry struct {
	Name  string `json:"name"`
	Role  string `json:"role"`
	Token string `json:"token"`
}

// SecretAPITokens reads the api function's bearer tokens from the secret
// arn: its secret string is a JSON list,
//
//	[{"name": "ops", "role": "operator", "token": "…"}, …]
//
// with the roles of server.tokens (reader, writer, operator, admin). It
// is read once per cold start; a missing, empty or invalid secret — or
// one with no token, which would leave the API open to every IAM caller
// as admin — stops the start, naming the secret and the token, never a
// value.
func SecretAPITokens(ctx context.Context, client *secretsmanager.Client, arn string) ([]api.Token, error) {
	out, err := client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(arn)})
	if err != nil {
		return nil, fmt.Errorf("read the API tokens from secret %s (%s): %w", arn, EnvAPITokensSecretARN, err)
	}
	return parseAPITokens(arn, aws.ToString(out.SecretString))
}

func parseAPITokens(arn, text string) ([]api.Token, error) {
	source := "secret " + arn
	dec := json.NewDecoder(strings.NewReader(strings.TrimSpace(text)))
	dec.DisallowUnknownFields()
	var entries []apiTokenEntry
	if err := dec.Decode(&entries); err != nil {
		// The decoder's message quotes no value of the secret.
		return nil, fmt.Errorf("%s: want a JSON list of {\"name\", \"role\", \"token\"}: %v", source, redactJSONError(err))
	}
	if len(entries) == 0 {
		return nil, fmt.Errorf("%s holds no token: the API would be open to every IAM caller as admin", source)
	}
	tokens := make([]api.Token, 0, len(entries))
	for _, e := range entries {
		tokens = append(tokens, api.Token{Name: e.Name, Role: pipeline.Role(e.Role), Secret: api.Secret(strings.TrimSpace(e.Token))})
	}
	if err := api.CheckTokens(source, tokens); err != nil {
		return nil, err
	}
	return tokens, nil
}

// redactJSONError keeps a decoding error's kind and position: a syntax
// or type error of encoding/json may quote the text it choked on, which
// may be part of a token.
func redactJSONError(err error) string {
	if errors.Is(err, io.EOF) {
		return "the secret string is empty"
	}
	switch e := err.(type) {
	case *json.SyntaxError:
		return fmt.Sprintf("not JSON at byte %d", e.Offset)
	case *json.UnmarshalTypeError:
		return fmt.Sprintf("field %q: want %s", e.Field, e.Type)
	}
	if strings.HasPrefix(err.Error(), "json: unknown field ") {
		return err.Error() // the field's name, not its value
	}
	return "not a JSON list"
}
