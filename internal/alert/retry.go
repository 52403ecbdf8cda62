package alert

import (
	"errors"
	"time"
)

// retryAfterError is a sink failure that carries the delay the destination
// asked for (an HTTP Retry-After header, a Slack rate limit).
type retryAfterError struct {
	err   error
	after time.Duration
}

func (e *retryAfterError) Error() string { return e.err.Error() }
func (e *retryAfterError) Unwrap() error { return e.err }

// WithRetryAfter returns err carrying the delay the destination asked for
// before the next attempt. A nil err stays nil; a delay <= 0 adds nothing.
func WithRetryAfter(err error, after time.Duration) error {
	if err == nil || after <= 0 {
		return err
	}
	return &retryAfterError{err: err, after: after}
}

// RetryAfter returns the delay carried by err (WithRetryAfter) and whether
// it carries one.
func RetryAfter(err error) (time.Duration, bool) {
	var ra *retryAfterError
	if errors.As(err, &ra) {
		return ra.after, true
	}
	return 0, false
}
