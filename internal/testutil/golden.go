package testutil

// Every test package that imports testutil accepts -update (see package
// golden), so `go test ./... -run Golden -update` runs in every package.
import _ "github.com/npuprof/npuprof/internal/golden"
