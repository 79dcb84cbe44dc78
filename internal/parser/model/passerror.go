package model

import "fmt"

// PassError is an analysis pass that failed: its name, the rank (-1: none)
// and what went wrong. Declared here, the package both sides import, so
// that package analysis (which reports it) and the results document
// (which carries it) share one type.
type PassError struct {
	Pass    string `json:"pass"`
	Rank    int    `json:"rank"`
	Message string `json:"message"`
}

func (e PassError) Error() string {
	return fmt.Sprintf("pass %s on rank %d: %s", e.Pass, e.Rank, e.Message)
}
