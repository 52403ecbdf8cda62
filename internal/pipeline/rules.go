package pipeline

import (
	"github.com/interlockhq/interlock/internal/confdec"
	"github.com/interlockhq/interlock/internal/rule"
)

// opNames lists the operators for error messages.
func opNames() []string {
	ops := rule.Ops()
	names := make([]string, len(ops))
	for i, op := range ops {
		names[i] = string(op)
	}
	return names
}

// buildRule checks one rule ({key, check, field, value}) at path and
// returns it with Age set for age checks. The rule package's own checks
// decide what a valid rule is; this maps its field errors to lines.
func buildRule(d *confdec.Decoder, path string, r rawRule) rule.Rule {
	out := rule.Rule{Key: r.Key, Op: rule.Op(r.Check), Field: r.Field, Value: r.Value}
	if r.Check == CheckUpstream {
		d.ErrorAt(confdec.Join(path, "check"), "check upstream is allowed only in validation.rules")
		return out
	}
	refuseUpstreamFields(d, path, r)
	for _, fe := range out.Check() {
		p := confdec.Join(path, fe.Field)
		if d.Failed(p) {
			continue // reported when decoding
		}
		switch {
		case fe.Field == "check" && r.Check == "":
			d.ErrorAt(p, "missing required field (want one of %s)", confdec.OneOf(opNames()))
		case fe.Field == "check":
			d.ErrorAt(p, "unknown operator %q (want one of %s)", r.Check, confdec.OneOf(opNames()))
		case fe.Field == "key" && r.Key == "" || fe.Field == "field" && r.Field == "":
			d.ErrorAt(p, "missing required field%s", suffix(fe.Msg, "required"))
		default:
			d.ErrorAt(p, "%s", fe.Msg)
		}
	}
	return out
}

// suffix turns the rule package's "required for check gt" into the
// " (required for check gt)" tail of our "missing required field".
func suffix(msg, plain string) string {
	if msg == plain || msg == "" {
		return ""
	}
	return " (" + msg + ")"
}

func buildRules(d *confdec.Decoder, path string, raw []rawRule) []rule.Rule {
	out := make([]rule.Rule, len(raw))
	for i, r := range raw {
		out[i] = buildRule(d, confdec.Index(path, i), r)
	}
	return out
}
