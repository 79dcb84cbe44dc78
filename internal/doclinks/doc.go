// Package doclinks holds the test that every relative link in README.md and
// docs/ points at a file (and, for a Markdown file, a heading) that exists.
package doclinks
