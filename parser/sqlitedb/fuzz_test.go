package sqlitedb

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
	"github.com/npuprof/npuprof/parser/model"
)

// FuzzRead feeds arbitrary bytes to the SQLite reader as a database file:
// an error is fine ("not a profiler database"), a panic or a negative
// duration is not. Seeded with a tiny generated torch_npu database.
func FuzzRead(f *testing.F) {
	dir := f.TempDir()
	if _, err := tracegen.GenerateLayout(dir, testutil.Tiny(), tracegen.LayoutTorchNPUDB); err != nil {
		f.Fatal(err)
	}
	dbs, _ := filepath.Glob(filepath.Join(dir, "*", "*", "*.db"))
	for _, p := range dbs {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte("SQLite format 3\x00"))
	f.Add([]byte("not a database"))
	f.Fuzz(func(t *testing.T, data []byte) {
		defer testutil.Watchdog(data)()
		p := filepath.Join(t.TempDir(), "ascend_pytorch_profiler_0.db")
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		r := model.NewRank(p)
		if err := Read(p, r); err != nil {
			return
		}
		for i := range r.Tasks {
			if r.Tasks[i].Dur < 0 {
				t.Fatalf("task %q has negative duration %d", r.Str(r.Tasks[i].Name), r.Tasks[i].Dur)
			}
		}
	})
}
