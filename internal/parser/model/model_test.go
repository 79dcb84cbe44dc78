package model

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

func TestDropDuplicates(t *testing.T) {
	r := NewRank("x")
	mm := func(start, dur int64, stream int32) DeviceTask {
		return r.NewTask(start, dur, TaskExtra{Name: r.Intern("mm"), Stream: stream, Class: ClassCompute, OpType: r.Intern("MatMul"), TaskType: r.Intern("AI_CORE"), ModelID: 4294967295})
	}
	r.Tasks = []DeviceTask{mm(10, 5, 2), mm(10, 5, 2), mm(10, 6, 2), mm(10, 5, 3), mm(20, 1, 2), mm(10, 5, 2)}
	hc, ar := r.Intern("hcom_allReduce__586_0_1"), r.Intern("allreduce")
	r.HCCL = []HCCLOp{{Start: 1, Dur: 2, Name: hc, Type: ar}, {Start: 1, Dur: 2, Name: hc, Type: ar}}
	r.FrameworkOps = []FrameworkOp{{Start: 0, Dur: 1, Name: r.Intern("aten::mm")}}
	// links to both copies of the duplicate, and to the HCCL copies
	r.Links = []Link{{Op: 0, Task: 0, HCCL: -1}, {Op: 0, Task: 1, HCCL: -1}, {Op: 0, Task: 4, HCCL: -1}, {Op: 0, Task: -1, HCCL: 1}}
	r.Steps = []Step{{ID: 2, Start: 0, End: 30}, {ID: 2, Start: 0, End: 30}, {ID: 3, Start: 0, End: 40}}
	r.SortTasks()
	require.NoError(t, r.Validate())
	d := r.DropDuplicates()
	require.Equal(t, Duplicates{Tasks: 2, HCCL: 1, Steps: 1, FirstStart: 0}, d)
	require.Len(t, r.FrameworkOps, 1)
	// a different duration or stream is not a duplicate
	require.Equal(t, []DeviceTask{mm(10, 5, 2), mm(10, 6, 2), mm(10, 5, 3), mm(20, 1, 2)}, r.Tasks)
	require.Len(t, r.HCCL, 1)
	require.Equal(t, []Step{{ID: 2, Start: 0, End: 30}, {ID: 3, Start: 0, End: 40}}, r.Steps)
	// links follow the kept copy and collapse
	require.Equal(t, []Link{{Op: 0, Task: 0, HCCL: -1}, {Op: 0, Task: 3, HCCL: -1}, {Op: 0, Task: -1, HCCL: 0}}, r.Links)
	require.NoError(t, r.Validate())
	require.Zero(t, r.DropDuplicates().Total(), "idempotent")
}

// A long run of tasks with the same start, stream and name (hostile input)
// stays linear: the run switches to a map.
func TestDropDuplicatesLongRun(t *testing.T) {
	r := NewRank("x")
	const n = 50000
	for i := 0; i < n; i++ {
		r.Tasks = append(r.Tasks, r.NewTask(7, int64(i%(n/2)), TaskExtra{Name: r.Intern("k"), Stream: 1}))
	}
	r.SortTasks()
	d := r.DropDuplicates()
	require.Equal(t, n/2, d.Tasks)
	require.Len(t, r.Tasks, n/2)
	seen := map[int64]bool{}
	for _, x := range r.Tasks {
		require.False(t, seen[r.Dur(&x)])
		seen[r.Dur(&x)] = true
	}
}

func TestValidateRejectsOverflow(t *testing.T) {
	r := NewRank("x")
	r.Tasks = []DeviceTask{r.NewTask(1<<62, 1<<62-1, TaskExtra{})}
	require.NoError(t, r.Validate())
	r.SetDur(&r.Tasks[0], 1<<63-1)
	require.ErrorContains(t, r.Validate(), "out-of-range duration")
	r.Tasks[0] = r.NewTask(1<<63-10, 9, TaskExtra{})
	require.NoError(t, r.Validate())
	r.SetDur(&r.Tasks[0], 10)
	require.ErrorContains(t, r.Validate(), "out-of-range duration", "a short duration past the end of time")
	r.Tasks[0] = r.NewTask(1<<63-1<<32, 1<<32-1, TaskExtra{})
	require.NoError(t, r.Validate(), "a long one up to it")
	r.SetDur(&r.Tasks[0], -1)
	require.ErrorContains(t, r.Validate(), "out-of-range duration", "a negative one")
	r.Tasks = nil
	r.Links = []Link{{Op: 0, Task: -1, HCCL: -1}}
	r.FrameworkOps = []FrameworkOp{{}}
	require.ErrorContains(t, r.Validate(), "link out of range")
}

// The per-event types stay small and pointer-free: the garbage collector
// never scans them, and a 200 MB trace's 268k tasks take 8.6 MB, not 25.7.
func TestCompactTypes(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(DeviceTask{}), uintptr(16))
	require.LessOrEqual(t, unsafe.Sizeof(HCCLOp{}), uintptr(40))
	require.LessOrEqual(t, unsafe.Sizeof(FrameworkOp{}), uintptr(24))
	for _, x := range []any{DeviceTask{}, HCCLOp{}, FrameworkOp{}, Link{}} {
		typ := reflect.TypeOf(x)
		require.False(t, hasPointers(typ), "%s holds pointers", typ)
	}
	require.True(t, hasPointers(reflect.TypeOf(Group{})), "the check sees strings and slices")
}

// hasPointers reports whether values of typ contain any pointer the
// garbage collector must scan.
func hasPointers(typ reflect.Type) bool {
	switch typ.Kind() {
	case reflect.Bool, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64, reflect.Complex64, reflect.Complex128:
		return false
	case reflect.Array:
		return typ.Len() > 0 && hasPointers(typ.Elem())
	case reflect.Struct:
		for i := range typ.NumField() {
			if hasPointers(typ.Field(i).Type) {
				return true
			}
		}
		return false
	}
	return true
}

func TestSyms(t *testing.T) {
	var s Syms
	require.Equal(t, "", s.Str(0))
	require.Equal(t, Sym(0), s.Intern(""))
	a := s.Intern("aclnnMm")
	require.NotEqual(t, Sym(0), a)
	require.Equal(t, a, s.InternBytes([]byte("aclnnMm")))
	b := s.InternBytes([]byte("Cumsum"))
	require.NotEqual(t, a, b)
	require.Equal(t, "aclnnMm", s.Str(a))
	require.Equal(t, "Cumsum", s.Str(b))
	got, ok := s.Lookup("Cumsum")
	require.True(t, ok)
	require.Equal(t, b, got)
	_, ok = s.Lookup("MatMul")
	require.False(t, ok)
	require.Equal(t, 3, s.Len())
	require.Equal(t, "", s.Str(99), "an unknown symbol is empty")
}

// TestSymsGrow: across the index's growth every string keeps its symbol
// (by string and by bytes, of every length around the hash's 8-byte
// words), strings never interned are not found, and a clone grows on its
// own.
func TestSymsGrow(t *testing.T) {
	var s Syms
	name := func(i int) string { return strings.Repeat("x", i%23) + "hcom_allGather__" + strconv.Itoa(i) }
	for i := range 5000 {
		require.Equal(t, Sym(i+1), s.Intern(name(i)))
	}
	for i := range 5000 {
		require.Equal(t, Sym(i+1), s.Intern(name(i)))
		require.Equal(t, Sym(i+1), s.InternBytes([]byte(name(i))))
		got, ok := s.Lookup(name(i))
		require.True(t, ok)
		require.Equal(t, Sym(i+1), got)
		require.Equal(t, name(i), s.Str(got))
		_, ok = s.Lookup(name(i) + "_")
		require.False(t, ok)
	}
	c := s.Clone()
	require.Equal(t, Sym(5001), c.Intern("new"))
	_, ok := s.Lookup("new")
	require.False(t, ok, "the clone's strings are its own")
	require.Equal(t, Sym(5001), s.Intern("other"))
	require.Equal(t, "new", c.Str(5001))
}

// A packed table holds the same symbols and strings, finds them, keeps
// growing (the strings read before still read right), clones, and
// unpacked again is the table it was.
func TestSymsPack(t *testing.T) {
	var s Syms
	n1, n2 := packMin+1000, 2*packMin+2000
	name := func(i int) string { return strings.Repeat("y", i%17) + "hcom_allReduce__" + strconv.Itoa(i) }
	for i := range packMin - 2 {
		s.Intern(name(i))
	}
	s.Pack()
	require.NotNil(t, s.strs, "too few to pack")
	for i := packMin - 2; i < n1; i++ {
		s.Intern(name(i))
	}
	before := s.Str(7)
	s.Pack()
	require.Nil(t, s.strs)
	require.Equal(t, n1+1, s.Len())
	require.Equal(t, "", s.Str(0))
	require.Equal(t, "", s.Str(Sym(n1+1)))
	check := func(s *Syms, n int) {
		t.Helper()
		for i := range n {
			require.Equal(t, name(i), s.Str(Sym(i+1)))
			got, ok := s.Lookup(name(i))
			require.True(t, ok)
			require.Equal(t, Sym(i+1), got)
			require.Equal(t, Sym(i+1), s.InternBytes([]byte(name(i))))
		}
		_, ok := s.Lookup(name(n))
		require.False(t, ok)
	}
	check(&s, n1)
	packed := s.Str(8)
	for i := n1; i < n2; i++ { // past the index's next growth
		require.Equal(t, Sym(i+1), s.Intern(name(i)))
	}
	check(&s, n2)
	require.Equal(t, name(6), before)
	require.Equal(t, name(7), packed)
	c := s.Clone()
	require.Equal(t, Sym(n2+1), c.Intern("new"))
	_, ok := s.Lookup("new")
	require.False(t, ok, "the clone's strings are its own")
	s.unpack()
	require.Nil(t, s.ends)
	check(&s, n2)
	require.Equal(t, Sym(n2+1), s.Intern("other"))
	require.Equal(t, "new", c.Str(Sym(n2+1)))
}

// TestDeviceTaskSize keeps the task at 16 bytes (docs/performance.md, "One
// large rank"): a field added to it costs 1.3 M × its size at 1 GB.
func TestDeviceTaskSize(t *testing.T) {
	require.EqualValues(t, 16, unsafe.Sizeof(DeviceTask{}))
}

// TestTaskDurations: every duration reads back as set, those a task cannot
// hold (2^31 ns and longer, negative) through the rank's table, each
// distinct one once there, so equal tasks stay equal (DropDuplicates) and
// a copy of the table (SplitDevices) reads them the same.
func TestTaskDurations(t *testing.T) {
	r := NewRank("x")
	durs := []int64{0, 1, longDur - 1, longDur, 1<<32 - 1, 1 << 32, 1<<32 + 5, 5e9, -1, -3, 1 << 62, 1<<63 - 1, -1 << 63}
	for i, d := range durs {
		x := TaskExtra{Name: r.Intern("k"), Stream: int32(i % 2)}
		a, b := r.NewTask(int64(i), d, x), r.NewTask(int64(i), d, x)
		require.Equal(t, d, r.Dur(&a), "duration %d", d)
		require.Equal(t, int64(i)+d, r.End(&a))
		require.Equal(t, a, b, "the same duration, the same task")
		r.Tasks = append(r.Tasks, a)
	}
	long := 0
	for _, d := range durs {
		if d < 0 || d >= longDur {
			long++
		}
	}
	require.Len(t, r.Extras.long, long, "each long duration once")
	c := r.Extras.Clone()
	for i, d := range durs {
		v := r.Tasks[i].dur
		require.Equal(t, d < 0 || d >= longDur, v >= longDur)
		if v >= longDur {
			require.Equal(t, d, c.longOf(v))
		}
		r.SetDur(&r.Tasks[i], 7)
		require.Equal(t, int64(7), r.Dur(&r.Tasks[i]))
	}
	r.Tasks = nil
	r.Tasks = append(r.Tasks, r.NewTask(1, 5e9, TaskExtra{}), r.NewTask(1, 5e9, TaskExtra{}), r.NewTask(1, 6e9, TaskExtra{}))
	require.Equal(t, 1, r.DropDuplicates().Tasks, "equal long durations are duplicates, different ones are not")
}

// TestCompactExtras: a table whose tasks were set one field at a time keeps
// only the entries tasks use, and every task reads as before.
func TestCompactExtras(t *testing.T) {
	r := NewRank("x")
	for i := range 40 {
		r.Tasks = append(r.Tasks, r.NewTask(int64(i), int64(i)<<30, TaskExtra{}))
	}
	for i := range r.Tasks {
		for _, set := range []func(*TaskExtra){
			func(x *TaskExtra) { x.Name = r.Intern(strconv.Itoa(i % 5)) },
			func(x *TaskExtra) { x.Stream = int32(i % 3) },
			func(x *TaskExtra) { x.Class = TaskClass(i % 4) },
		} {
			x := r.Extra(&r.Tasks[i])
			set(&x)
			r.SetExtra(&r.Tasks[i], x)
		}
	}
	before, _, _ := r.Resolved()
	used := map[Extra]bool{}
	for i := range r.Tasks {
		used[r.Tasks[i].Extra] = true
	}
	require.Greater(t, r.Extras.Len(), len(used)+1, "steps left entries no task uses")
	r.CompactExtras()
	after, _, _ := r.Resolved()
	require.Equal(t, before, after)
	require.Equal(t, len(used), r.Extras.Len()-1, "one entry per set used, TaskExtra{} besides")
	for i := range r.Tasks {
		require.Equal(t, r.Class(&r.Tasks[i]), r.Extra(&r.Tasks[i]).Class)
	}
	z := NewRank("z")
	z.Tasks = make([]DeviceTask, 3)
	z.CompactExtras()
	require.Equal(t, make([]DeviceTask, 3), z.Tasks, "a rank that made no entry")
}

// TestClearTaskDevices: every task keeps all but its device, and tasks
// that differed only by device become equal.
func TestClearTaskDevices(t *testing.T) {
	r := NewRank("x")
	for i := range 6 {
		r.Tasks = append(r.Tasks, r.NewTask(int64(i/2), 10, TaskExtra{Name: r.Intern("k"), Stream: 3, Class: ClassCompute, Device: int16(i % 2)}))
	}
	r.ClearTaskDevices()
	for i := range r.Tasks {
		x := r.Extra(&r.Tasks[i])
		require.Equal(t, TaskExtra{Name: r.Intern("k"), Stream: 3, Class: ClassCompute}, x)
		require.Equal(t, int64(10), r.Dur(&r.Tasks[i]))
	}
	require.Equal(t, r.Tasks[0], r.Tasks[1])
}

// TestExtrasIDs: every distinct value gets its own id, asked again (from
// the recent slots or the map) it gets the same one, and Get returns it;
// far more values than recent slots make them collide; the id carries
// the value's class (r.Class(t) reads the task alone).
func TestExtrasIDs(t *testing.T) {
	var x Extras
	require.Equal(t, Extra(0), x.ID(TaskExtra{}), "the empty value is 0 before anything was added")
	var vals []TaskExtra
	for i := range 3000 {
		vals = append(vals, TaskExtra{OpType: Sym(i % 7), TaskType: Sym(i % 3), InputShapes: Sym(i / 21), ModelID: uint32(i % 2),
			Name: Sym(i % 5), Stream: int32(i % 4), Class: TaskClass(i % 8), Device: int16(i % 3)})
	}
	ids := map[TaskExtra]Extra{}
	for round := range 2 {
		for _, v := range vals {
			id := x.ID(v)
			if prev, ok := ids[v]; ok {
				require.Equal(t, prev, id, "round %d: %+v", round, v)
			}
			ids[v] = id
			require.Equal(t, v, x.Get(id))
			require.Equal(t, v.Class, id.Class(), "the id carries its class")
		}
	}
	require.Equal(t, Extra(0), x.ID(TaskExtra{}))
	require.Equal(t, len(ids), x.Len(), "one entry per distinct value (the empty one among them)")
	c := x.Clone()
	for v, id := range ids {
		require.Equal(t, id, c.ID(v))
	}
}

// A packed table has room for the few names a read adds after its trace
// (Pack runs once the trace is read): they go into the packed arrays,
// which are not copied.
func TestSymsPackRoom(t *testing.T) {
	var s Syms
	for i := range 2 * packMin {
		s.Intern("hcom_allReduce__" + strconv.Itoa(i) + "_1_1_" + strings.Repeat("x", 30))
	}
	s.Pack()
	b, e := unsafe.SliceData(s.bytes), unsafe.SliceData(s.ends)
	for i := range 400 {
		s.Intern("[" + strconv.Itoa(i) + ",4096,1,1,7168];[1024,4096]")
	}
	require.True(t, b == unsafe.SliceData(s.bytes), "the bytes copied")
	require.True(t, e == unsafe.SliceData(s.ends), "the ends copied")
	require.Equal(t, "[399,4096,1,1,7168];[1024,4096]", s.Str(Sym(s.Len()-1)))
}
