package awsjob

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Name derives a deterministic name for a job system from Interlock's run
// id, within the characters every AWS name field accepts (A–Z, a–z, 0–9,
// '-' and '_') and at most limit bytes. An id that fits is used as it is;
// otherwise its disallowed characters become '_', it is cut to fit, and a
// hash of the whole id is appended so that two ids never share a name.
// The same run id always gives the same name: that is what makes a
// retried start call find the job the first call started.
func Name(runID string, limit int) string {
	ok := len(runID) <= limit && runID != ""
	for _, r := range runID {
		if !nameChar(r) {
			ok = false
			break
		}
	}
	if ok {
		return runID
	}
	sum := sha256.Sum256([]byte(runID))
	suffix := "-" + hex.EncodeToString(sum[:])[:12]
	clean := strings.Map(func(r rune) rune {
		if nameChar(r) {
			return r
		}
		return '_'
	}, runID)
	if keep := limit - len(suffix); len(clean) > keep {
		clean = clean[:max(keep, 0)]
	}
	return clean + suffix
}

func nameChar(r rune) bool {
	return r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z'
}
