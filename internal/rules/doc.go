// Package rules maps analysis results to findings: the change to make and
// what it is estimated to save. It evaluates the rules package rulefmt
// loads; the findings, outcomes and plan it fills are the results
// document's types (package results).
package rules
