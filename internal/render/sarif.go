package render

import (
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/npuprof/npuprof/internal/lazyre"
	"github.com/npuprof/npuprof/internal/results"
)

// SARIF 2.1.0 (OASIS Static Analysis Results Interchange Format), local
// structs for the properties npuprof fills; field names follow the spec
// (https://docs.oasis-open.org/sarif/sarif/v2.1.0/sarif-v2.1.0.html).

type sarifLog struct {
	Schema  string     `json:"$schema"`
	Version string     `json:"version"`
	Runs    []sarifRun `json:"runs"`
}

type sarifRun struct {
	Tool        sarifTool         `json:"tool"`
	Invocations []sarifInvocation `json:"invocations"`
	Results     []sarifResult     `json:"results"`
}

type sarifTool struct {
	Driver sarifDriver `json:"driver"`
}

// kept: SARIF's own JSON shape; alike its other types in shape (tagged fields), not in logic
type sarifDriver struct {
	Name           string      `json:"name"`
	Version        string      `json:"version,omitempty"`
	InformationURI string      `json:"informationUri,omitempty"`
	Rules          []sarifRule `json:"rules"`
	// Properties: revision, the VCS revision npuprof was built from.
	Properties map[string]string `json:"properties,omitempty"`
}

type sarifRule struct {
	ID                   string       `json:"id"`
	ShortDescription     sarifMessage `json:"shortDescription"`
	FullDescription      sarifMessage `json:"fullDescription"`
	Help                 sarifMessage `json:"help"`
	DefaultConfiguration sarifConfig  `json:"defaultConfiguration"`
}

type sarifConfig struct {
	Level string `json:"level"`
	// Enabled is false for a rule switched off (--disable, --only,
	// --no-builtin); absent (SARIF's default, true) otherwise.
	Enabled *bool `json:"enabled,omitempty"`
}

type sarifMessage struct {
	Text string `json:"text"`
}

type sarifInvocation struct {
	ExecutionSuccessful        bool                `json:"executionSuccessful"`
	ToolExecutionNotifications []sarifNotification `json:"toolExecutionNotifications"`
}

type sarifNotification struct {
	Level      string          `json:"level"`
	Message    sarifMessage    `json:"message"`
	Locations  []sarifLocation `json:"locations,omitempty"`
	Descriptor *sarifRuleRef   `json:"descriptor,omitempty"`
}

type sarifRuleRef struct {
	ID string `json:"id"`
}

// kept: SARIF's own JSON shape; alike its other types in shape (tagged fields), not in logic
type sarifResult struct {
	RuleID     string          `json:"ruleId"`
	RuleIndex  int             `json:"ruleIndex"`
	Level      string          `json:"level"`
	Message    sarifMessage    `json:"message"`
	Locations  []sarifLocation `json:"locations"`
	Properties map[string]any  `json:"properties,omitempty"`
}

type sarifLocation struct {
	PhysicalLocation sarifPhysical `json:"physicalLocation"`
}

type sarifPhysical struct {
	ArtifactLocation sarifArtifact `json:"artifactLocation"`
	Region           *sarifRegion  `json:"region,omitempty"`
}

type sarifArtifact struct {
	URI string `json:"uri"`
}

type sarifRegion struct {
	StartLine int `json:"startLine"`
}

// SARIFSchemaURI is the $schema npuprof writes.
const SARIFSchemaURI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"

// sarifLevel maps a severity to a SARIF level: high → error, medium →
// warning, low and info → note; unknown → warning.
func sarifLevel(sev string) string {
	switch sev {
	case results.SeverityHigh:
		return "error"
	case results.SeverityLow, results.SeverityInfo:
		return "note"
	}
	return "warning"
}

var hunkRe = lazyre.New(`(?m)^@@ -(\d+)(?:,\d+)? \+\d+(?:,\d+)? @@`)

// sarifInput is what the SARIF log is written from.
type sarifInput struct {
	Profile, Deploy string
	Doc             *results.Document
	PartialNotGated bool
}

// disableRule marks rule i of the driver disabled when why says it is.
func disableRule(run *sarifRun, i int, why string) {
	if why == "" {
		return
	}
	off := false
	r := &run.Tool.Driver.Rules[i]
	r.DefaultConfiguration.Enabled = &off
	r.FullDescription.Text += " (disabled: " + why + ")"
}

// WriteSARIF writes a SARIF 2.1.0 log: one result per finding, located in
// the deployment script at the first changed line when the finding has a
// diff, else at the profile; rules that failed to run are error
// notifications.
//
// The profile is the document's input path, the script its run's --deploy;
// a finding that read metrics of a truncated file is at level "note" when
// the gate (junitGate) does not gate such findings, so a SARIF consumer
// that gates on "error" does not gate on it either.
func WriteSARIF(w io.Writer, doc *results.Document) error {
	in := sarifInput{Profile: doc.Input.Path, Deploy: doc.Run.Deploy, Doc: doc, PartialNotGated: !junitGate(doc).GatePartial}
	run := newSARIFRun(doc)
	index := map[string]int{}
	addRule := func(id, short, full, help, level string) int {
		if i, ok := index[id]; ok {
			return i
		}
		if short == "" {
			short = id
		}
		if full == "" {
			full = short
		}
		if help == "" {
			help = full
		}
		run.Tool.Driver.Rules = append(run.Tool.Driver.Rules, sarifRule{ID: id, ShortDescription: sarifMessage{short},
			FullDescription: sarifMessage{full}, Help: sarifMessage{help}, DefaultConfiguration: sarifConfig{Level: level}})
		index[id] = len(run.Tool.Driver.Rules) - 1
		return index[id]
	}
	titles := map[string]string{}
	for _, f := range in.Doc.Findings {
		titles[f.Rule] = f.Title
	}
	for _, r := range in.Doc.Detail.RuleSet {
		if r.Budget != "" {
			disableRule(&run, addRule(r.ID, "budget "+r.Budget, "budget against --baseline: "+r.Budget, "", sarifLevel(r.Severity)), r.Disabled)
			continue
		}
		level := "warning"
		if r.Severity != "auto" {
			level = sarifLevel(r.Severity)
		}
		// the title: the finding's own when the rule fired, else the
		// rule's summary (its title without numbers)
		short := titles[r.ID]
		if short == "" {
			short = r.Summary
		}
		disableRule(&run, addRule(r.ID, short, strings.TrimSpace(r.Why), strings.TrimSpace(r.Fix), level), r.Disabled)
	}
	inv := sarifInvocation{ExecutionSuccessful: true, ToolExecutionNotifications: []sarifNotification{}}
	for _, o := range in.Doc.Rules {
		if o.Status == results.StatusFailed {
			inv.ExecutionSuccessful = false
			inv.ToolExecutionNotifications = append(inv.ToolExecutionNotifications, sarifNotification{Level: "error",
				Message: sarifMessage{labelsOf(in.Doc).t("rule failed to run: ") + o.Reason}, Descriptor: &sarifRuleRef{ID: o.Rule}})
		}
	}
	for _, f := range in.Doc.Findings {
		i := addRule(f.Rule, f.Title, f.Title, "", sarifLevel(f.Severity))
		loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: fileURI(in.Profile)}}}
		if in.Deploy != "" && f.Diff != "" {
			loc.PhysicalLocation.ArtifactLocation.URI = fileURI(in.Deploy)
			if line := firstChangedLine(f.Diff); line > 0 {
				loc.PhysicalLocation.Region = &sarifRegion{StartLine: line}
			}
		}
		msg := f.Title + "\n\n" + f.Fix
		ranks := append([]int{}, f.Ranks...)
		sort.Ints(ranks)
		// saving_us is null when the rule gives no estimate, never 0
		props := map[string]any{"severity": f.Severity, "saving_us": f.SavingUs, "ranks": ranks}
		if f.HasPartial() {
			// SARIF 2.1.0 has no confidence field: the caveat leads the
			// message (what viewers show) and the details go in the
			// property bag, under the JSON document's own key names.
			msg = "[" + labelsOf(in.Doc).phrase(PartialCaveat(&f)) + "]\n\n" + msg
			props["partial"] = f.Partial
			props["saving_uncertain"] = f.SavingUncertain
		}
		if f.Diff != "" {
			props["diff"] = f.Diff
		}
		if f.Predicted != nil {
			// the JSON document's findings[].predicted, key for key
			props["predicted"] = f.Predicted
		}
		level := sarifLevel(f.Severity)
		if f.HasPartial() && in.PartialNotGated {
			level = "note"
		}
		run.Results = append(run.Results, sarifResult{RuleID: f.Rule, RuleIndex: i, Level: level,
			Message: sarifMessage{msg}, Locations: []sarifLocation{loc}, Properties: props})
	}
	run.Invocations = []sarifInvocation{inv}
	return writeSARIFRun(w, run)
}

// WriteSARIFFailed writes the SARIF log of a check that could not analyze
// its input: no rules and no results, and an invocation that failed with
// the error (doc.Run.InputError) as an error notification located at the
// input.
func WriteSARIFFailed(w io.Writer, doc *results.Document) error {
	run, msg := newSARIFRun(doc), doc.Run.InputError
	loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: fileURI(doc.Input.Path)}}}
	run.Invocations = []sarifInvocation{{ExecutionSuccessful: false, ToolExecutionNotifications: []sarifNotification{
		{Level: "error", Message: sarifMessage{msg}, Locations: []sarifLocation{loc}}}}}
	return writeSARIFRun(w, run)
}

// newSARIFRun is a run of the npuprof that wrote doc, with no rules and
// no results yet.
func newSARIFRun(doc *results.Document) sarifRun {
	tool := toolOf(doc)
	var props map[string]string
	if tool.Revision != "" {
		props = map[string]string{"revision": tool.Revision}
	}
	return sarifRun{Tool: sarifTool{Driver: sarifDriver{Name: "npuprof", Version: tool.Version,
		InformationURI: "https://github.com/npuprof/npuprof", Rules: []sarifRule{}, Properties: props}},
		Results: []sarifResult{}}
}

// writeSARIFRun writes the log of one run.
func writeSARIFRun(w io.Writer, run sarifRun) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(sarifLog{Schema: SARIFSchemaURI, Version: "2.1.0", Runs: []sarifRun{run}})
}

// firstChangedLine is the line of the original file where a unified diff's
// first change is (1-based), or 0.
func firstChangedLine(diff string) int {
	m := hunkRe().FindStringSubmatchIndex(diff)
	if m == nil {
		return 0
	}
	line, _ := strconv.Atoi(diff[m[2]:m[3]])
	rest := diff[m[1]:]
	for _, l := range strings.Split(rest, "\n")[1:] {
		if strings.HasPrefix(l, "-") || strings.HasPrefix(l, "+") {
			return max(line, 1)
		}
		if strings.HasPrefix(l, " ") {
			line++
		}
	}
	return max(line, 1)
}

// fileURI turns a path into a relative (or absolute file:) URI reference.
func fileURI(p string) string {
	p = filepath.ToSlash(p)
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	u := strings.Join(parts, "/")
	if strings.HasPrefix(p, "/") {
		return "file://" + u
	}
	if strings.Contains(parts[0], ":") {
		// "run:42/x" would read as scheme "run" (RFC 3986 §4.2)
		return "./" + u
	}
	return u
}
