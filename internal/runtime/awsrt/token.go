package awsrt

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/secretsmanager"
)

// ErrNoToken: no Slack bot token is configured (neither SLACK_BOT_TOKEN
// nor SLACK_SECRET_ARN). The dispatcher then logs each alert and drops it,
// as the reference does: a deployment without Slack still runs.
var ErrNoToken = errors.New("no Slack bot token is configured")

// Token yields the Slack bot token. Its errors never contain the token.
type Token interface {
	Token(ctx context.Context) (string, error)
}

// StaticToken is a token known at start (SLACK_BOT_TOKEN), trimmed; a
// blank one is ErrNoToken.
type StaticToken string

// Token implements Token.
func (t StaticToken) Token(context.Context) (string, error) {
	if s := strings.TrimSpace(string(t)); s != "" {
		return s, nil
	}
	return "", ErrNoToken
}

// SecretToken reads the token from Secrets Manager (SLACK_SECRET_ARN):
// the secret string, trimmed, at every call. The dispatcher keeps the
// first token it gets for the life of the process (a cold start reads it
// again) and calls again after a failed read (the service unreachable, the
// secret missing or empty).
type SecretToken struct {
	Client *secretsmanager.Client
	ARN    string
}

// Token implements Token.
func (t SecretToken) Token(ctx context.Context) (string, error) {
	out, err := t.Client.GetSecretValue(ctx, &secretsmanager.GetSecretValueInput{SecretId: aws.String(t.ARN)})
	if err != nil {
		return "", fmt.Errorf("read the Slack bot token from secret %s: %w", t.ARN, err)
	}
	v := strings.TrimSpace(aws.ToString(out.SecretString))
	if v == "" {
		return "", fmt.Errorf("secret %s holds no Slack bot token (its secret string is empty)", t.ARN)
	}
	return v, nil
}
