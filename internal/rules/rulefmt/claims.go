package rulefmt

import (
	"regexp"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/npuprof/npuprof/internal/analysis"
)

// A rule's claims: the entries of the step-time ledger its fix removes
// (docs/rules.md, "How a rule names its ledger entries"). The engine
// resolves them on the ledger of each step's critical rank, the finding
// names them (ledger_entries) and the rule's saving may read them
// (claimed()); the plan bounds a fix it cannot replay by them and never
// lets two fixes remove the same entry.

var claimKeys = []string{"cause", "stream", "kernel", "peer", "op", "fraction", "when"}

// ClaimSpec is one claim of a rule: the ledger entries of one cause,
// optionally only those of one awaited stream, kernel, peer or exchange.
type ClaimSpec struct {
	// Cause is a ledger cause (analysis.CauseNames: "host_gap",
	// "stream_wait", "peer_wait", "compute.moe_experts", ...).
	Cause analysis.Cause
	// Stream (stream_wait) and Peer (peer_wait): only the waits for this
	// stream or rank (int expressions); nil: any.
	Stream, Peer *Expr
	// Kernel (stream_wait) and Op (collective, peer_wait) are regular
	// expressions the awaited kernel or the exchange's label must match.
	Kernel, Op *regexp.Regexp
	// Fraction (a float expression in [0, 1], default 1) is the part of
	// each entry the fix removes.
	Fraction *Expr
	// When: the claim holds when it is true (nil: always).
	When *Expr
}

// Filtered reports whether the claim selects part of its cause's entries
// (which needs the ledger's records, not only its metrics).
func (c *ClaimSpec) Filtered() bool {
	return c.Stream != nil || c.Peer != nil || c.Kernel != nil || c.Op != nil
}

// claims loads a rule's `claims`.
func (c *compiler) claims(n *yaml.Node, r *Rule) {
	if n == nil {
		return
	}
	l, what := c.l, c.what
	for _, e := range l.list(n, what+": claims") {
		var cm map[string]*yaml.Node
		if e.Kind == yaml.ScalarNode {
			cm = map[string]*yaml.Node{"cause": e}
		} else {
			cm = l.mapping(e, what+": claim", claimKeys)
		}
		name := l.str(cm["cause"], "cause")
		cause, ok := causeByName(name)
		if !ok {
			l.errf(e, "%s: claim: cause %q (expected one of %s)", what, name, strings.Join(analysis.CauseNames[:], ", "))
			continue
		}
		cs := ClaimSpec{Cause: cause}
		if v := cm["stream"]; v != nil {
			cs.Stream = c.expr(v, "claim stream", kindAny)
		}
		if v := cm["peer"]; v != nil {
			cs.Peer = c.expr(v, "claim peer", kindAny)
		}
		for key, dst := range map[string]**regexp.Regexp{"kernel": &cs.Kernel, "op": &cs.Op} {
			if v := cm[key]; v != nil {
				re, err := regexp.Compile(l.str(v, key))
				if err != nil {
					l.errf(v, "%s: claim %s: %v", what, key, err)
					continue
				}
				*dst = re
			}
		}
		wrong := func(key, causes string) {
			l.errf(cm[key], "%s: claim %s: only a claim of %s has one (this one claims %s)", what, key, causes, name)
		}
		if cm["stream"] != nil && cause != analysis.CauseStreamWait {
			wrong("stream", "stream_wait")
		}
		if cm["kernel"] != nil && cause != analysis.CauseStreamWait {
			wrong("kernel", "stream_wait")
		}
		if cm["peer"] != nil && cause != analysis.CausePeerWait {
			wrong("peer", "peer_wait")
		}
		if cm["op"] != nil && cause != analysis.CausePeerWait && cause != analysis.CauseCollective {
			wrong("op", "peer_wait or collective")
		}
		if v := cm["fraction"]; v != nil {
			cs.Fraction = c.expr(v, "claim fraction", kindFloat)
		}
		if v := cm["when"]; v != nil {
			cs.When = c.expr(v, "claim when", kindBool)
		}
		r.Claims = append(r.Claims, cs)
	}
}

func causeByName(s string) (analysis.Cause, bool) {
	for i, n := range analysis.CauseNames {
		if n == s {
			return analysis.Cause(i), true
		}
	}
	return 0, false
}
