package analysis

import (
	"strings"
	"sync"
)

// kept holds one copy of each name a finished rank's results keep (its
// top kernels' names, op types and cores, the ops its waits waited for,
// the names of its family metrics such as hccl.allgather.count):
// the ranks of a cluster run the same kernels, and each rank's copies
// (the model's interned strings) were 1.2 KiB a rank, 2.5 MiB at 2048
// ranks. The kept copy is a clone: a model's string may share its memory
// with others (an arena chunk of the summary or Parquet readers).
// Bounded: past maxKeptBytes, strings are cloned, not kept.
var kept struct {
	sync.Mutex
	m     map[string]string
	bytes int
}

const maxKeptBytes = 4 << 20

// keepName returns the one kept copy of s (a clone of s once the table is full).
func keepName(s string) string {
	kept.Lock()
	defer kept.Unlock()
	if k, ok := kept.m[s]; ok {
		return k
	}
	s = strings.Clone(s)
	if kept.bytes+len(s) > maxKeptBytes {
		return s
	}
	if kept.m == nil {
		kept.m = map[string]string{}
	}
	kept.m[s] = s
	kept.bytes += len(s)
	return s
}
