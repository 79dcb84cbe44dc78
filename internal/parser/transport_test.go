package parser

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/stretchr/testify/require"
)

// An HCCL plane task whose args lost their "transport type" (the key
// damaged, or the args key itself) is named in a warning, as the events
// the reader drops for a damaged key are (the rank is not partial: the
// read went on whole): every plane task's args hold the key, and the task
// is in neither plane count.
// The key spelled with other white space, or holding another transport, is
// no damage.
func TestPlaneTaskWithoutTransportNamed(t *testing.T) {
	const noKey = `HCCL plane task(s) (on "Plane" threads) have no "transport type" in their args, which every plane task's hold`
	// argsOfFirst renames the "args" key of the first plane task
	argsOfFirst := func(s string) string {
		k := strings.Index(s, `"transport type"`)
		a := strings.LastIndex(s[:k], `"args"`)
		return s[:a] + `"a2gs"` + s[a+len(`"args"`):]
	}
	for _, c := range []struct {
		name   string
		msprof bool
		damage func(string) string
		// warned: the damage is named; dSDMA: the change of the SDMA count
		warned bool
		dSDMA  int
	}{
		{"key damaged", false, func(s string) string {
			return strings.Replace(s, `"transport type": "SDMA"`, `"transport pype": "SDMA"`, 1)
		}, true, -1},
		{"key cut into the next", false, func(s string) string {
			return strings.Replace(s, `"transport type": "SDMA", "s`, `"transport typeize(Byte)": 1, "s`, 1)
		}, true, -1},
		{"args key damaged", false, argsOfFirst, true, -1},
		{"msprof key damaged", true, func(s string) string {
			return strings.Replace(s, `"transport type": "SDMA"`, `"transport pype": "SDMA"`, 1)
		}, true, -1},
		{"msprof args key damaged", true, argsOfFirst, true, -1},
		{"other white space", false, func(s string) string {
			return strings.ReplaceAll(s, `"transport type": "SDMA"`, "\"transport type\" :\t\"SDMA\"")
		}, false, 0},
		{"no space", false, func(s string) string {
			return strings.ReplaceAll(s, `"transport type": "SDMA"`, `"transport type":"SDMA"`)
		}, false, 0},
		{"another transport", false, func(s string) string {
			return strings.Replace(s, `"transport type": "SDMA"`, `"transport type": "LOCAL"`, 1)
		}, false, -1},
	} {
		t.Run(c.name, func(t *testing.T) {
			var root, trace string
			if c.msprof {
				s := testutil.Tiny()
				s.Ranks = 1
				dir, _ := testutil.GenerateLayout(t, s, tracegen.LayoutMsprofText)
				m, err := filepath.Glob(filepath.Join(dir, "PROF_*", "mindstudio_profiler_output", "msprof_*.json"))
				require.NoError(t, err)
				require.Len(t, m, 1)
				trace, root = m[0], filepath.Dir(filepath.Dir(m[0]))
			} else {
				var out string
				root, out = tinyRank(t)
				trace = filepath.Join(out, "trace_view.json")
			}
			whole := loadOne(t, root)
			require.False(t, whole.Partial)
			require.NotContains(t, warningsText(whole), noKey)
			require.Positive(t, whole.HCCLPlane.SDMA)
			data, err := os.ReadFile(trace)
			require.NoError(t, err)
			damaged := c.damage(string(data))
			require.NotEqual(t, string(data), damaged)
			require.NoError(t, os.WriteFile(trace, []byte(damaged), 0o644))
			r := loadOne(t, root)
			require.Equal(t, whole.HCCLPlane.SDMA+c.dSDMA, r.HCCLPlane.SDMA)
			require.Equal(t, whole.HCCLPlane.Tasks, r.HCCLPlane.Tasks)
			if !c.warned {
				require.NotContains(t, warningsText(r), noKey)
				return
			}
			require.Contains(t, warningsText(r), filepath.Base(trace)+": 1 "+noKey+" (first: ")
			require.Contains(t, warningsText(r), "left out of hccl.plane.sdma.count and hccl.plane.rdma.count")
		})
	}
}

// A raw control character in a device task's Task Type or name (a
// flipped bit of a letter: "AI_VECTOR_CORE" -> "AI_VECTOR_COR\x05"), which
// no JSON string holds unescaped, is named; an escaped one is no damage.
func TestControlCharInTaskTextNamed(t *testing.T) {
	const warn = "device task or collective name(s) or task type(s) hold a control character, which no JSON string may hold unescaped"
	for _, c := range []struct {
		name   string
		msprof bool
		from   string
		to     string
		warned bool
	}{
		{"msprof task type", true, `"Task Type": "AI_VECTOR_CORE"`, "\"Task Type\": \"AI_VECTOR_COR\x05\"", true},
		{"task type", false, `"Task Type": "AI_VECTOR_CORE"`, "\"Task Type\": \"AI_VECTOR_COR\x05\"", true},
		{"collective name", false, `"name": "hcom_`, "\"name\": \"h\x03om_", true},
		{"escaped", false, `"Task Type": "AI_VECTOR_CORE"`, `"Task Type": "AI_VECTOR_COR\u0005"`, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var root, trace string
			if c.msprof {
				s := testutil.Tiny()
				s.Ranks = 1
				dir, _ := testutil.GenerateLayout(t, s, tracegen.LayoutMsprofText)
				m, err := filepath.Glob(filepath.Join(dir, "PROF_*", "mindstudio_profiler_output", "msprof_*.json"))
				require.NoError(t, err)
				require.Len(t, m, 1)
				trace, root = m[0], filepath.Dir(filepath.Dir(m[0]))
			} else {
				var out string
				root, out = tinyRank(t)
				trace = filepath.Join(out, "trace_view.json")
			}
			require.NotContains(t, warningsText(loadOne(t, root)), warn)
			data, err := os.ReadFile(trace)
			require.NoError(t, err)
			require.Contains(t, string(data), c.from)
			require.NoError(t, os.WriteFile(trace, []byte(strings.Replace(string(data), c.from, c.to, 1)), 0o644))
			r := loadOne(t, root)
			if !c.warned {
				require.NotContains(t, warningsText(r), warn)
				return
			}
			require.Contains(t, warningsText(r), filepath.Base(trace)+": 1 "+warn+" (first: ")
		})
	}
}

// A device task's Task Type damaged into one no profiler writes
// ("AI_VECTOR_CORE" -> "AI_VECTOR_COcRE") is named: the task would count
// as neither compute nor a collective or wait, in silence.
func TestUnknownTaskTypeNamed(t *testing.T) {
	const warn = `1 device task name(s) come with a Task Type npuprof does not know (first: "AI_VECTOR_COcRE")`
	for _, msprof := range []bool{false, true} {
		var root, trace string
		if msprof {
			s := testutil.Tiny()
			s.Ranks = 1
			dir, _ := testutil.GenerateLayout(t, s, tracegen.LayoutMsprofText)
			m, err := filepath.Glob(filepath.Join(dir, "PROF_*", "mindstudio_profiler_output", "msprof_*.json"))
			require.NoError(t, err)
			require.Len(t, m, 1)
			trace, root = m[0], filepath.Dir(filepath.Dir(m[0]))
		} else {
			var out string
			root, out = tinyRank(t)
			trace = filepath.Join(out, "trace_view.json")
		}
		whole := loadOne(t, root)
		require.NotContains(t, warningsText(whole), "Task Type npuprof does not know", "msprof %v", msprof)
		data, err := os.ReadFile(trace)
		require.NoError(t, err)
		require.NoError(t, os.WriteFile(trace, []byte(strings.Replace(string(data), `"Task Type": "AI_VECTOR_CORE"`, `"Task Type": "AI_VECTOR_COcRE"`, 1)), 0o644))
		r := loadOne(t, root)
		require.Contains(t, warningsText(r), filepath.Base(trace)+": "+warn, "msprof %v", msprof)
	}
}
