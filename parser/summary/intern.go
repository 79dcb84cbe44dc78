package summary

import (
	"hash/maphash"
	"slices"
	"unsafe"
)

// interner keeps one copy of each string: an open-addressing table keyed
// by maphash of the bytes (the hash's top half kept in the slot, so a
// probe rarely touches a string that does not match), so a lookup of a
// string seen before neither allocates nor goes through a map of strings.
// The last string returned is checked first (rows of one kind come in
// runs). The zero value is ready; use one per column, so the small
// vocabularies (task types, cores) stay in a small table.
//
// Every string also gets a number (see KernelRow.NameID): 1, 2, 3... in
// the order the strings are first met, 0 for "". Two interners can share
// one sequence (count), so their numbers never collide.
type interner struct {
	strs   []string
	ids    []uint32 // the number of strs[i]
	tab    []uint64 // slot -> hash<<32 | 1 + index into strs, 0 when empty
	seed   maphash.Seed
	last   string  // the last string returned
	lastID uint32  // and its number
	count  *uint32 // numbers handed out; nil: this interner's own n
	n      uint32
	arena  arena
}

func (in *interner) intern(b []byte) string {
	s, _ := in.internID(b)
	return s
}

// internID returns the one copy of b and its number.
func (in *interner) internID(b []byte) (string, uint32) {
	if len(b) == 0 {
		return "", 0
	}
	if in.last == string(b) {
		return in.last, in.lastID
	}
	if len(in.strs) <= 8 {
		// a small vocabulary (cores, task types): no hashing
		for i, s := range in.strs {
			if s == string(b) {
				in.last, in.lastID = s, in.ids[i]
				return s, in.lastID
			}
		}
		if len(in.strs) < 8 {
			return in.add(b), in.lastID
		}
		// the ninth string: from now on, the table
		in.grow()
	}
	mask := uint64(len(in.tab) - 1)
	hash := maphash.Bytes(in.seed, b)
	tag := hash &^ (1<<32 - 1)
	h := hash & mask
	for {
		e := in.tab[h]
		if e == 0 {
			break
		}
		if e&^(1<<32-1) == tag {
			if i := uint32(e) - 1; in.strs[i] == string(b) {
				in.last, in.lastID = in.strs[i], in.ids[i]
				return in.last, in.lastID
			}
		}
		h = (h + 1) & mask
	}
	s := in.add(b)
	in.tab[h] = tag | uint64(len(in.strs))
	if 2*len(in.strs) > len(in.tab) {
		in.grow()
	}
	return s, in.lastID
}

// add copies a new string b and numbers it; it becomes the last string.
func (in *interner) add(b []byte) string {
	c := in.count
	if c == nil {
		c = &in.n
	}
	*c++
	s := in.arena.str(b)
	in.strs = append(in.strs, s)
	in.ids = append(in.ids, *c)
	in.last, in.lastID = s, *c
	return s
}

func (in *interner) grow() {
	if in.tab == nil {
		in.seed = maphash.MakeSeed()
	}
	in.tab = make([]uint64, max(256, 2*len(in.tab)))
	mask := uint64(len(in.tab) - 1)
	for i, s := range in.strs {
		hash := maphash.String(in.seed, s)
		h := hash & mask
		for in.tab[h] != 0 {
			h = (h + 1) & mask
		}
		in.tab[h] = hash&^(1<<32-1) | uint64(i+1)
	}
}

// arena copies short strings into shared 32 KiB blocks instead of one
// allocation each: the collectives' names are unique per op (tens of
// thousands per file) and all kept by the model. A block is never written
// again where a string points into it.
type arena struct{ buf []byte }

func (a *arena) str(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > 512 {
		return string(b)
	}
	if len(a.buf)+len(b) > cap(a.buf) {
		a.buf = make([]byte, 0, 32<<10)
	}
	n := len(a.buf)
	a.buf = append(a.buf, b...)
	return unsafe.String(&a.buf[n], len(b))
}

// ranks numbers the strings interned so far in sorted order.
func (in *interner) ranks() map[string]uint32 {
	sorted := slices.Clone(in.strs)
	slices.Sort(sorted)
	r := make(map[string]uint32, len(sorted)+1)
	r[""] = 0
	for i, s := range sorted {
		r[s] = uint32(i + 1)
	}
	return r
}
