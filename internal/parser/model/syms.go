package model

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
// compare strings across ranks (r.Str(t.Name)).
type Sym uint32

// Syms is a symbol table: every distinct string once, by Sym. The zero
// value is an empty table ready to use. Only parsers add to it, from the
// one goroutine that fills the rank; once the rank is built, analysis
// passes read it (Str, Lookup) from many goroutines at once, which is safe
// because nothing writes any more.
type Syms struct {
	strs []string       // by Sym; strs[0] is "" once anything was interned
	ids  map[string]Sym // string -> Sym, "" excluded
}

// Intern returns the symbol of s, adding s to the table when it is new.
// Intern("") is 0.
func (t *Syms) Intern(s string) Sym {
	if s == "" {
		return 0
	}
	if id, ok := t.ids[s]; ok {
		return id
	}
	return t.add(s)
}

// InternBytes is Intern for a byte slice; it copies b only when the
// string is new, so a lookup of a known name allocates nothing.
func (t *Syms) InternBytes(b []byte) Sym {
	if len(b) == 0 {
		return 0
	}
	if id, ok := t.ids[string(b)]; ok {
		return id
	}
	return t.add(string(b))
}

func (t *Syms) add(s string) Sym {
	if t.ids == nil {
		t.ids = make(map[string]Sym, 256)
	}
	if len(t.strs) == 0 {
		t.strs = append(t.strs, "")
	}
	id := Sym(len(t.strs))
	t.strs = append(t.strs, s)
	t.ids[s] = id
	return id
}

// Lookup returns the symbol of s and whether s is in the table ("" always
// is, as 0). Passes use it to turn a string comparison over many events
// into a symbol comparison: a string that was never interned matches no
// event.
func (t *Syms) Lookup(s string) (Sym, bool) {
	if s == "" {
		return 0, true
	}
	id, ok := t.ids[s]
	return id, ok
}

// Str returns the string of symbol id ("" for 0 or an id the table does
// not hold).
func (t *Syms) Str(id Sym) string {
	if int(id) < len(t.strs) {
		return t.strs[id]
	}
	return ""
}

// Len returns the number of symbols, "" included.
func (t *Syms) Len() int {
	if len(t.strs) == 0 {
		return 1
	}
	return len(t.strs)
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
		tasks[i] = TaskStrings{t.Start, t.Dur, s(t.Name), s(x.OpType), s(x.TaskType), s(x.InputShapes), t.Stream, x.ModelID, t.Class}
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
