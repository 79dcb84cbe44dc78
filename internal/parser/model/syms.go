package model

import (
	"math"
	"math/bits"
	"unsafe"
)

// Sym is a symbol: the index of a string in a rank's symbol table
// (Rank.Syms). Sym 0 is always "". Names, op types and task types repeat
// hundreds of thousands of times in a profile but take only a few thousand
// distinct values, so the model stores each once and the per-event arrays
// (Tasks, HCCL, FrameworkOps) hold 4-byte symbols instead of strings: the
// arrays are smaller and hold no pointers, so the garbage collector never
// scans them.
//
// A Sym means something only with the table of the rank it came from:
// compare Syms of one rank directly (equal strings have equal Syms), and
// compare strings across ranks (r.Str(r.Name(t))).
type Sym uint32

// Syms is a symbol table: every distinct string once, by Sym. The zero
// value is an empty table ready to use. Only parsers add to it, from the
// one goroutine that fills the rank; once the rank is built, analysis
// passes read it (Str, Lookup) from many goroutines at once, which is safe
// because nothing writes any more.
//
// The string -> Sym index is an open-addressing table of symbols (linear
// probing, at most half full), not a map[string]Sym: a rank's names are
// mostly its collectives', one unique string per op (115 k of the 1 GB
// rank's 119 k symbols), and a slot of 4 bytes beside strs holds them in
// a third of a map's memory on both of the model's live peaks.
//
// Pack moves the strings into one array once the rank is read (analyze:
// once its trace is, with room for the few names the rest of the read
// adds): each was its own allocation behind a 16-byte header (about 50
// bytes a collective's name), and is then its bytes and a 4-byte end.
type Syms struct {
	strs  []string // by Sym; strs[0] is "" once anything was interned; nil once packed
	slots []Sym    // the index: 0 empty, else a Sym; len a power of two
	// packed: the strings' bytes end to end, ends[id] the end of symbol
	// id's (ends[0] = 0, for "")
	bytes []byte
	ends  []uint32
}

// symHash is a hash of the bytes of s, 8 at a time. It has no random seed,
// so two tables that hold the same strings are equal (tests compare
// models whole).
func symHash[T string | []byte](s T) uint64 {
	const k = 0x9e3779b97f4a7c15
	n := len(s)
	h := uint64(n) * k
	var w uint64
	if n >= 8 {
		for i := 0; i+8 <= n; i += 8 {
			hi, lo := bits.Mul64(h^word(s[i:]), k)
			h = hi ^ lo
		}
		if n%8 == 0 {
			return h
		}
		w = word(s[n-8:]) // the last 8 bytes, some hashed already
	} else {
		for i := 0; i < n; i++ {
			w |= uint64(s[i]) << (8 * i)
		}
	}
	hi, lo := bits.Mul64(h^w, k)
	return hi ^ lo
}

// word is the first 8 bytes of s, little-endian.
func word[T string | []byte](s T) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// Intern returns the symbol of s, adding s to the table when it is new.
// Intern("") is 0.
func (t *Syms) Intern(s string) Sym {
	if s == "" {
		return 0
	}
	if len(t.slots) == 0 {
		return t.add(s, 0)
	}
	h := symHash(s)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		id := t.slots[i]
		if id == 0 {
			return t.add(s, h)
		}
		if t.Str(id) == s {
			return id
		}
	}
}

// InternBytes is Intern for a byte slice; it copies b only when the
// string is new, so a lookup of a known name allocates nothing.
func (t *Syms) InternBytes(b []byte) Sym {
	if len(b) == 0 {
		return 0
	}
	if len(t.slots) == 0 {
		return t.add(string(b), 0)
	}
	h := symHash(b)
	mask := uint64(len(t.slots) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		id := t.slots[i]
		if id == 0 {
			return t.add(string(b), h)
		}
		if t.Str(id) == string(b) {
			return id
		}
	}
}

// add appends s (not in the table) with its hash h (any value while the
// index is empty).
func (t *Syms) add(s string, h uint64) Sym {
	var id Sym
	switch {
	case t.ends != nil && uint64(len(t.bytes)+len(s)) <= math.MaxUint32:
		// the strings already handed out keep the array they read
		id = Sym(len(t.ends))
		t.bytes = append(t.bytes, s...)
		t.ends = append(t.ends, uint32(len(t.bytes)))
	case t.ends != nil:
		t.unpack()
		fallthrough
	default:
		if len(t.strs) == 0 {
			t.strs = append(t.strs, "")
		}
		id = Sym(len(t.strs))
		t.strs = append(t.strs, s)
	}
	if 2*t.Len() > len(t.slots) {
		t.grow()
		return id // grow indexed every string, s included
	}
	mask := uint64(len(t.slots) - 1)
	i := h & mask
	for t.slots[i] != 0 {
		i = (i + 1) & mask
	}
	t.slots[i] = id
	return id
}

// grow doubles the index (256 slots at first) and puts every symbol of
// strs in it.
func (t *Syms) grow() {
	n := 2 * len(t.slots)
	if n == 0 {
		n = 256
	}
	for 2*t.Len() > n {
		n *= 2
	}
	t.slots = make([]Sym, n)
	mask := uint64(n - 1)
	for id := 1; id < t.Len(); id++ {
		i := symHash(t.Str(Sym(id))) & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = Sym(id)
	}
}

// Lookup returns the symbol of s and whether s is in the table ("" always
// is, as 0). Passes use it to turn a string comparison over many events
// into a symbol comparison: a string that was never interned matches no
// event.
func (t *Syms) Lookup(s string) (Sym, bool) {
	if s == "" {
		return 0, true
	}
	if len(t.slots) == 0 {
		return 0, false
	}
	mask := uint64(len(t.slots) - 1)
	for i := symHash(s) & mask; ; i = (i + 1) & mask {
		id := t.slots[i]
		if id == 0 {
			return 0, false
		}
		if t.Str(id) == s {
			return id, true
		}
	}
}

// Str returns the string of symbol id ("" for 0 or an id the table does
// not hold).
func (t *Syms) Str(id Sym) string {
	if int(id) < len(t.strs) {
		return t.strs[id]
	}
	return t.packedStr(id)
}

// packedStr is Str of an id strs does not hold: of a packed table, or ""
// for an id the table does not hold.
func (t *Syms) packedStr(id Sym) string {
	if id == 0 || int(id) >= len(t.ends) {
		return ""
	}
	lo, hi := t.ends[id-1], t.ends[id]
	// the bytes are never written again once appended
	return unsafe.String(&t.bytes[lo], hi-lo)
}

// Len returns the number of symbols, "" included.
func (t *Syms) Len() int {
	if t.ends != nil {
		return len(t.ends)
	}
	if len(t.strs) == 0 {
		return 1
	}
	return len(t.strs)
}

// Pack moves the strings into one array (the same symbols, the same
// strings). A table of fewer than packMin strings stays as it is (it
// would save under half a MiB), and so does one of 4 GB of strings or more.
func (t *Syms) Pack() {
	if t.ends != nil || len(t.strs) < packMin {
		return
	}
	n := 0
	for _, s := range t.strs {
		n += len(s)
	}
	if uint64(n) > math.MaxUint32 {
		return
	}
	// (room for the names the rest of a read adds: a few hundred)
	t.bytes = make([]byte, 0, n+n/64)
	t.ends = make([]uint32, len(t.strs), len(t.strs)+len(t.strs)/64)
	for id, s := range t.strs {
		t.bytes = append(t.bytes, s...)
		t.ends[id] = uint32(len(t.bytes))
	}
	t.strs = nil
}

// packMin is the fewest strings Pack packs.
const packMin = 1 << 14

// unpack is Pack undone, for a string that would take the packed bytes
// past 4 GB.
func (t *Syms) unpack() {
	t.strs = make([]string, len(t.ends))
	for id := range t.strs {
		t.strs[id] = t.packedStr(Sym(id))
	}
	t.bytes, t.ends = nil, nil
}

// TaskStrings is a DeviceTask with its symbols resolved to strings.
type TaskStrings struct {
	Start, Dur                          int64
	Name, OpType, TaskType, InputShapes string
	Stream                              int32
	ModelID                             uint32
	Class                               TaskClass
}

// HCCLStrings is an HCCLOp with its symbols resolved to strings.
type HCCLStrings struct {
	Start, Dur                             int64
	Name, Type, HashSuffix, Group, Variant string
}

// OpStrings is a FrameworkOp with its symbol resolved to a string.
type OpStrings struct {
	Start, Dur, Tid int64
	Name            string
}

// Resolved returns the rank's tasks, HCCL ops and framework ops with
// their symbols replaced by strings. Two reads of the same input can number
// their symbols differently (the order names are met depends on how the
// input was read: in parts, from Parquet, metadata first or last), so
// models are compared through this view (tests, debugging dumps).
func (r *Rank) Resolved() ([]TaskStrings, []HCCLStrings, []OpStrings) {
	s := r.Str
	tasks := make([]TaskStrings, len(r.Tasks))
	for i, t := range r.Tasks {
		x := r.Extra(&t)
		tasks[i] = TaskStrings{t.Start, r.Dur(&t), s(x.Name), s(x.OpType), s(x.TaskType), s(x.InputShapes), x.Stream, x.ModelID, x.Class}
	}
	hccl := make([]HCCLStrings, len(r.HCCL))
	for i, h := range r.HCCL {
		hccl[i] = HCCLStrings{h.Start, h.Dur, s(h.Name), s(h.Type), s(h.HashSuffix), s(h.Group), s(h.Variant)}
	}
	ops := make([]OpStrings, len(r.FrameworkOps))
	for i, o := range r.FrameworkOps {
		ops[i] = OpStrings{o.Start, o.Dur, r.Tid(&o), s(o.Name)}
	}
	return tasks, hccl, ops
}
