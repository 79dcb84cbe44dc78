package summary

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/parser/model"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/stretchr/testify/require"
)

// msprofByDecode is the obvious reading of msprof's communication.json: a
// full decode, the keyed-by-op shape wrapped as msprof-analyze does (one
// "step" block, p2p ops apart), then read as torch_npu's shape. The
// streaming reader must give the same ops.
func msprofByDecode(data []byte) ([]model.CommOpInfo, error) {
	var top map[string]map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, err
	}
	byOp := false
	for _, v := range top {
		if _, ok := v["Communication Time Info"]; ok {
			byOp = true
		}
	}
	if !byOp {
		return ReadCommunication(bytes.NewReader(data), "communication.json")
	}
	wrapped := map[string]map[string]map[string]json.RawMessage{"step": {"collective": {}, "p2p": {}}}
	for k := range top {
		l := strings.ToLower(k)
		if strings.HasPrefix(l, "total") {
			continue
		}
		b, _ := json.Marshal(top[k])
		kind := "collective"
		for _, p := range []string{"hcom_send", "hcom_receive", "hcom_batchsendrecv"} {
			if strings.HasPrefix(l, p) {
				kind = "p2p"
			}
		}
		wrapped["step"][kind][k] = b
	}
	b, _ := json.Marshal(wrapped)
	return ReadCommunication(bytes.NewReader(b), "communication.json")
}

// msprof's analyze/communication.json, of either shape, is streamed and
// gives the ops a full decode gives: the generator's msprof export, the
// keyed-by-op shape with totals, p2p ops and odd members, and the
// torch_npu shape; in blocks down to one byte.
func TestMsprofCommunicationMatchesFullDecode(t *testing.T) {
	inputs := map[string][]byte{
		"by op": []byte(`{"hcom_allReduce__586_0_1@17522688603477080586": {"Communication Time Info": {"Start Timestamp(us)": 1736408883704643.212, "Elapse Time(ms)": 79.5, "Transit Time(ms)": 1.5, "Wait Time(ms)": 70, "Synchronization Time(ms)": 60, "Idle Time(ms)": 8}, "Communication Bandwidth Info": {"HCCS": {"Size Distribution": {"0.5": [3, 0.1]}}}},
			"hcom_send__822_0_1@1": {"Communication Bandwidth Info": {}, "Communication Time Info": {"Elapse Time(ms)": 1}},
			"HCOM_Receive__823_0_1@1": {"Communication Time Info": {"Elapse Time(ms)": "2"}},
			"Total Op Info": {"Communication Time Info": {"Elapse Time(ms)": 80.5}},
			"totals": {},
			"hcom_allGather__9_0_1@5": {"Communication Time Info": {"Elapse Time(ms)": 0.5, "Transit Time(ms)": 0.25, "Wait Time(ms)": 0.25, "Idle Time(ms)": 0}}}`),
		"total first": []byte(`{"Total Op Info": {"Communication Time Info": {"Elapse Time(ms)": 80.5}}, "hcom_allReduce__1_0_1@2": {"Communication Time Info": {"Elapse Time(ms)": 1}}}`),
		"steps":       []byte(`{"step1": {"collective": {"hcom_a__1_0_1@9": {"Communication Time Info": {"Elapse Time(ms)": 2}}, "Total Op Info": {}}, "p2p": {}}, "step0": {"collective": {"hcom_b__1_0_1@9": {"Communication Time Info": {"Elapse Time(ms)": 3}}}}}`),
		"empty":       []byte(`{}`),
	}
	dir := t.TempDir()
	s, _ := tracegen.Lookup("ep-fc1-cumsum")
	s.CommJSON, s.Ranks, s.Steps = true, 1, 2
	_, err := tracegen.GenerateLayout(dir, s, tracegen.LayoutMsprofText)
	require.NoError(t, err)
	m, _ := filepath.Glob(filepath.Join(dir, "*", "analyze", "communication.json"))
	require.Len(t, m, 1)
	data, err := os.ReadFile(m[0])
	require.NoError(t, err)
	inputs["tracegen msprof"] = data
	for name, data := range inputs {
		want, err := msprofByDecode(data)
		require.NoError(t, err, name)
		got, err := ReadMsprofCommunication(bytes.NewReader(data), name)
		require.NoError(t, err, name)
		require.Equal(t, want, got, name)
		if name != "empty" {
			require.NotEmpty(t, got, name)
		}
		for _, block := range []int{1, 7, 64} {
			func() {
				defer func(v int) { commBlock = v }(commBlock)
				commBlock = block
				got, err := ReadMsprofCommunication(bytes.NewReader(data), name)
				require.NoError(t, err, name)
				require.Equal(t, want, got, "%s, block %d", name, block)
			}()
		}
	}
	got, _ := ReadMsprofCommunication(bytes.NewReader(inputs["by op"]), "x")
	kinds := map[string]string{}
	for _, o := range got {
		kinds[o.Op] = o.Kind
	}
	require.Equal(t, map[string]string{"hcom_allReduce__586_0_1": "collective", "hcom_allGather__9_0_1": "collective",
		"hcom_send__822_0_1": "p2p", "HCOM_Receive__823_0_1": "p2p"}, kinds)

	// damaged: an error naming the file, or the op left out and counted
	for name, bad := range map[string]string{
		"not an object":        `[1,2]`,
		"brace closed early":   `{"hcom_a__1_0_1@9": {"Communication Time Info": {"Elapse Time(ms)": 1}}}, "hcom_b__1_0_1@9": {"Communication Time Info": {"Elapse Time(ms)": 1}}}`,
		"member not object":    `{"hcom_a__1_0_1@9": 5}`,
		"cut":                  `{"hcom_a__1_0_1@9": {"Communication Time Info": {"Elapse Time(ms)": 1}`,
		"first key damaged":    `{"hcom_a__1_0_1@9": {"Communication Time Infp": {"Elapse Time(ms)": 1}}}`,
		"key of an op damaged": `{"hcom_a__1_0_1@9": {"Communication Time Info": {"Elapse Time(ms)": 1}}, "hcom_b__1_0_1@9": {"Communication Time Infp": {"Elapse Time(ms)": 1}}}`,
	} {
		ops, err := ReadMsprofCommunication(strings.NewReader(bad), "c.json")
		require.Error(t, err, name)
		require.Contains(t, err.Error(), "c.json", name)
		require.LessOrEqual(t, len(ops), 1, name)
	}
}

// Anything after the top object (a damaged brace that closed it early)
// refuses torch_npu's communication.json too: the ops after it would be
// lost without a word.
func TestCommunicationTrailingDataRefused(t *testing.T) {
	data := `{"step1": {"collective": {"hcom_a__1_0_1@9": {"Communication Time Info": {"Elapse Time(ms)": 1}}}}}}, "step2": {}}` + "\n"
	_, err := ReadCommunication(strings.NewReader(data), "communication.json")
	require.ErrorContains(t, err, "communication.json: expected communication.json")
	require.ErrorContains(t, err, "more data after the object ends (a damaged brace?)")
	_, err = ReadCommunication(strings.NewReader(`{"step1": {}}`+" \n\t"), "communication.json")
	require.NoError(t, err)
}

// genComm is a communication.json made while it is read: ops ops, each
// with a bandwidth table of pad "Size Distribution" entries, in
// torch_npu's shape or msprof's keyed-by-op shape. It allocates nothing
// per op, so what a read allocates is the reader's.
type genComm struct {
	ops, pad, i int
	byOp        bool
	buf, store  []byte
	done        bool
}

func (g *genComm) Read(p []byte) (int, error) {
	for len(g.buf) == 0 {
		if g.done {
			return 0, io.EOF
		}
		g.next()
	}
	n := copy(p, g.buf)
	g.buf = g.buf[n:]
	return n, nil
}

// size is the bytes the file holds.
func (g *genComm) size() int64 {
	c := *g
	c.buf, c.store = nil, nil
	var n int64
	var p [1 << 16]byte
	for {
		k, err := c.Read(p[:])
		n += int64(k)
		if err != nil {
			return n
		}
	}
}

func (g *genComm) next() {
	b := g.store[:0]
	defer func() { g.store = b[:0] }()
	switch {
	case g.i == 0 && g.byOp:
		b = append(b, '{')
	case g.i == 0:
		b = append(b, `{"step1": {"collective": {`...)
	case g.i == g.ops:
		if g.byOp {
			b = append(b, "}\n"...)
		} else {
			b = append(b, "}}}\n"...)
		}
		g.buf, g.done = b, true
		return
	default:
		b = append(b, ",\n"...)
	}
	b = append(b, `"hcom_allReduce__`...)
	b = strconv.AppendInt(b, int64(g.i), 10)
	b = append(b, `_0_1@17522688603477080586": {"Communication Time Info": {"Start Timestamp(us)": 1736408883704643.212, "Elapse Time(ms)": 0.5, "Transit Time(ms)": 0.25, "Wait Time(ms)": 0.125, "Synchronization Time(ms)": 0.1, "Idle Time(ms)": 0.125}, "Communication Bandwidth Info": {"RDMA": {"Transit Size(MB)": 0, "Size Distribution": {`...)
	for j := 0; j < g.pad; j++ {
		if j > 0 {
			b = append(b, ", "...)
		}
		b = append(b, '"')
		b = strconv.AppendInt(b, int64(j), 10)
		b = append(b, `.5": [12, 0.0371]`...)
	}
	b = append(b, "}}}}"...)
	g.buf = b
	g.i++
}

// allocated is the bytes fn allocates.
func allocated(fn func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	fn()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// Both communication.json readers stream: a file of 2,000 ops holding 4 MB
// or 64 MB of bandwidth tables costs the same memory, a small part of the
// small file, and never the file's size (issue 31: msprof's took about
// six times it). What grows is the ops kept (about 200 bytes each).
func TestCommunicationMemoryDoesNotGrowWithTheFile(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 130 MB")
	}
	for _, byOp := range []bool{false, true} {
		read := ReadCommunication
		if byOp {
			read = ReadMsprofCommunication
		}
		var small, large uint64
		var smallSize, largeSize int64
		for _, pad := range []int{80, 1400} {
			g := &genComm{ops: 2000, pad: pad, byOp: byOp}
			size := g.size()
			var ops []model.CommOpInfo
			var err error
			n := allocated(func() { ops, err = read(g, "communication.json") })
			require.NoError(t, err)
			require.Len(t, ops, 2000)
			require.Equal(t, 0.5, ops[1999].ElapseMs)
			t.Logf("keyed by op %v: %d ops in %.1f MB: %.2f MB allocated", byOp, len(ops), float64(size)/1e6, float64(n)/1e6)
			if pad == 80 {
				small, smallSize = n, size
			} else {
				large, largeSize = n, size
			}
		}
		require.Greater(t, largeSize, 60*smallSize/4, "the large file is much larger")
		require.Greater(t, largeSize, int64(60<<20))
		// (one read block, 1 MiB, may come from the pool in one run and
		// not the other)
		require.Less(t, large, small+uint64(commBlock)+(512<<10), "keyed by op %v: memory grows with the file: %d bytes for %d, %d for %d", byOp, small, smallSize, large, largeSize)
		require.Less(t, large, uint64(4<<20), "keyed by op %v: %d bytes allocated reading %d", byOp, large, largeSize)
	}
}
