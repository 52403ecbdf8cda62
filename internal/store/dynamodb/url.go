package dynamodb

import (
	"context"
	"fmt"
	"net/url"
	"regexp"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

// A store URL names a deployment's tables for CLIs and Lambdas:
//
//	dynamodb://<prefix>[?region=<region>&endpoint=<http(s) URL>]
//
// The tables are TablesFor(prefix). region and endpoint default to the
// SDK's configuration (AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB, …); endpoint
// is for DynamoDB Local.

// prefixPattern: a table name is [a-zA-Z0-9_.-]{3,255}, and "-control" is
// added to the prefix.
var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,240}$`)

// ParseURL reads a store URL.
func ParseURL(s string) (prefix, region, endpoint string, err error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", "", "", fmt.Errorf("dynamodb: store URL %q: %w", s, err)
	}
	if u.Scheme != "dynamodb" {
		return "", "", "", fmt.Errorf("dynamodb: store URL %q: want dynamodb://<prefix>", s)
	}
	if u.User != nil || u.Port() != "" || (u.Path != "" && u.Path != "/") || u.Fragment != "" || u.Opaque != "" {
		return "", "", "", fmt.Errorf("dynamodb: store URL %q: want dynamodb://<prefix>[?region=…&endpoint=…], nothing else", s)
	}
	prefix = u.Host
	if !prefixPattern.MatchString(prefix) {
		return "", "", "", fmt.Errorf("dynamodb: store URL %q: the table prefix %q must be 1 to 240 of A-Z a-z 0-9 _ . -", s, prefix)
	}
	q, err := url.ParseQuery(u.RawQuery)
	if err != nil {
		return "", "", "", fmt.Errorf("dynamodb: store URL %q: %w", s, err)
	}
	for k, v := range q {
		if len(v) != 1 {
			return "", "", "", fmt.Errorf("dynamodb: store URL %q: %s is given %d times", s, k, len(v))
		}
		switch k {
		case "region":
			region = v[0]
		case "endpoint":
			endpoint = v[0]
			e, err := url.Parse(endpoint)
			if err != nil || (e.Scheme != "http" && e.Scheme != "https") || e.Host == "" {
				return "", "", "", fmt.Errorf("dynamodb: store URL %q: endpoint %q is not an http(s) URL", s, endpoint)
			}
		default:
			return "", "", "", fmt.Errorf("dynamodb: store URL %q: unknown parameter %q (region, endpoint)", s, k)
		}
	}
	return prefix, region, endpoint, nil
}

// NewClient returns a DynamoDB client from the SDK's default configuration
// (credentials, region), with region and endpoint overriding it when set.
func NewClient(ctx context.Context, region, endpoint string) (*dynamodb.Client, error) {
	var opts []func(*config.LoadOptions) error
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("dynamodb: AWS configuration: %w", err)
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}), nil
}
