package model

import (
	"encoding/json"
	"hash/maphash"
	"iter"
	"slices"
	"sync"
)

// Sources maps each metric of a rank to the input file it was computed
// from, in the compact form a finished rank keeps (the analysis fills it,
// the results document carries it): the ranks of a cluster measure the
// same metrics, and each rank's own map of them made memory grow by
// kilobytes a rank (docs/performance.md, "Many ranks"). The metric names
// are one sorted list shared by every rank that has the same ones; per
// name the rank keeps only the index of its file among its few distinct
// files. The zero value is empty. It encodes to
// JSON as the map[string]string it replaces (the same bytes).
type Sources struct {
	names []string // sorted; shared between ranks (sharedNames)
	file  []uint32 // file[i] is names[i]'s index into files
	files []string
}

// NewSources is the compact form of m (metric -> file); names with an
// empty file are left out.
func NewSources(m map[string]string) Sources {
	names := make([]string, 0, len(m))
	for k, f := range m {
		if f != "" {
			names = append(names, k)
		}
	}
	if len(names) == 0 {
		return Sources{}
	}
	slices.Sort(names)
	s := Sources{names: sharedNames(names), file: make([]uint32, len(names))}
	for i, k := range names {
		f := m[k]
		j := slices.Index(s.files, f)
		if j < 0 {
			j = len(s.files)
			s.files = append(s.files, f)
		}
		s.file[i] = uint32(j)
	}
	s.files = slices.Clip(s.files)
	return s
}

// Len is the number of metrics with a source.
func (s Sources) Len() int { return len(s.names) }

// IsZero reports whether s is empty (the JSON key is then omitted).
func (s Sources) IsZero() bool { return len(s.names) == 0 }

// Get is the file name was computed from, "" when none is known.
func (s Sources) Get(name string) string {
	f, _ := s.Lookup(name)
	return f
}

// Lookup is the file name was computed from, and whether one is known.
func (s Sources) Lookup(name string) (string, bool) {
	i, ok := slices.BinarySearch(s.names, name)
	if !ok {
		return "", false
	}
	return s.files[s.file[i]], true
}

// All yields each metric and its file, by metric name.
func (s Sources) All() iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		for i, k := range s.names {
			if !yield(k, s.files[s.file[i]]) {
				return
			}
		}
	}
}

// Map is s as a map (a new one).
func (s Sources) Map() map[string]string {
	m := make(map[string]string, len(s.names))
	for k, f := range s.All() {
		m[k] = f
	}
	return m
}

// MarshalJSON writes s as encoding/json writes a map[string]string: keys
// sorted, strings escaped the same way.
func (s Sources) MarshalJSON() ([]byte, error) {
	files := make([][]byte, len(s.files)) // each file's encoding, made once
	b := make([]byte, 0, 2+48*len(s.names))
	b = append(b, '{')
	for i, k := range s.names {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, k)
		b = append(b, ':')
		f := s.file[i]
		if files[f] == nil {
			files[f] = appendJSONString(nil, s.files[f])
		}
		b = append(b, files[f]...)
	}
	b = append(b, '}')
	return b, nil
}

// appendJSONString appends s as json.Marshal writes it: as it is, in
// quotes, when it has no byte json.Marshal escapes or checks (a quote, a
// backslash, a control byte, <, > and &, a non-ASCII byte), else
// json.Marshal's bytes; a json.Marshal per string was most of the cost.
func appendJSONString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x80 || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s)
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// UnmarshalJSON reads the object MarshalJSON writes (a saved document).
func (s *Sources) UnmarshalJSON(data []byte) error {
	var m map[string]string
	if err := json.Unmarshal(data, &m); err != nil {
		return err
	}
	*s = NewSources(m)
	return nil
}

// nameLists holds one copy of each sorted list of metric names, keyed
// by a hash of the names: every rank of a cluster computes the same
// metrics, so each kept its own list. Bounded: past maxSharedNames names
// (or on a hash collision), lists are kept as given.
var nameLists struct {
	sync.Mutex
	m     map[uint64][]string
	seed  maphash.Seed
	names int
}

const maxSharedNames = 1 << 20

// sharedNames returns the one kept copy of names (sorted), or names.
func sharedNames(names []string) []string {
	nameLists.Lock()
	defer nameLists.Unlock()
	if nameLists.m == nil {
		nameLists.m = map[uint64][]string{}
		nameLists.seed = maphash.MakeSeed()
	}
	var h maphash.Hash
	h.SetSeed(nameLists.seed)
	for _, n := range names {
		h.WriteString(n)
		h.WriteByte(0)
	}
	key := h.Sum64()
	if kept, ok := nameLists.m[key]; ok {
		if slices.Equal(kept, names) {
			return kept
		}
		return slices.Clip(names)
	}
	names = slices.Clip(names)
	if nameLists.names+len(names) > maxSharedNames {
		return names
	}
	nameLists.m[key] = names
	nameLists.names += len(names)
	return names
}
