package httpx

import (
	"github.com/interlockhq/interlock/internal/secret"
)

// MaxSnippet bounds the part of a response body an error or message keeps.
const MaxSnippet = 512

// Secrets are the values one trigger call must never reveal, with their
// wire forms (package secret). Everything a runner puts in an error or a
// Result.Message goes through them: Snippet, Describe and Err do, and a
// runner's own text from outside goes through Secrets.Line. A Secrets
// belongs to one Start or Poll call; it is not shared.
type Secrets = secret.Set

// Snippet is the start of a response body fit for a message: cleaned so
// it cannot forge log lines (a secret split by a control character is
// joined), then redacted in every form a server may echo it in (the
// request's values, escaped as any encoder escapes them), then cut to at
// most MaxSnippet bytes, then redacted again (secret.Set.Line).
func Snippet(body []byte, sec *Secrets) string {
	return sec.Line(string(body), MaxSnippet)
}
