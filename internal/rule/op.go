package rule

import (
	"fmt"
	"strings"
)

// Op is a rule's check, written `check:` in pipeline YAML.
type Op string

// The operators. Every one except Exists reads one top-level field of the
// sensor data.
const (
	// Exists passes when the sensor is present (and, if a field is named,
	// the sensor has that field, even if it holds null).
	Exists Op = "exists"
	// Equals passes when the field equals the value as typed JSON.
	Equals Op = "equals"
	// GT, GTE, LT and LTE compare the field numerically with the value.
	GT  Op = "gt"
	GTE Op = "gte"
	LT  Op = "lt"
	LTE Op = "lte"
	// AgeLT passes when the field's timestamp is younger than the value.
	AgeLT Op = "age_lt"
	// AgeGT passes when the field's timestamp is older than the value.
	AgeGT Op = "age_gt"
)

// Ops lists every operator, in documentation order.
func Ops() []Op { return []Op{Exists, Equals, GT, GTE, LT, LTE, AgeLT, AgeGT} }

// ParseOp returns the operator named s. Names are exact and lowercase, as
// in the documentation; anything else is a config error, never a rule that
// silently fails at run time.
func ParseOp(s string) (Op, error) {
	for _, op := range Ops() {
		if string(op) == s {
			return op, nil
		}
	}
	names := make([]string, 0, len(Ops()))
	for _, op := range Ops() {
		names = append(names, string(op))
	}
	return "", fmt.Errorf("unknown check %q, want one of %s", s, strings.Join(names, ", "))
}

// Mode combines the results of several rules.
type Mode string

// The modes.
const (
	// All passes when every rule passes; no rules at all pass.
	All Mode = "ALL"
	// Any passes when at least one rule passes; no rules at all fail.
	Any Mode = "ANY"
)

// Modes lists every mode.
func Modes() []Mode { return []Mode{All, Any} }

// ParseMode reads a mode case-insensitively ("any" is ANY). The empty string
// is ALL, the default; anything else is an error rather than a silent ALL.
func ParseMode(s string) (Mode, error) {
	if s == "" {
		return All, nil
	}
	for _, m := range Modes() {
		if strings.EqualFold(s, string(m)) {
			return m, nil
		}
	}
	return "", fmt.Errorf("unknown mode %q, want ALL or ANY", s)
}
