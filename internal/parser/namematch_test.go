package parser

import (
	"math/rand"
	"regexp"
	"testing"
)

// TestNameMatchersAreRegexps holds each hand-written name matcher to the
// regexp it replaces (detect.go): the same match and the same submatch,
// on the names that occur and on random names from their alphabet.
func TestNameMatchersAreRegexps(t *testing.T) {
	for _, c := range []struct {
		m  nameMatcher
		re string
	}{
		{nameProfilerInfo, `^profiler_info_(\d+)\.json$`},
		{nameAscendPT, `_ascend_(pt|ms)$`},
		{nameAscendMS, `_ascend_ms$`},
		{nameProfDir, `^PROF_\d+_(\d+)_[0-9a-zA-Z]+$`},
		{nameTorchDB, `^ascend_pytorch_profiler(?:_(\d+))?\.db$`},
		{nameMsprofDB, `^msprof_\d+\.db$`},
	} {
		re := regexp.MustCompile(c.re)
		names := []string{"", "_", "profiler_info_0.json", "profiler_info_.json", "profiler_info_12.json.gz", "xprofiler_info_1.json",
			"profiler_info_1a.json", "w_1_2_ascend_pt", "w_ascend_ms", "_ascend_pt", "ascend_pt", "w_ascend_ptx", "PROF_1_20250109_abC9",
			"PROF_1_2_", "PROF__2_a", "PROF_1_2_a_b", "PROF_1_2_a-b", "PROF_1_2", "PROF_x_2_a", "ascend_pytorch_profiler.db",
			"ascend_pytorch_profiler_3.db", "ascend_pytorch_profiler_.db", "ascend_pytorch_profiler_3x.db", "ascend_pytorch_profiler3.db",
			"msprof_1.db", "msprof_.db", "msprof_1.db.gz", "msprof_12a.db", "PROF_1_2_a\n", "msprof_1.db\n", "profiler_info_１.json"}
		rng := rand.New(rand.NewSource(1))
		const alphabet = "_.0123456789aAzZ\n-PROFascend_ptmsprofiler_infojsondbytorch"
		for range 20000 {
			b := make([]byte, rng.Intn(16))
			for i := range b {
				b[i] = alphabet[rng.Intn(len(alphabet))]
			}
			names = append(names, string(b))
		}
		for _, prefix := range []string{"profiler_info_", "PROF_", "ascend_pytorch_profiler", "msprof_", "w_ascend_"} {
			for range 5000 {
				b := make([]byte, rng.Intn(8))
				for i := range b {
					b[i] = alphabet[rng.Intn(len(alphabet))]
				}
				names = append(names, prefix+string(b), prefix+string(b)+".db", prefix+string(b)+".json")
			}
		}
		for _, s := range names {
			want := re.FindStringSubmatch(s)
			got := c.m.FindStringSubmatch(s)
			// (an unanchored regexp's whole match is its end, not s: the
			// detection only asks those whether they match)
			anchored := c.re[0] == '^'
			if (want == nil) != (got == nil) || (want != nil && (len(want) > 1 && want[1] != got[1] || anchored && want[0] != got[0])) {
				t.Fatalf("%s on %q: regexp %q, matcher %q", c.re, s, want, got)
			}
			if c.m.MatchString(s) != re.MatchString(s) {
				t.Fatalf("%s on %q: MatchString differs", c.re, s)
			}
		}
	}
}
