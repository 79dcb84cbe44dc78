// Package intern keeps one copy of each string a reader meets: Strings
// returns the same string (and number) for the same bytes without
// allocating on a hit. The summary readers and the Parquet reader intern
// through it; the trace reader's symbol interner keys its table the same
// way (ShortKey).
package intern

import (
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"math/rand/v2"
	"slices"
	"unsafe"
)

// Strings keeps one copy of each string: an open-addressing table keyed
// by maphash of the bytes (the hash's top half kept in the slot, so a
// probe rarely touches a string that does not match), so a lookup of a
// string seen before neither allocates nor goes through a map of strings.
// The last string returned is checked first (rows of one kind come in
// runs). The zero value is ready; use one per column, so the small
// vocabularies (task types, cores) stay in a small table.
//
// Every string also gets a number (InternID): 1, 2, 3... in the order the
// strings are first met, 0 for "". Two Strings can share one sequence
// (Count), so their numbers never collide.
type Strings struct {
	strs   []string
	ids    []uint32 // the number of strs[i]
	tab    []uint64 // slot -> hash<<32 | 1 + index into strs, 0 when empty
	seed   maphash.Seed
	last   string // the last string returned
	lastID uint32 // and its number
	// Count, when set, is the sequence the numbers come from (shared
	// with other Strings); nil: this one's own n.
	Count *uint32
	n     uint32
	arena Arena
	// strings of at most 16 bytes, once there is a table: open
	// addressing keyed by ShortKey, slots chosen with seeds
	short        []shortEnt
	nShort       int
	seed0, seed1 uint64
	index        int        // hashed: the index in strs of the string returned
	cache        []shortEnt // longer strings: one slot per key, no probing
}

// shortEnt is a string of at most 16 bytes (as ShortKey), its length
// (0: an empty slot; "" is never interned) and its index in strs.
type shortEnt struct {
	a, z uint64
	n, i uint32
}

// ShortKey returns two words that hold all the bytes of b (len(b) <= 16),
// so that for one length, different strings have different keys: the
// first and last 8 bytes (they overlap below 16), the first and last 4
// below 8, or the first, middle and last byte below 4.
func ShortKey(b []byte) (a, z uint64) {
	switch n := len(b); {
	case n >= 8:
		return binary.LittleEndian.Uint64(b[0:8]), binary.LittleEndian.Uint64(b[n-8 : n])
	case n >= 4:
		return uint64(binary.LittleEndian.Uint32(b[0:4])), uint64(binary.LittleEndian.Uint32(b[n-4 : n]))
	case n > 0:
		return uint64(b[0]) | uint64(b[n/2])<<8 | uint64(b[n-1])<<16, 0
	}
	return 0, 0
}

// shortSlot is the first table slot of a short key of length n.
func (in *Strings) shortSlot(a, z uint64, n uint32) uint64 {
	hi, lo := bits.Mul64(a^in.seed0, z^in.seed1^uint64(n)<<32)
	return (hi ^ lo) & uint64(len(in.short)-1)
}

// shortAdd records a string of at most 16 bytes.
func (in *Strings) shortAdd(e shortEnt) {
	if 2*(in.nShort+1) > len(in.short) {
		old := in.short
		in.short = make([]shortEnt, max(64, 2*len(old)))
		for _, o := range old {
			if o.n != 0 {
				in.shortPlace(o)
			}
		}
	}
	in.shortPlace(e)
	in.nShort++
}

func (in *Strings) shortPlace(e shortEnt) {
	mask := uint64(len(in.short) - 1)
	h := in.shortSlot(e.a, e.z, e.n)
	for in.short[h].n != 0 {
		h = (h + 1) & mask
	}
	in.short[h] = e
}

// Intern returns the one copy of b.
func (in *Strings) Intern(b []byte) string {
	s, _ := in.InternID(b)
	return s
}

// InternID returns the one copy of b and its number.
func (in *Strings) InternID(b []byte) (string, uint32) {
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
	if len(b) <= 16 {
		// most types and shapes: keyed by their bytes as two words, no
		// hash of the bytes and no compare of strings
		a, z := ShortKey(b)
		n := uint32(len(b))
		mask := uint64(len(in.short) - 1)
		for h := in.shortSlot(a, z, n); ; h = (h + 1) & mask {
			e := &in.short[h]
			if e.n == 0 {
				break
			}
			if e.a == a && e.z == z && e.n == n {
				in.last, in.lastID = in.strs[e.i], in.ids[e.i]
				return in.last, in.lastID
			}
		}
		s, id := in.hashed(b)
		in.shortAdd(shortEnt{a: a, z: z, n: n, i: uint32(in.index)})
		return s, id
	}
	// longer strings (kernel names): a direct-mapped cache keyed by the
	// length and the first and last 8 bytes, checked by a compare of the
	// strings, in front of the hashed table
	n := len(b)
	a, z := binary.LittleEndian.Uint64(b[0:8]), binary.LittleEndian.Uint64(b[n-8:n])
	e := &in.cache[in.shortSlot(a, z, uint32(n))&(uint64(len(in.cache))-1)]
	if e.n == uint32(n) && e.a == a && e.z == z && in.strs[e.i] == string(b) {
		in.last, in.lastID = in.strs[e.i], in.ids[e.i]
		return in.last, in.lastID
	}
	s, id := in.hashed(b)
	*e = shortEnt{a: a, z: z, n: uint32(n), i: uint32(in.index)}
	return s, id
}

// hashed is InternID through the table keyed by maphash; index is left
// at the string's index in strs.
func (in *Strings) hashed(b []byte) (string, uint32) {
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
				in.index = int(i)
				return in.last, in.lastID
			}
		}
		h = (h + 1) & mask
	}
	s := in.add(b)
	in.index = len(in.strs) - 1
	in.tab[h] = tag | uint64(len(in.strs))
	if 2*len(in.strs) > len(in.tab) {
		in.grow()
	}
	return s, in.lastID
}

// add copies a new string b and numbers it; it becomes the last string.
func (in *Strings) add(b []byte) string {
	c := in.Count
	if c == nil {
		c = &in.n
	}
	*c++
	s := in.arena.Str(b)
	in.strs = append(in.strs, s)
	in.ids = append(in.ids, *c)
	in.last, in.lastID = s, *c
	return s
}

func (in *Strings) grow() {
	if in.tab == nil {
		in.seed = maphash.MakeSeed()
		in.seed0, in.seed1 = rand.Uint64(), rand.Uint64()
		in.short = make([]shortEnt, 64)
		in.cache = make([]shortEnt, 256)
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

// Arena copies short strings into shared 32 KiB blocks instead of one
// allocation each: the collectives' names are unique per op (tens of
// thousands per file) and all kept by the model. A block is never written
// again where a string points into it.
type Arena struct{ buf []byte }

// Str returns a copy of b.
func (a *Arena) Str(b []byte) string {
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

// Ranks numbers the strings interned so far in sorted order, from 1 (""
// is 0).
func (in *Strings) Ranks() map[string]uint32 {
	sorted := slices.Clone(in.strs)
	slices.Sort(sorted)
	r := make(map[string]uint32, len(sorted)+1)
	r[""] = 0
	for i, s := range sorted {
		r[s] = uint32(i + 1)
	}
	return r
}
