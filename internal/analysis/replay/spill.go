package replay

import (
	"fmt"
	"os"
	"runtime"
	"sync"
)

// A Spill is a temporary file that the encoded bytes a finished rank keeps
// until the end of a run (its replay timeline's steps, the ledger's
// exchanges) are moved to, so that they are not on the heap while the
// other ranks are read and the plan runs: what a rank costs in memory does
// not then grow with the steps' length. The file is made under
// os.TempDir (never in the profile's folder) and removed from its folder
// at once: it is freed when its last reference (a Ref) is collected and
// its descriptor closed, or when the process ends. The bytes are read
// back with ReadAt at each use; the kernel's page cache, not the process,
// holds what is read often.
type Spill struct {
	mu  sync.Mutex
	f   *os.File
	off int64
	bad bool // a write failed: nothing more is written
}

// NewSpill makes a spill file, nil when none can be made (the bytes then
// stay on the heap) or on Windows (an open file cannot be removed there).
func NewSpill() *Spill {
	if runtime.GOOS == "windows" {
		return nil
	}
	f, err := os.CreateTemp("", "npuprof-spill-*")
	if err != nil {
		return nil
	}
	if err := os.Remove(f.Name()); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil
	}
	return &Spill{f: f}
}

// Ref is where bytes are in a Spill (the zero Ref: none).
type Ref struct {
	s   *Spill
	off int64
	n   int64
}

// Put writes b to s and returns where it is; ok is false (the caller
// keeps b) when s is nil, b is empty or the write failed.
func (s *Spill) Put(b []byte) (r Ref, ok bool) {
	if s == nil || len(b) == 0 {
		return Ref{}, false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bad {
		return Ref{}, false
	}
	if _, err := s.f.WriteAt(b, s.off); err != nil {
		s.bad = true
		return Ref{}, false
	}
	r = Ref{s: s, off: s.off, n: int64(len(b))}
	s.off += int64(len(b))
	return r, true
}

// Spilled reports whether r holds bytes.
func (r Ref) Spilled() bool { return r.s != nil }

// Read returns the bytes at r, in buf when it is large enough. A failed
// read of the spill file (which npuprof wrote and holds open) is a fault
// of the machine, not of the input: it panics.
func (r Ref) Read(buf []byte) []byte {
	buf = resize(buf, int(r.n))
	if _, err := r.s.f.ReadAt(buf, r.off); err != nil {
		panic(fmt.Sprintf("npuprof: reading back its temporary file %s: %v", r.s.f.Name(), err))
	}
	return buf
}

// reset makes s empty: what was written to it is not read after (a
// PredictStep's copy of one step of every rank, which the next step's
// copy overwrites).
func (s *Spill) reset() {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.off = 0
	s.mu.Unlock()
}

// close closes s's file (nothing in it is read after).
func (s *Spill) close() {
	if s != nil {
		s.f.Close()
	}
}
