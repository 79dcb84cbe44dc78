package redact

// -update is accepted here too (see package golden), so that
// `go test ./... -run Golden -update` runs in every package.
import _ "github.com/npuprof/npuprof/internal/golden"
