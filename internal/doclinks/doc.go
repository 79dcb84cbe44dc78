// Package doclinks holds the tests that keep the docs true to the
// repository: every relative link in README.md and docs/ points at a file
// (and, for a Markdown file, a heading) that exists; docs/architecture.md
// names files that exist; every `go test ./PATH` a reader is told to run
// names a folder; and the pages of measurements read as a reference, not
// a diary.
package doclinks
