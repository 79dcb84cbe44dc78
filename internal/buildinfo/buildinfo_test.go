package buildinfo

import (
	"runtime/debug"
	"testing"
)

func TestFromBuildInfo(t *testing.T) {
	const rev = "05fcc4e1a2b3c4d5e6f708192a3b4c5d6e7f8091"
	for _, c := range []struct {
		name string
		bi   *debug.BuildInfo
		want Tool
	}{
		{"no build info", nil, Tool{"npuprof", Unknown, Unknown}},
		{"go test or go run", &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}}, Tool{"npuprof", Devel, Unknown}},
		{"make build in a clean checkout", &debug.BuildInfo{
			Main:     debug.Module{Version: "v0.0.0-20261201090112-05fcc4e1a2b3"},
			Settings: []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "false"}},
		}, Tool{"npuprof", "v0.0.0-20261201090112-05fcc4e1a2b3", rev}},
		{"make build in a modified checkout", &debug.BuildInfo{
			Main:     debug.Module{Version: "v0.0.0-20261201090112-05fcc4e1a2b3+dirty"},
			Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: rev}, {Key: "vcs.modified", Value: "true"}},
		}, Tool{"npuprof", "v0.0.0-20261201090112-05fcc4e1a2b3+dirty", rev + "-modified"}},
		{"go install of a commit", &debug.BuildInfo{Main: debug.Module{Version: "v0.0.0-20261201090112-05fcc4e1a2b3"}},
			Tool{"npuprof", "v0.0.0-20261201090112-05fcc4e1a2b3", "05fcc4e1a2b3"}},
		{"go install after a tag", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.4-0.20261201090112-05fcc4e1a2b3"}},
			Tool{"npuprof", "v1.2.4-0.20261201090112-05fcc4e1a2b3", "05fcc4e1a2b3"}},
		{"go install of a release", &debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}},
			Tool{"npuprof", "v1.2.3", Unknown}},
	} {
		if got := FromBuildInfo(c.bi); got != c.want {
			t.Errorf("%s: got %+v, want %+v", c.name, got, c.want)
		}
	}
}

func TestString(t *testing.T) {
	got := Tool{"npuprof", "v1.2.3", "05fcc4e1a2b3"}.String()
	if want := "npuprof v1.2.3 (revision 05fcc4e1a2b3)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
