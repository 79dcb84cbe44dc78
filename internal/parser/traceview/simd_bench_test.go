//go:build goexperiment.simd && amd64

package traceview

// A measurement, not product code: what a simdjson-style stage 1 (a
// structural index built 64 bytes at a time with AVX2 compares) costs on
// this machine, next to BenchmarkWalk (the string-aware byte loop) and
// BenchmarkRead (the reader). Built only with GOEXPERIMENT=simd on AMD64:
//
//	GOEXPERIMENT=simd NPUPROF_BENCH_SIZES=200MB go test -run '^$' -bench 'Walk' -benchtime 3x -count 3 ./internal/parser/traceview/
//
// Stage 1 per 64-byte block: bitmaps of '"', '\\', '{', '}' and the other
// structurals ('[' ']' ':' ',') from two 32-byte compares each; the quotes
// escaped by an odd run of backslashes removed (simdjson's branchless
// find_escaped, carrying a run across blocks); the in-string mask as the
// prefix XOR of the remaining quotes (a carry-less multiply by all ones, or
// a shift/xor cascade); the structurals outside strings. Top-level events
// are counted as BenchmarkWalk counts them: a '}' that brings the brace
// depth to 0.

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"math/bits"
	"math/rand"
	"os"
	"path/filepath"
	"simd/archsimd"
	"strings"
	"testing"

	"github.com/npuprof/npuprof/internal/bench/benchdata"
	"github.com/npuprof/npuprof/internal/testutil"
)

// stage1 is the state carried from one 64-byte block to the next.
type stage1 struct {
	prevEscaped  uint64 // 1 when the block's first byte is escaped
	prevInString uint64 // all ones when the block starts inside a string
	depth        int    // brace depth (events and the index walk)
	events       int    // '}' that closed depth 1
	structurals  int    // '{' '}' '[' ']' ':' ',' outside strings
	posSum       uint64 // index walk: sum of the structurals' offsets
	clmul        bool   // prefix XOR by carry-less multiply, else shifts
}

// The constants, left zero on a CPU without AVX2 (the tests and
// benchmarks then skip) so that merely loading the package cannot fault.
var (
	haveAVX2 = archsimd.X86.AVX2() && archsimd.X86.AVX()
	vQuote   = bcast('"')
	vBack    = bcast('\\')
	vOpen    = bcast('{')
	vClose   = bcast('}')
	vColon   = bcast(':')
	vComma   = bcast(',')
	v20      = bcast(0x20)
	vOnes    = func() (v archsimd.Uint64x2) {
		if haveAVX2 {
			v = archsimd.BroadcastUint64x2(^uint64(0))
		}
		return
	}()
)

func bcast(c byte) (v archsimd.Uint8x32) {
	if haveAVX2 {
		v = archsimd.BroadcastUint8x32(c)
	}
	return
}

func needAVX2(tb testing.TB) {
	if !haveAVX2 {
		tb.Skip("the CPU has no AVX2")
	}
}

// masks32 classifies 32 bytes: quotes, backslashes, '{', '}', and all six
// structurals. c|0x20 is '{' only for '{' and '[', '}' only for '}' and
// ']'.
func masks32(b []byte) (q, bs, open, cl, st uint32) {
	v := archsimd.LoadUint8x32Slice(b)
	l := v.Or(v20)
	o := v.Equal(vOpen)
	c := v.Equal(vClose)
	q = v.Equal(vQuote).ToBits()
	bs = v.Equal(vBack).ToBits()
	open = o.ToBits()
	cl = c.ToBits()
	st = l.Equal(vOpen).Or(l.Equal(vClose)).Or(v.Equal(vColon)).Or(v.Equal(vComma)).ToBits()
	return
}

const evenBits = 0x5555555555555555

// escaped returns the bytes escaped by a backslash (simdjson's
// find_escaped_branchless): a run of backslashes escapes the byte after it
// when its length is odd. prev carries a run that ends a block.
func escaped(bs uint64, prev *uint64) uint64 {
	bs &^= *prev
	follows := bs<<1 | *prev
	oddStarts := bs &^ evenBits &^ follows
	seqEven, carry := bits.Add64(oddStarts, bs, 0)
	*prev = carry
	return (evenBits ^ seqEven<<1) & follows
}

func prefixXorShift(x uint64) uint64 {
	x ^= x << 1
	x ^= x << 2
	x ^= x << 4
	x ^= x << 8
	x ^= x << 16
	x ^= x << 32
	return x
}

func prefixXorClmul(x uint64) uint64 {
	return archsimd.BroadcastUint64x2(x).CarrylessMultiply(0, 0, vOnes).GetElem(0)
}

// block classifies one 64-byte block and returns its structurals outside
// strings and its '{' and '}' outside strings.
func (s *stage1) block(b []byte) (st, open, close uint64) {
	b = b[:64]
	q0, bs0, o0, c0, st0 := masks32(b[:32])
	q1, bs1, o1, c1, st1 := masks32(b[32:])
	q := uint64(q0) | uint64(q1)<<32
	bs := uint64(bs0) | uint64(bs1)<<32
	if bs|s.prevEscaped != 0 {
		q &^= escaped(bs, &s.prevEscaped)
	}
	var in uint64
	if s.clmul {
		in = prefixXorClmul(q)
	} else {
		in = prefixXorShift(q)
	}
	in ^= s.prevInString
	s.prevInString = uint64(int64(in) >> 63)
	st = (uint64(st0) | uint64(st1)<<32) &^ in
	open = (uint64(o0) | uint64(o1)<<32) &^ in
	close = (uint64(c0) | uint64(c1)<<32) &^ in
	return
}

// count runs stage 1 over full 64-byte blocks of b and counts events and
// structurals without visiting them one by one: only a block whose
// closing braces could bring the depth to 0 is walked, brace by brace.
func (s *stage1) count(b []byte) {
	for len(b) >= 64 {
		st, open, close := s.block(b)
		b = b[64:]
		s.structurals += bits.OnesCount64(st)
		nc := bits.OnesCount64(close)
		if s.depth > nc {
			s.depth += bits.OnesCount64(open) - nc
			continue
		}
		for m := open | close; m != 0; m &= m - 1 {
			if open&(m&-m) != 0 {
				s.depth++
			} else if s.depth--; s.depth == 0 {
				s.events++
			}
		}
	}
}

// walk runs stage 1 over full 64-byte blocks of b (at offset base of the
// input) and then visits every structural, as a stage 2 would: it reads
// the byte, keeps the brace depth and sums the offsets.
func (s *stage1) walk(b []byte, base uint64) {
	for i := 0; i+64 <= len(b); i += 64 {
		st, _, _ := s.block(b[i:])
		blk := b[i : i+64]
		for ; st != 0; st &= st - 1 {
			k := bits.TrailingZeros64(st)
			s.posSum += base + uint64(i+k)
			s.structurals++
			switch blk[k&63] {
			case '{':
				s.depth++
			case '}':
				if s.depth--; s.depth == 0 {
					s.events++
				}
			}
		}
	}
}

// run feeds r through stage 1 in reads of len(buf)-64 bytes, keeping the
// bytes of a short last block for the next read and padding the final one
// with spaces.
func (s *stage1) run(r io.Reader, buf []byte, index bool) error {
	have := 0
	var off uint64
	do := func(b []byte) {
		if index {
			s.walk(b, off)
		} else {
			s.count(b)
		}
		off += uint64(len(b))
	}
	for {
		n, err := r.Read(buf[have:])
		have += n
		full := have &^ 63
		do(buf[:full])
		have = copy(buf, buf[full:have])
		if err == io.EOF {
			if have > 0 {
				for i := have; i < 64; i++ {
					buf[i] = ' '
				}
				do(buf[:64])
			}
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// scalarIndex is the reference: BenchmarkWalk's loop, also counting the
// structurals outside strings and summing their offsets.
func scalarIndex(data []byte) (events, structurals int, posSum uint64) {
	inStr, esc := false, false
	depth := 0
	for i, c := range data {
		if inStr {
			if esc {
				esc = false
			} else if c == '\\' {
				esc = true
			} else if c == '"' {
				inStr = false
			}
			continue
		}
		switch c {
		case '"':
			inStr = true
		case '{', '}', '[', ']', ':', ',':
			structurals++
			posSum += uint64(i)
			if c == '{' {
				depth++
			} else if c == '}' {
				if depth--; depth == 0 {
					events++
				}
			}
		}
	}
	return
}

// checkStage1 compares both stage-1 variants (each prefix XOR), fed
// through a small buffer so blocks and reads cut everywhere, with the
// scalar reference.
func checkStage1(t *testing.T, name string, data []byte) {
	t.Helper()
	needAVX2(t)
	ev, ns, ps := scalarIndex(data)
	for _, bufLen := range []int{64 + 64, 64 + 100, 64 + 1<<16} {
		for _, clmul := range []bool{false, true} {
			for _, index := range []bool{false, true} {
				s := stage1{clmul: clmul}
				if err := s.run(bytes.NewReader(data), make([]byte, bufLen), index); err != nil {
					t.Fatal(err)
				}
				what := fmt.Sprintf("%s (buffer %d, clmul %v, index %v)", name, bufLen, clmul, index)
				if s.events != ev || s.structurals != ns {
					t.Fatalf("%s: %d events, %d structurals; scalar %d, %d", what, s.events, s.structurals, ev, ns)
				}
				if index && s.posSum != ps {
					t.Fatalf("%s: offsets sum to %d, scalar %d", what, s.posSum, ps)
				}
			}
		}
	}
}

func TestStage1Tricky(t *testing.T) {
	cases := map[string]string{
		"escaped quote":        `[{"a":"x\"}{","b":1},{"c":[1,2]}]`,
		"escaped backslash":    `[{"a":"x\\"},{"b":"\\\\\"}\\"}]`,
		"braces in strings":    `[{"name":"{[:,]}","args":{"k":"}}}"}},{"x":"{"}]`,
		"empty strings":        `[{"":""},{"a":"","b":[]}]`,
		"unicode escapes":      `[{"a":"\u0022{\u005c"},{"b":"\/"}]`,
		"quote at block start": strings.Repeat(" ", 63) + `[{"a":"}"},{"b":"{"}]`,
		"object at top level":  `{"traceEvents":[{"ph":"X","args":{"a":{"b":{}}}},{}],"x":"}"}`,
	}
	for name, c := range cases {
		checkStage1(t, name, []byte(c))
	}
	// backslash runs of every length ending at every position around a
	// 64-byte boundary, escaping a quote or a brace
	for run := 1; run <= 70; run++ {
		for end := 40; end <= 140; end++ {
			for _, after := range []string{`"`, `}`, `x`} {
				pre := `[{"a":"`
				pad := end - len(pre) - run
				if pad < 0 {
					continue
				}
				s := pre + strings.Repeat("y", pad) + strings.Repeat(`\`, run) + after
				if run%2 == 0 && after == `"` {
					s += `},{"b":"}"}]` // the quote closed the string
				} else {
					s += `"},{"b":"}"}]`
				}
				checkStage1(t, fmt.Sprintf("run %d ending at %d then %s", run, end, after), []byte(s))
			}
		}
	}
}

// TestStage1Random compares with the reference on random valid strings
// made of the bytes that matter, packed densely.
func TestStage1Random(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	alpha := []string{`\\`, `\"`, `\n`, `{`, `}`, `[`, `]`, `:`, `,`, `a`, `\`}
	for n := 0; n < 300; n++ {
		var b strings.Builder
		b.WriteString("[")
		for e := rng.Intn(20); e >= 0; e-- {
			b.WriteString(`{"k":"`)
			for i := rng.Intn(150); i > 0; i-- {
				a := alpha[rng.Intn(len(alpha)-1)] // a lone '\' only as `\\`
				b.WriteString(a)
			}
			b.WriteString(`","v":[1,{"w":2}]},`)
		}
		b.WriteString(`{}]`)
		checkStage1(t, fmt.Sprint("random ", n), []byte(b.String()))
	}
}

func TestStage1Traces(t *testing.T) {
	checkStage1(t, "small in-memory trace", benchdata.SmallTrace(t))
	var paths []string
	err := filepath.WalkDir(testutil.SamplesDir(t), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "trace_view.json" {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	withBackslash := 0
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if bytes.IndexByte(data, '\\') >= 0 {
			withBackslash++
		}
		checkStage1(t, p, data)
	}
	if len(paths) == 0 || withBackslash == 0 {
		t.Fatalf("%d sample traces, %d with a backslash: expected some of each", len(paths), withBackslash)
	}
}

// BenchmarkWalkSIMD is BenchmarkWalk with stage 1 in place of the byte
// loop: the same file, the same 1 MiB reads, the same event count.
func BenchmarkWalkSIMD(b *testing.B) {
	benchStage1(b, false)
}

// BenchmarkWalkSIMDIndex adds what a stage 2 would at least do: visit every
// structural (TrailingZeros64), read its byte, keep the depth, sum offsets.
func BenchmarkWalkSIMDIndex(b *testing.B) {
	benchStage1(b, true)
}

func benchStage1(b *testing.B, index bool) {
	needAVX2(b)
	sizes, _ := benchdata.Sizes()
	if len(sizes) == 0 {
		b.Skip("set NPUPROF_BENCH_SIZES (e.g. 200MB)")
	}
	for _, sz := range sizes {
		p := benchdata.TraceFile(b, sz)
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		want := walkEvents(b, p)
		for _, clmul := range []bool{true, false} {
			name := sz.Name + "/shift"
			if clmul {
				name = sz.Name + "/clmul"
			}
			b.Run(name, func(b *testing.B) {
				b.SetBytes(st.Size())
				buf := make([]byte, 1<<20+64)
				var s stage1
				cpu0 := benchdata.CPUTime()
				for b.Loop() {
					f, err := os.Open(p)
					if err != nil {
						b.Fatal(err)
					}
					s = stage1{clmul: clmul}
					err = s.run(f, buf, index)
					f.Close()
					if err != nil {
						b.Fatal(err)
					}
					if s.events != want {
						b.Fatalf("%d events, BenchmarkWalk's loop counts %d", s.events, want)
					}
				}
				benchdata.ReportCPU(b, st.Size(), cpu0)
				b.ReportMetric(float64(s.structurals)/float64(st.Size())*1e3, "structurals/KB")
			})
		}
	}
}

// walkEvents counts the events of a file with the scalar reference of the
// stage-1 tests (scalarIndex), which counts as BenchmarkWalk does.
func walkEvents(b *testing.B, p string) int {
	data, err := os.ReadFile(p)
	if err != nil {
		b.Fatal(err)
	}
	ev, _, _ := scalarIndex(data)
	if ev == 0 {
		b.Fatal("no events")
	}
	return ev
}

// BenchmarkWalkReadOnly is the floor under all the walks: the same 1 MiB
// reads of the file and nothing else.
func BenchmarkWalkReadOnly(b *testing.B) {
	sizes, _ := benchdata.Sizes()
	if len(sizes) == 0 {
		b.Skip("set NPUPROF_BENCH_SIZES (e.g. 200MB)")
	}
	for _, sz := range sizes {
		p := benchdata.TraceFile(b, sz)
		st, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(sz.Name, func(b *testing.B) {
			b.SetBytes(st.Size())
			buf := make([]byte, 1<<20)
			cpu0 := benchdata.CPUTime()
			for b.Loop() {
				f, err := os.Open(p)
				if err != nil {
					b.Fatal(err)
				}
				total := 0
				for {
					n, err := f.Read(buf)
					total += n
					if err != nil {
						break
					}
				}
				f.Close()
				if int64(total) != st.Size() {
					b.Fatalf("read %d of %d bytes", total, st.Size())
				}
			}
			benchdata.ReportCPU(b, st.Size(), cpu0)
		})
	}
}
