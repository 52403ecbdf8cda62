package awsjob

import (
	"context"
	"errors"
	"fmt"
	"strings"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
)

// Verdict is what a failed AWS call to start a job means.
type Verdict int

// The verdicts.
const (
	// Retry: the call failed for a reason outside the job — the network,
	// throttling, a fault of the service, Interlock's own credentials.
	// Start returns an error and the engine retries the call with backoff.
	Retry Verdict = iota + 1
	// Refused: the service refused to start the job as configured
	// (validation, permissions on the resource, an unknown job, cluster,
	// state machine or function). The same call would be refused again, so
	// Start reports a failed job with category PERMANENT.
	Refused
)

func (v Verdict) String() string {
	switch v {
	case Retry:
		return "retry"
	case Refused:
		return "refused"
	}
	return fmt.Sprintf("Verdict(%d)", int(v))
}

// retryCodes are AWS error codes of calls that may succeed later. Every
// code is listed explicitly; docs/configuration.md has the same table.
var retryCodes = codes(
	// throttling and quotas on concurrency
	"ThrottlingException", "Throttling", "ThrottledException", "TooManyRequestsException",
	"TooManyRequests", "RequestLimitExceeded", "RequestThrottled", "RequestThrottledException",
	"SlowDown", "PriorRequestNotComplete", "ProvisionedThroughputExceededException",
	"EC2ThrottledException", "ConcurrentRunsExceededException", "ResourceNumberLimitExceededException",
	"ExecutionLimitExceeded", "ServiceQuotaExceededException", "ENILimitReachedException",
	"SubnetIPAddressLimitReachedException",
	// faults of the service
	"ServiceUnavailable", "ServiceUnavailableException", "InternalFailure", "InternalError",
	"InternalServerError", "InternalServerException", "InternalServiceException",
	"InternalServiceError", "ServiceException", "ServiceFailure", "OperationTimeoutException",
	"RequestTimeout", "RequestTimeoutException", "EFSIOException",
	// a resource busy with another change
	"ConcurrentModificationException", "ConflictException", "ResourceConflictException",
	"ResourceNotReadyException", "SnapStartNotReadyException", "SnapStartTimeoutException",
	// Interlock's own credentials: not the job's fault; they may be renewed
	"ExpiredToken", "ExpiredTokenException", "RequestExpired", "UnrecognizedClientException",
	"InvalidClientTokenId", "InvalidSignatureException", "SignatureDoesNotMatch",
	"IncompleteSignature", "MissingAuthenticationToken",
)

// refusedCodes are AWS error codes of a start the service refuses as
// configured.
var refusedCodes = codes(
	// the request is invalid
	"ValidationException", "ValidationError", "InvalidParameterException",
	"InvalidParameterValueException", "InvalidParameterValue", "InvalidParameterCombination",
	"InvalidInputException", "InvalidRequestException", "InvalidRequestContentException",
	"RequestTooLargeException", "UnsupportedMediaTypeException", "InvalidArn", "InvalidName",
	"InvalidExecutionInput", "IllegalSessionStateException",
	// permissions on the resource
	"AccessDeniedException", "AccessDenied", "UnauthorizedOperation", "KMSAccessDeniedException",
	// the job, cluster, application, state machine or function is missing or unusable
	"ResourceNotFoundException", "EntityNotFoundException", "StateMachineDoesNotExist",
	"StateMachineDeleting", "InvalidRuntimeException", "InvalidZipFileException",
	"InvalidSecurityGroupIDException", "InvalidSubnetIDException", "KMSDisabledException",
	"KMSInvalidStateException", "KMSNotFoundException", "RecursiveInvocationException",
	"EFSMountFailureException", "EFSMountConnectivityException", "EFSMountTimeoutException",
	"SnapStartException",
)

func codes(cs ...string) map[string]bool {
	m := make(map[string]bool, len(cs))
	for _, c := range cs {
		m[c] = true
	}
	return m
}

// Classify decides what a failed start call means, from the AWS error
// code first (explicit tables above), then from the HTTP status of a code
// in neither table (429 and 5xx: Retry; other 4xx: Refused). An error
// with no AWS response (network, timeout, no credentials) is Retry.
func Classify(err error) Verdict {
	code := Code(err)
	switch {
	case retryCodes[code]:
		return Retry
	case refusedCodes[code]:
		return Refused
	}
	if s := Status(err); s >= 400 && s < 500 && s != 429 {
		return Refused
	}
	return Retry
}

// Code is the AWS error code of err ("" if it carries none).
func Code(err error) string {
	var ae smithy.APIError
	if errors.As(err, &ae) {
		return ae.ErrorCode()
	}
	return ""
}

// Status is the HTTP status of the response err came from (0 if none).
func Status(err error) int {
	var re *smithyhttp.ResponseError
	if errors.As(err, &re) {
		return re.HTTPStatusCode()
	}
	return 0
}

// Error is a failed AWS call, described without the SDK's error: the
// SDK's text may echo request values, so the message is rebuilt from the
// error code and the service's message, cleaned and redacted (Job.Line).
type Error struct {
	Op        string // "glue StartJobRun"
	Code      string // AWS error code, "" when the call got no AWS answer
	Status    int    // HTTP status, 0 when there was no response
	Message   string
	RequestID string
	ctx       error // context.Canceled or DeadlineExceeded, for errors.Is
}

func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	b.WriteString(": ")
	if e.Code != "" {
		b.WriteString(e.Code)
		b.WriteString(": ")
	}
	b.WriteString(e.Message)
	switch {
	case e.Status != 0 && e.RequestID != "":
		fmt.Fprintf(&b, " (HTTP %d, request %s)", e.Status, e.RequestID)
	case e.Status != 0:
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	return b.String()
}

// Unwrap exposes only a context error, never the SDK's.
func (e *Error) Unwrap() error { return e.ctx }

// Fail describes err, the failure of call op ("StartJobRun"), with the
// job's secrets redacted.
func (j *Job) Fail(op string, err error) *Error {
	e := &Error{Op: j.Type + " " + op, Code: j.Line(Code(err), 100), Status: Status(err)}
	var ae smithy.APIError
	if errors.As(err, &ae) {
		e.Message = ae.ErrorMessage()
	} else {
		e.Message = err.Error()
	}
	e.Message = j.Line(e.Message, maxMessage)
	if e.Message == "" {
		e.Message = "no message"
	}
	var re *awshttp.ResponseError
	if errors.As(err, &re) {
		e.RequestID = j.Line(re.ServiceRequestID(), 100)
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		e.ctx = context.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		e.ctx = context.Canceled
	}
	return e
}

// maxMessage bounds the service's text kept in an error or result.
const maxMessage = 300
