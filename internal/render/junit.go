package render

import (
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/npuprof/npuprof/internal/buildinfo"
	"github.com/npuprof/npuprof/internal/results"
)

// JUnit report: one test case per rule and budget. A finding at or above
// --fail-on is a failure, a rule that failed to run an error, a rule that
// could not be evaluated is skipped with the reason; the rest pass.

// The element and attribute names are those of the Jenkins xUnit schema
// (junit-10.xsd, which make test validates against): testsuites has no
// skipped attribute, and the properties belong to the testsuite.
type junitSuites struct {
	XMLName xml.Name `xml:"testsuites"`
	Name    string   `xml:"name,attr"`
	Time    string   `xml:"time,attr"`
	junitCounts
	// no skipped count here: the JUnit schema (junit-10.xsd) has it on
	// testsuite only
	Suites []junitSuite `xml:"testsuite"`
}

// junitCounts are the test cases, failures and errors, a suite's and (the
// same, of the one suite) the report's.
type junitCounts struct {
	Tests    int `xml:"tests,attr"`
	Failures int `xml:"failures,attr"`
	Errors   int `xml:"errors,attr"`
}

// kept: the JUnit schema's elements; alike the JSON contract's types in shape (tagged fields), not in logic
type junitSuite struct {
	Name string `xml:"name,attr"`
	junitCounts
	Skipped    int             `xml:"skipped,attr"`
	Time       string          `xml:"time,attr"`
	Properties []junitProperty `xml:"properties>property"`
	Cases      []junitCase     `xml:"testcase"`
}

// kept: JUnit's own XML shape; alike the contract's types in shape (tagged fields), not in logic
type junitProperty struct {
	Name  string `xml:"name,attr"`
	Value string `xml:"value,attr"`
}

// kept: JUnit's own XML shape; alike the contract's types in shape (tagged fields), not in logic
type junitCase struct {
	Name      string        `xml:"name,attr"`
	ClassName string        `xml:"classname,attr"`
	Time      string        `xml:"time,attr"`
	Failure   *junitMessage `xml:"failure,omitempty"`
	Error     *junitMessage `xml:"error,omitempty"`
	Skipped   *junitMessage `xml:"skipped,omitempty"`
	SystemOut string        `xml:"system-out,omitempty"`
}

type junitMessage struct {
	Message string `xml:"message,attr"`
	Type    string `xml:"type,attr,omitempty"`
	Text    string `xml:",chardata"`
}

// junitGate is the gate JUnit and SARIF judge a document by: check's,
// else check's defaults (--fail-on high, --partial-findings gate).
func junitGate(doc *results.Document) results.Gate {
	if doc.Run.Gate != nil {
		return *doc.Run.Gate
	}
	return results.Gate{FailOn: results.SeverityHigh, GatePartial: true}
}

// toolOf is the npuprof that wrote doc (unknown when not recorded).
func toolOf(doc *results.Document) buildinfo.Tool {
	if doc.Tool != nil {
		return *doc.Tool
	}
	return buildinfo.Tool{Name: "npuprof", Version: buildinfo.Devel, Revision: buildinfo.Unknown}
}

// junitTime is a duration in seconds as the schema's SUREFIRE_TIME wants
// it: at most three decimals.
func junitTime(d time.Duration) string {
	return strconv.FormatFloat(d.Seconds(), 'f', 3, 64)
}

// WriteJUnit writes the JUnit XML report of a check: one test case per
// rule and budget of the document, judged by its gate (junitGate). A
// finding that read metrics of a truncated file says so in its failure
// message; when the gate does not gate partial findings it is not a
// failure but system-out, like a finding below --fail-on. The suite's time
// is the run's wall time so far, each case's its rule's evaluation.
func WriteJUnit(w io.Writer, doc *results.Document) error {
	gate, tool, l := junitGate(doc), toolOf(doc), labelsOf(doc)
	failOn, gatePartial := gate.FailOn, gate.GatePartial
	var elapsed time.Duration
	if !doc.Run.Start.IsZero() {
		elapsed = time.Since(doc.Run.Start)
	}
	byRule := map[string]*results.Finding{}
	for i := range doc.Findings {
		byRule[doc.Findings[i].Rule] = &doc.Findings[i]
	}
	suite := junitSuite{Name: "npuprof check " + doc.Input.Path, Time: junitTime(elapsed), Properties: []junitProperty{
		{"npuprof.version", tool.Version}, {"npuprof.revision", tool.Revision}, {"fail_on", failOn}}}
	for _, o := range doc.Rules {
		c := junitCase{Name: o.Rule, ClassName: "npuprof.rules", Time: junitTime(doc.Run.RuleTimes[o.Rule])}
		switch o.Status {
		case results.StatusFired:
			f := byRule[o.Rule]
			text := findingText(f, l)
			title := f.Title
			if f.HasPartial() {
				title = l.t("[partial input: ") + partialRanksLabel(f) + l.t(" cut short] ") + title
			}
			switch {
			case results.SeverityRank(o.Severity) < results.SeverityRank(failOn):
				c.SystemOut = fmt.Sprintf(l.t("[%s, below --fail-on %s] %s\n%s"), o.Severity, failOn, title, text)
			case f.HasPartial() && !gatePartial:
				c.SystemOut = fmt.Sprintf(l.t("[%s, not gated: --partial-findings report] %s\n%s"), o.Severity, title, text)
			default:
				c.Failure = &junitMessage{Message: title, Type: o.Severity, Text: text}
				suite.Failures++
			}
		case results.StatusFailed:
			c.Error = &junitMessage{Message: FirstLine(o.Reason), Type: "rule-failed", Text: o.Reason}
			suite.Errors++
		case results.StatusNotEvaluated, results.StatusNotApplicable, results.StatusDisabled:
			c.Skipped = &junitMessage{Message: l.t(strings.ReplaceAll(o.Status, "_", " ")) + l.t(": ") + l.phrase(o.Reason)}
			suite.Skipped++
		}
		suite.Cases = append(suite.Cases, c)
	}
	return writeJUnitSuite(w, suite)
}

// WriteJUnitFailed writes the JUnit report of a check that could not
// analyze its input: one test case, the input, in error with the error
// (doc.Run.InputError), so that a CI job collecting the report sees why.
func WriteJUnitFailed(w io.Writer, doc *results.Document) error {
	tool, msg := toolOf(doc), doc.Run.InputError
	suite := junitSuite{Name: "npuprof check " + doc.Input.Path, Time: junitTime(0), Properties: []junitProperty{
		{"npuprof.version", tool.Version}, {"npuprof.revision", tool.Revision}, {"fail_on", junitGate(doc).FailOn}},
		Cases: []junitCase{{Name: doc.Input.Path, ClassName: "npuprof.input", Time: junitTime(0),
			Error: &junitMessage{Message: FirstLine(msg), Type: "input-error", Text: msg}}}}
	suite.Errors = 1
	return writeJUnitSuite(w, suite)
}

// writeJUnitSuite writes the report of one suite.
func writeJUnitSuite(w io.Writer, suite junitSuite) error {
	suite.Tests = len(suite.Cases)
	suites := junitSuites{Name: "npuprof", Time: suite.Time, junitCounts: suite.junitCounts,
		Suites: []junitSuite{suite}}
	if _, err := io.WriteString(w, xml.Header); err != nil {
		return err
	}
	enc := xml.NewEncoder(w)
	enc.Indent("", "  ")
	if err := enc.Encode(suites); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\n")
	return err
}

// findingText is a finding's JUnit failure text: its fix, saving,
// prediction and evidence, with the labels l (the finding's own texts are
// in the document's language).
func findingText(f *results.Finding, l labels) string {
	if f == nil {
		return ""
	}
	var b strings.Builder
	if v, ok := f.Saving(); ok {
		fmt.Fprintf(&b, l.t("%s\nestimated saving: %s per rank over the capture%s\n"), f.Fix, Dur(v), uncertain(f, l))
	} else {
		// the rule estimates no saving (or could not): not a measured 0
		fmt.Fprintf(&b, l.t("%s\nestimated saving: no estimate\n"), f.Fix)
	}
	if f.Predicted != nil {
		fmt.Fprintf(&b, l.t("predicted: %s\n"), predictedText(f.Predicted, l))
	}
	if c := PartialCaveat(f); c != "" {
		b.WriteString(l.phrase(c) + "\n")
	}
	for _, e := range f.Evidence {
		b.WriteString("  " + evidenceLine(e, l) + "\n")
	}
	if f.Diff != "" {
		b.WriteString("\n" + f.Diff)
	}
	if f.DiffError != "" {
		b.WriteString(l.t("\nno diff: the deployment script could not be edited: ") + l.phrase(f.DiffError) + "\n")
	}
	if f.CodePatchError != "" {
		b.WriteString(l.t("\nno code patch: ") + l.phrase(f.CodePatchError) + "\n")
	}
	return b.String()
}

func evidenceLine(e results.Evidence, l labels) string {
	s := e.Metric
	if e.Rank != nil {
		s += fmt.Sprintf(" (rank %d)", *e.Rank)
	}
	if e.Unit == "µs" {
		s += " = " + Dur(e.Value)
	} else if e.Metric != "saving_us" {
		s += " = " + trimFloat(e.Value)
		if e.Unit != "" && e.Unit != "count" && e.Unit != "rank" && e.Unit != "ratio" {
			s += " " + e.Unit
		}
	}
	if e.Note != "" {
		s += "  " + l.phrase(e.Note)
	}
	if len(e.PartialRanks) > 0 {
		s += l.t("  [partial: rank ") + rankList(e.PartialRanks) + l.t(" cut short]")
	}
	return s
}

// partialRanksLabel names a finding's partial ranks: "rank 3", "rank 1,
// 3", "baseline rank 3" (a rank of the --baseline document), "rank 1;
// baseline rank 3".
func partialRanksLabel(f *results.Finding) string {
	var cur, base []int
	for _, p := range f.Partial {
		if p.Baseline {
			base = append(base, p.Rank)
		} else {
			cur = append(cur, p.Rank)
		}
	}
	var parts []string
	if len(cur) > 0 {
		parts = append(parts, "rank "+rankList(cur))
	}
	if len(base) > 0 {
		parts = append(parts, "baseline rank "+rankList(base))
	}
	return strings.Join(parts, "; ")
}

// maxPartialMetrics is how many metric names partialCaveat spells out per
// rank.
const maxPartialMetrics = 6

// PartialCaveat is the one-line warning for a finding that read metrics of
// a truncated file ("" when it read none): which ranks, which metrics,
// where they were used, and whether the saving is uncertain. Text, JUnit,
// SARIF and HTML all show it.
func PartialCaveat(f *results.Finding) string {
	if f == nil || !f.HasPartial() {
		return ""
	}
	var parts []string
	for _, p := range f.Partial {
		ms := p.Metrics
		more := ""
		if len(ms) > maxPartialMetrics {
			more = fmt.Sprintf(" +%d more", len(ms)-maxPartialMetrics)
			ms = ms[:maxPartialMetrics]
		}
		who := "rank"
		if p.Baseline {
			who = "baseline rank"
		}
		parts = append(parts, fmt.Sprintf("%s %d (%s%s; used in %s)", who, p.Rank, strings.Join(ms, ", "), more, strings.Join(p.UsedIn, ", ")))
	}
	s := "partial input: " + strings.Join(parts, "; ") + " measured over only the complete part of a file cut short"
	if f.SavingUncertain {
		s += "; the saving is uncertain (neither a lower nor an upper bound)"
	}
	return s
}

func trimFloat(v float64) string {
	s := fmt.Sprintf("%.3f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

// uncertain is the label after a saving estimated from partial metrics.
// savingText is a finding's estimated saving on its one-line summary. A
// rule without a saving expression (env-hygiene), or whose saving could not
// be estimated, has no SavingUs: that is said, never shown as "0.0µs".
func savingText(f *results.Finding, l labels) string {
	if v, ok := f.Saving(); ok {
		return l.t("est. saving ") + Dur(v) + uncertain(f, l)
	}
	return l.t("no saving estimated")
}

func uncertain(f *results.Finding, l labels) string {
	if f.SavingUncertain {
		return l.t(", uncertain: read from a truncated file")
	}
	return ""
}
