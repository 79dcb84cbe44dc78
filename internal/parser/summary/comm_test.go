package summary

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/parser/timeparse"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/stretchr/testify/require"
)

// decodeCommunication is the obvious reading of communication.json with
// encoding/json (a full decode into maps): the streaming reader must give
// exactly the same ops.
func decodeCommunication(t *testing.T, data []byte) []model.CommOpInfo {
	t.Helper()
	out, err := jsonCommunication(data)
	require.NoError(t, err)
	return out
}

func jsonCommunication(data []byte) ([]model.CommOpInfo, error) {
	var raw map[string]map[string]map[string]struct {
		Time map[string]json.Number `json:"Communication Time Info"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&raw); err != nil {
		return nil, err
	}
	keys := func(n int, get func(func(string))) []string {
		var ks []string
		get(func(k string) { ks = append(ks, k) })
		sort.Strings(ks)
		return ks
	}
	var out []model.CommOpInfo
	for _, st := range keys(0, func(f func(string)) {
		for k := range raw {
			f(k)
		}
	}) {
		for _, kind := range keys(0, func(f func(string)) {
			for k := range raw[st] {
				f(k)
			}
		}) {
			ops := raw[st][kind]
			for _, key := range keys(0, func(f func(string)) {
				for k := range ops {
					f(k)
				}
			}) {
				if key == "Total Op Info" {
					continue
				}
				tm := ops[key].Time
				op, hash := key, ""
				if i := strings.LastIndexByte(key, '@'); i >= 0 {
					op, hash = key[:i], key[i+1:]
				}
				ci := model.CommOpInfo{Step: st, Kind: kind, Op: op, GroupHash: hash}
				if v, ok := tm["Start Timestamp(us)"]; ok {
					ci.Start, _ = timeparse.MicrosToNanos([]byte(v.String()))
				}
				num := func(k string) float64 { f, _ := tm[k].Float64(); return f }
				ci.ElapseMs, ci.TransitMs, ci.WaitMs = num("Elapse Time(ms)"), num("Transit Time(ms)"), num("Wait Time(ms)")
				ci.SyncMs, ci.IdleMs = num("Synchronization Time(ms)"), num("Idle Time(ms)")
				out = append(out, ci)
			}
		}
	}
	return out, nil
}

// readCommBlocks runs ReadCommunication reading blocks of the given size.
func readCommBlocks(data []byte, block int) ([]model.CommOpInfo, error) {
	defer func(v int) { commBlock = v }(commBlock)
	commBlock = block
	return ReadCommunication(bytes.NewReader(data), "communication.json")
}

func TestCommunicationMatchesFullDecode(t *testing.T) {
	inputs := map[string][]byte{
		"escapes and odd shapes": []byte(`{"step1": {"p2p": {}, "collective": {
			"hcom_a__1_0_1@9": {"Communication Time Info": {"Start Timestamp(us)": "17.5", "Elapse Time(ms)": 1e-3, "Idle Time(ms)": 0}, "Communication Bandwidth Info": {"HCCS": {"x": [1, {"y": "a\"}b"}], "z": null}}},
			"Total Op Info": {"Communication Time Info": {"Elapse Time(ms)": 5}},
			"hcom_\u0062__2_0_1@8": {"Communication Bandwidth Info": {}, "Communication Time Info": {"Wait Time(ms)": 0.25, "Elapse Time(ms)": 0.25}},
			"hcom_a__1_0_1@9": {"Communication Time Info": {"Elapse Time(ms)": 2}}}},
		 "step0": {"collective": {"hcom_c__3_0_1@7": {"Communication Time Info": {"Transit Time(ms)": 3.5, "Elapse Time(ms)": 3.5, "Synchronization Time(ms)": 1}}}}}`),
	}
	dir := t.TempDir()
	s, _ := tracegen.Lookup("ep-fc1-cumsum-steps")
	s.CommJSON = true
	s.Steps = 3
	_, err := tracegen.GenerateRank(dir, s, 0)
	require.NoError(t, err)
	m, _ := filepath.Glob(filepath.Join(dir, "*", tracegen.OutputDir, "communication.json"))
	require.Len(t, m, 1)
	data, err := os.ReadFile(m[0])
	require.NoError(t, err)
	inputs["tracegen"] = data
	for name, data := range inputs {
		want := decodeCommunication(t, data)
		got, err := ReadCommunication(bytes.NewReader(data), name)
		require.NoError(t, err, name)
		require.Equal(t, want, got, name)
		// tokens and skipped values straddling blocks
		for _, block := range []int{1, 7, 64, 1000} {
			got, err := readCommBlocks(data, block)
			require.NoError(t, err, name)
			require.Equal(t, want, got, "%s, block %d", name, block)
		}
	}
	t.Run("samples", func(t *testing.T) {
		d := testutil.SamplesDir(t)
		for _, rel := range []string{
			"Ascend-msinsight/test/data/pytorch/text/level1/rank0_ascend_pt/ASCEND_PROFILER_OUTPUT/communication.json",
			"Ascend-msinsight/server/src/test/test_data/test_rank_0/ASCEND_PROFILER_OUTPUT/communication.json",
		} {
			data, err := os.ReadFile(filepath.Join(d, rel))
			require.NoError(t, err)
			got, err := ReadCommunication(bytes.NewReader(data), rel)
			require.NoError(t, err)
			require.Equal(t, decodeCommunication(t, data), got, rel)
			got, err = readCommBlocks(data, 61)
			require.NoError(t, err)
			require.Equal(t, decodeCommunication(t, data), got, rel)
		}
	})
	// the escaped key resolves like encoding/json does
	got, _ := ReadCommunication(bytes.NewReader(inputs["escapes and odd shapes"]), "x")
	require.Equal(t, "hcom_b__2_0_1", got[2].Op)
	require.Equal(t, 2.0, got[1].ElapseMs) // the repeated key kept its last value

	// truncated anywhere: an error naming the file, never a panic
	small := inputs["escapes and odd shapes"]
	for cut := 0; cut < len(small)-1; cut++ {
		_, err := ReadCommunication(bytes.NewReader(small[:cut]), "cut.json")
		require.Error(t, err, "cut %d", cut)
		require.Contains(t, err.Error(), "cut.json")
		_, err = readCommBlocks(small[:cut], 5)
		require.Error(t, err, "cut %d", cut)
	}
}

// simpleFloat gives strconv.ParseFloat's value for every input it takes.
func TestSimpleFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	inputs := []string{"0", "-0", "0.0", "1.", ".5", "0.06927", "1736410582431971.2", "123456789012345", "1234567890123456", "0.1234567890123456789012", "-3.5", "1e3", "00.5", "", "-", "1..2", "9007199254740993", "0.30000000000000004"}
	for range 200000 {
		ip := strconv.FormatUint(rng.Uint64N(1_000_000_000_000), 10)
		fr := strconv.FormatUint(rng.Uint64N(10_000_000), 10)
		inputs = append(inputs, ip[:rng.IntN(len(ip))+1]+"."+fr[:rng.IntN(len(fr))+1])
	}
	taken := 0
	for _, in := range inputs {
		got, ok := simpleFloat([]byte(in))
		if !ok {
			continue
		}
		taken++
		want, err := strconv.ParseFloat(in, 64)
		require.NoError(t, err, in)
		require.Equal(t, math.Float64bits(want), math.Float64bits(got), in)
	}
	require.Greater(t, taken, 150000)
}

// An op that fails validation is left out and named, never read as zeros:
// no "Communication Time Info" (its key damaged), no "Elapse Time(ms)", or
// an elapsed time that is not transit + wait + idle (a damaged digit).
func TestCommunicationValidation(t *testing.T) {
	data := []byte(`{"step1": {"collective": {
		"hcom_a__1_0_1@9": {"Communication Time Info": {"Start Timestamp(us)": 17.5, "Elapse Time(ms)": 1.5, "Transit Time(ms)": 1, "Wait Time(ms)": 0.25, "Idle Time(ms)": 0.25}},
		"hcom_b__2_0_1@9": {"Communication Tixe Info": {"Start Timestamp(us)": 18.5, "Elapse Time(ms)": 1.5}},
		"hcom_c__3_0_1@9": {"Communication Time Info": {"Start Timestamp(us)": 19.5, "Elapse Tim(ms)": 1.5}},
		"hcom_d__4_0_1@9": {"Communication Time Info": {"Start Timestamp(us)": 20.5, "Elapse Time(ms)": 1.9, "Transit Time(ms)": 1, "Wait Time(ms)": 0.25, "Idle Time(ms)": 0.25}}}}}`)
	got, err := ReadCommunication(bytes.NewReader(data), "communication.json")
	require.EqualError(t, err, `communication.json: skipped 3 op(s) that fail validation (first "step1/collective/hcom_b__2_0_1@9: no Communication Time Info")`)
	require.Len(t, got, 1)
	require.Equal(t, "hcom_a__1_0_1", got[0].Op)
	require.Equal(t, 1.5, got[0].ElapseMs)
}

// A key cut before its "@<group hash>" (a damaged file: every writer puts
// one there) loses the op's group: the op is skipped and said so, in
// either shape of msprof's file too.
func TestCommunicationKeyWithoutHash(t *testing.T) {
	for name, data := range map[string]string{
		"torch_npu": `{"step1": {"collective": {
			"hcom_a__1_0_1@9": {"Communication Time Info": {"Start Timestamp(us)": 17.5, "Elapse Time(ms)": 1.5}},
			"hcom_reduceScatter_795190700544115": {"Communication Time Info": {"Start Timestamp(us)": 18.5, "Elapse Time(ms)": 1.5}},
			"@9": {"Communication Time Info": {"Start Timestamp(us)": 19.5, "Elapse Time(ms)": 1.5}}}}}`,
		"msprof by op": `{"hcom_a__1_0_1@9": {"Communication Time Info": {"Start Timestamp(us)": 17.5, "Elapse Time(ms)": 1.5}},
			"hcom_reduceScatter_795190700544115": {"Communication Time Info": {"Start Timestamp(us)": 18.5, "Elapse Time(ms)": 1.5}},
			"@9": {"Communication Time Info": {"Start Timestamp(us)": 19.5, "Elapse Time(ms)": 1.5}},
			"Total Op Info": {"Communication Time Info": {"Elapse Time(ms)": 4.5}}}`,
	} {
		read := ReadCommunication
		if name != "torch_npu" {
			read = ReadMsprofCommunication
		}
		got, err := read(bytes.NewReader([]byte(data)), "communication.json")
		require.Error(t, err, name)
		require.Contains(t, err.Error(), `skipped 2 op(s) that fail validation`, name)
		require.Contains(t, err.Error(), `no \"@<group hash>\" in its key`, name)
		require.Len(t, got, 1, name)
		require.Equal(t, "hcom_a__1_0_1", got[0].Op, name)
		require.Equal(t, "9", got[0].GroupHash, name)
	}
}

// A key holding a control character (bytes written into it: a raw tab,
// which no JSON string holds unescaped; collective names are printable)
// is damaged: the op is skipped and said so, in every shape.
func TestCommunicationKeyWithControlChar(t *testing.T) {
	const bad = "hcom_reduce}71.a6\tb[[a:a.Scatter__115_1_1@9"
	for name, data := range map[string]string{
		"torch_npu": `{"step1": {"collective": {
			"hcom_a__1_0_1@9": {"Communication Time Info": {"Start Timestamp(us)": 17.5, "Elapse Time(ms)": 1.5}},
			"` + bad + `": {"Communication Time Info": {"Start Timestamp(us)": 18.5, "Elapse Time(ms)": 1.5}}}}}`,
		"msprof by op": `{"hcom_a__1_0_1@9": {"Communication Time Info": {"Start Timestamp(us)": 17.5, "Elapse Time(ms)": 1.5}},
			"` + bad + `": {"Communication Time Info": {"Start Timestamp(us)": 18.5, "Elapse Time(ms)": 1.5}},
			"Total Op Info": {"Communication Time Info": {"Elapse Time(ms)": 3}}}`,
	} {
		read := ReadCommunication
		if name != "torch_npu" {
			read = ReadMsprofCommunication
		}
		got, err := read(bytes.NewReader([]byte(data)), "communication.json")
		require.Error(t, err, name)
		require.Contains(t, err.Error(), `skipped 1 op(s) that fail validation`, name)
		require.Contains(t, err.Error(), `a control character in its key`, name)
		require.Len(t, got, 1, name)
		require.Equal(t, "hcom_a__1_0_1", got[0].Op, name)
	}
}
