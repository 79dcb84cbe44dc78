package vllmconf

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// A misspelt key is named with the key meant when one key is that close;
// a known key passes; a key far from every known one gets no suggestion;
// a key as close to two known keys is ambiguous.
func TestCheckKeys(t *testing.T) {
	got := CheckKeys("--compilation-config", []string{"cudagraph_mode", "cudagraph_capture_size"})
	require.Len(t, got, 1)
	require.Equal(t, "cudagraph_capture_size", got[0].Key)
	require.Equal(t, "cudagraph_capture_sizes", got[0].Meant)
	require.Contains(t, got[0].Message(), `--compilation-config key "cudagraph_capture_size" is not one the config takes`)
	require.Contains(t, got[0].Message(), `did you mean "cudagraph_capture_sizes"?`)

	got = CheckKeys("--additional-config", []string{"enable_flashcom1", "eplb_config", "zzz_totally_else"})
	require.Len(t, got, 2)
	require.Equal(t, "enable_flashcomm1", got[0].Meant)
	require.Empty(t, got[1].Meant)
	require.Empty(t, got[1].Nearest, "nothing is close to it")
	require.NotContains(t, got[1].Message(), "did you mean")

	// "dynamic_eplx" is one edit from dynamic_eplb only; "gate_eplb" is known
	require.Empty(t, CheckKeys("--additional-config", []string{"gate_eplb", "eplb_config"}))
	got = CheckKeys("--additional-config", []string{"dynamic_eplx"})
	require.Equal(t, "dynamic_eplb", got[0].Meant)

	// two known keys one edit away: ambiguous, named, not read
	got = CheckKeys("--compilation-config", []string{"use_inductox"})
	require.Equal(t, "use_inductor", got[0].Meant)
	amb := checkAmbiguous()
	require.Empty(t, amb.Meant)
	require.Len(t, amb.Nearest, 2)
	require.Contains(t, amb.Message(), "ambiguous")

	require.Nil(t, CheckKeys("--max-num-seqs", []string{"x"}), "not a JSON config flag")
}

// checkAmbiguous checks a key one edit from two known keys (a made-up
// pair: the real key sets have none that close).
func checkAmbiguous() UnknownKey {
	saved := CompilationConfigKeys
	defer func() { CompilationConfigKeys = saved }()
	CompilationConfigKeys = []string{"abcd_x", "abcd_y"}
	return CheckKeys("--compilation-config", []string{"abcd_z"})[0]
}
