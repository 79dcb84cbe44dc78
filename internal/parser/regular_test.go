package parser

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/npuprof/npuprof/internal/errkind"
	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/npuprof/npuprof/internal/tracegen"
)

// detectWithin runs Detect on path and fails if it does not return within
// 5 s (a FIFO opened for reading blocks until a writer comes).
func detectWithin(t *testing.T, path string) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := Detect(path)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("Detect(%s) blocked", path)
		return nil
	}
}

// A FIFO named trace_view.json (or kernel_details.csv, or a profiler
// database) is refused as a usage error, whether the folder or the file is
// given, without ever being opened.
func TestNonRegularFilesRefused(t *testing.T) {
	for _, name := range []string{"trace_view.json", "kernel_details.csv", "step_trace_time.csv", "communication.json", "profiler_info_0.json", "profiler_metadata.json"} {
		root, out := tinyRank(t)
		dir := out
		if strings.HasPrefix(name, "profiler_") {
			dir = root
		}
		p := filepath.Join(dir, name)
		require.NoError(t, os.Remove(p))
		require.NoError(t, syscall.Mkfifo(p, 0o644))
		want := p + " is a named pipe (FIFO), not a regular file"
		for _, given := range []string{filepath.Dir(root), root, out} {
			err := detectWithin(t, given)
			require.Error(t, err, "%s given %s", name, given)
			require.True(t, errkind.Is(err, errkind.Usage), "%v", err)
			require.Contains(t, err.Error(), want)
		}
		if name == "trace_view.json" {
			err := detectWithin(t, p)
			require.True(t, errkind.Is(err, errkind.Usage), "%v", err)
			require.Contains(t, err.Error(), want)
		}
	}
	// a device given as the trace
	err := detectWithin(t, "/dev/zero")
	require.True(t, errkind.Is(err, errkind.Usage), "%v", err)
	require.Contains(t, err.Error(), "/dev/zero is a character device, not a regular file")
	// and openInput never opens one
	_, err = openInput("/dev/zero")
	require.ErrorContains(t, err, "is a character device")
}

// A file whose symbolic links lead outside the rank folder is refused
// unread: a rank whose kernel_details.csv, step_trace_time.csv and
// profiler_metadata.json are symbolic links to /etc/passwd names each
// link, and no line of /etc/passwd appears anywhere in the rank.
func TestSymlinkOutsideTreeNotQuoted(t *testing.T) {
	passwd, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Skip("no /etc/passwd on this system")
	}
	first := strings.SplitN(string(passwd), "\n", 2)[0]
	root, out := tinyRank(t)
	links := []string{filepath.Join(out, "kernel_details.csv"), filepath.Join(out, "step_trace_time.csv"), filepath.Join(root, "profiler_metadata.json")}
	for _, p := range links {
		require.NoError(t, os.Remove(p))
		require.NoError(t, os.Symlink("/etc/passwd", p))
	}
	r := loadOne(t, root)
	text := warningsText(r) + r.Have.KernelNote + r.Have.GroupsNote + r.Have.TimelineNote
	require.NotContains(t, text, first)
	require.NotContains(t, text, "root:")
	for _, p := range links {
		require.Contains(t, text, p+" is a symbolic link that leads outside "+root+": not read")
	}
	require.True(t, r.Have.Timeline, "the trace is still measured")
}

// permission denied is named as such, for a folder and for a file. The
// checks run in a child process as user nobody (root reads everything).
func TestPermissionDeniedNamed(t *testing.T) {
	if os.Getenv("NPUPROF_DETECT_AS_NOBODY") != "" {
		_, err := Detect(os.Getenv("NPUPROF_DETECT_AS_NOBODY"))
		if err != nil {
			os.Stdout.WriteString("ERR " + err.Error() + "\n")
		}
		os.Exit(0)
	}
	if os.Getuid() != 0 {
		t.Skip("needs root to run the check as another user")
	}
	base, err := os.MkdirTemp("", "npuprof-perm")
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(base) })
	require.NoError(t, os.Chmod(base, 0o755))
	locked := filepath.Join(base, "locked")
	require.NoError(t, os.Mkdir(locked, 0o700))
	file := filepath.Join(base, "trace_view.json")
	require.NoError(t, os.WriteFile(file, []byte("[]"), 0o600))
	cluster := filepath.Join(base, "cluster")
	require.NoError(t, os.MkdirAll(filepath.Join(cluster, "host0"), 0o755))
	require.NoError(t, os.Mkdir(filepath.Join(cluster, "host1"), 0o700))
	// the test binary, where user nobody can run it
	bin := filepath.Join(base, "parser.test")
	self, err := os.ReadFile(os.Args[0])
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(bin, self, 0o755))
	for path, want := range map[string]string{
		locked:  locked + ": permission denied: the folder cannot be listed",
		file:    file + ": permission denied",
		cluster: filepath.Join(cluster, "host1") + ": permission denied: the folder cannot be listed",
	} {
		cmd := exec.Command(bin, "-test.run=^TestPermissionDeniedNamed$")
		cmd.Env = append(os.Environ(), "NPUPROF_DETECT_AS_NOBODY="+path)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		outb, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", outb)
		require.Contains(t, string(outb), "ERR "+want, path)
	}
}

// msprof's files, its text export and analyze/communication.json, given
// a FIFO or a link to /dev/zero, are refused the same way before anything
// is read.
func TestMsprofNonRegularFilesRefused(t *testing.T) {
	s := testutil.Tiny()
	s.Ranks, s.CommJSON = 1, true
	for _, kind := range []string{"fifo", "zero"} {
		for _, pat := range []string{"analyze/communication.json", msprofOutput + "/op_summary_*.csv", msprofOutput + "/task_time_*.csv", msprofOutput + "/msprof_*.json"} {
			dir, _ := testutil.GenerateLayout(t, s, tracegen.LayoutMsprofText)
			m, _ := filepath.Glob(filepath.Join(dir, "PROF_*", pat))
			require.Len(t, m, 1, pat)
			p := m[0]
			require.NoError(t, os.Remove(p))
			want := p + " is a named pipe (FIFO), not a regular file"
			if kind == "fifo" {
				require.NoError(t, syscall.Mkfifo(p, 0o644))
			} else {
				require.NoError(t, os.Symlink("/dev/zero", p))
				want = p + " is a character device, not a regular file"
			}
			err := detectWithin(t, dir)
			require.Error(t, err, "%s %s", kind, pat)
			require.True(t, errkind.Is(err, errkind.Usage), "%v", err)
			require.Contains(t, err.Error(), want)
		}
	}
}
