// Package buildinfo says which npuprof wrote an output: the module version
// and the VCS revision from the binary's own build information
// (runtime/debug), so that a document saved months ago names its writer.
//
// `make build` (go build in a checkout) stamps the revision and a version
// Go derives from the commit (v0.0.0-<time>-<hash>, +dirty when the tree
// was modified); `go install module/cmd/npuprof@version` stamps the module
// version, whose pseudo-version carries the revision's first 12 digits.
package buildinfo

import (
	"runtime/debug"
	"sync"

	"github.com/npuprof/npuprof/internal/lazyre"
)

// Tool names the program that wrote an output. It is the JSON document's
// `tool` object.
type Tool struct {
	Name     string `json:"name"`
	Version  string `json:"version"`
	Revision string `json:"revision"`
}

// Unknown is the version or revision of a build that does not record one
// (go run, go test, a build with -buildvcs=false).
const Unknown = "unknown"

// Devel is the version of a development build without a module version
// (a build in a checkout Go does not stamp, go run, go test).
const Devel = "devel"

var (
	once sync.Once
	tool Tool
)

// stampedRevision is the revision `make build` passes with -ldflags -X, for
// the checkouts whose build Go does not stamp (a git worktree, whose .git
// is a file): the build information's own vcs.revision wins.
var stampedRevision string

// Get returns npuprof's version and revision from the running binary's
// build information.
func Get() Tool {
	once.Do(func() {
		bi, _ := debug.ReadBuildInfo()
		tool = FromBuildInfo(bi)
		if tool.Revision == Unknown && stampedRevision != "" {
			tool.Revision = stampedRevision
		}
	})
	return tool
}

// rePseudo matches a pseudo-version's tail: -<yyyymmddhhmmss>-<12 hex>,
// optionally followed by +incompatible or +dirty.
var rePseudo = lazyre.New(`\d{14}-([0-9a-f]{12})(?:\+[a-z]+)?$`)

// FromBuildInfo reads the version and revision from bi (nil: neither).
func FromBuildInfo(bi *debug.BuildInfo) Tool {
	t := Tool{Name: "npuprof", Version: Unknown, Revision: Unknown}
	if bi == nil {
		return t
	}
	switch v := bi.Main.Version; v {
	case "":
	case "(devel)": // a build Go could not give a module version
		t.Version = Devel
	default:
		t.Version = v
	}
	modified := false
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			if s.Value != "" {
				t.Revision = s.Value
			}
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	if t.Revision == Unknown {
		if m := rePseudo().FindStringSubmatch(t.Version); m != nil {
			t.Revision = m[1]
		}
	}
	if modified && t.Revision != Unknown {
		t.Revision += "-modified"
	}
	return t
}

// String is the one line `npuprof version` prints.
func (t Tool) String() string {
	return t.Name + " " + t.Version + " (revision " + t.Revision + ")"
}
