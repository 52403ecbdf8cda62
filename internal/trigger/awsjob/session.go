// Package awsjob holds what the AWS job types (glue, emr, emr-serverless,
// step-function, lambda) share: loading AWS configuration through the
// SDK's standard chain, per-job region and endpoint overrides, template
// expansion whose values are classified by use (secret.FromJob), so that
// those carrying a credential are kept out of errors in every form, and
// the explicit classification of AWS errors into "retry the call" and
// "the job was refused".
//
// It owns no job semantics: each job type's package decides what to start
// and how its states map to results. It must never retry a call itself
// (the engine owns retries and backoff) and never read the wall clock.
package awsjob

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
)

// DefaultTimeout bounds one control-plane call (a start or a status read).
// Those calls answer in well under a second; a call that hangs longer is
// an infrastructure failure for the engine to retry, not something to
// wait out.
const DefaultTimeout = 30 * time.Second

// Session loads AWS configuration (config.LoadDefaultConfig: environment,
// shared config and credentials files, SSO, web identity, container and
// instance credentials) once per region and shares it, so credentials are
// cached across calls instead of fetched for each one. The zero value is
// ready to use; a Session must not be copied after first use.
type Session struct {
	// LookupEnv reads ${env:NAME} template values; nil means os.LookupEnv.
	LookupEnv func(string) (string, bool)
	// LoadOptions are added after Interlock's own options to every
	// config.LoadDefaultConfig call (tests pass static credentials).
	LoadOptions []func(*config.LoadOptions) error
	// Timeout bounds one control-plane call; 0 means DefaultTimeout.
	Timeout time.Duration

	mu   sync.Mutex
	cfgs map[string]aws.Config
}

// Runner is what the glue, emr, emr-serverless and step-function job
// types' runners hold (each declares `type Runner awsjob.Runner`): the
// Session they call AWS through, which the app gives every AWS job type
// alike, so credentials are loaded once per region for all of them.
type Runner struct {
	AWS *Session
}

// NewSession returns a Session that reads templates' ${env:NAME} with
// lookup (nil: os.LookupEnv).
func NewSession(lookup func(string) (string, bool)) *Session {
	return &Session{LookupEnv: lookup}
}

// Config returns the AWS configuration for region ("" leaves the region to
// the SDK's chain: AWS_REGION, the profile's region). The SDK's own retries
// are off: the engine retries with backoff, and retrying below it would
// multiply attempts and hide throttling from it.
func (s *Session) Config(ctx context.Context, region string) (aws.Config, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if cfg, ok := s.cfgs[region]; ok {
		return cfg, nil
	}
	opts := []func(*config.LoadOptions) error{
		config.WithRetryer(func() aws.Retryer { return aws.NopRetryer{} }),
	}
	if region != "" {
		opts = append(opts, config.WithRegion(region))
	}
	opts = append(opts, s.LoadOptions...)
	cfg, err := config.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return aws.Config{}, fmt.Errorf("load AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		return aws.Config{}, fmt.Errorf("no AWS region: set job.config.region, AWS_REGION, or a region in the AWS profile")
	}
	if s.cfgs == nil {
		s.cfgs = map[string]aws.Config{}
	}
	s.cfgs[region] = cfg
	return cfg, nil
}

func (s *Session) timeout() time.Duration {
	if s.Timeout > 0 {
		return s.Timeout
	}
	return DefaultTimeout
}
