// Package docs is npuprof's documentation, embedded in the binary:
// `npuprof docs TOPIC` prints a page, so a user of the binary reads what
// the help cites without the repository.
package docs

import "embed"

// Pages are the documentation pages, TOPIC.md each.
//
//go:embed *.md
var Pages embed.FS
