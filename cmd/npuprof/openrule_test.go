package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/npuprof/npuprof/internal/testutil"
	"github.com/stretchr/testify/require"
)

// Every file flag, and every file npuprof looks for in a capture folder,
// given a FIFO or a link to /dev/zero, ends within a second with exit 2 and
// the path (issue 31): nothing is opened that could wait for a writer or
// never end.
func TestEveryFileFlagRefusesFIFOAndDevZero(t *testing.T) {
	_, rank := testutil.GenerateTiny(t)
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	require.NoError(t, syscall.Mkfifo(fifo, 0o644))
	zero := filepath.Join(dir, "zero")
	require.NoError(t, os.Symlink("/dev/zero", zero))
	budget := "hccl.total.time_us <= baseline * 1.05"
	cases := []func(p string) []string{
		func(p string) []string { return []string{"analyze", rank, "--deploy", p} },
		func(p string) []string { return []string{"analyze", rank, "--rules", p} },
		func(p string) []string { return []string{"analyze", rank, "--vllm-log", p} },
		func(p string) []string { return []string{"analyze", rank, "--vllm-bench", p} },
		func(p string) []string { return []string{"analyze", rank, "--experts", p} },
		func(p string) []string { return []string{"check", rank, "--baseline", p, "--budget", budget} },
		func(p string) []string {
			return []string{"eplb", "plan", "--experts", p, "-o", filepath.Join(dir, "map.json")}
		},
		func(p string) []string { return []string{"diff", p, p} },
		func(p string) []string { return []string{"diff", rank, rank, "--vllm-log-before", p} },
		func(p string) []string { return []string{"diff", rank, rank, "--vllm-log-after", p} },
		func(p string) []string { return []string{"rules", "test", p} },
		func(p string) []string { return []string{"rules", "list", "--rules", p} },
	}
	for _, c := range cases {
		for _, p := range []string{fifo, zero} {
			args := c(p)
			code, stderr := runWithin(t, args)
			require.Equal(t, ExitUsage, code, "%v: %s", args, stderr)
			require.Contains(t, stderr, p, args)
			require.Contains(t, stderr, "not a regular file", args)
		}
	}
	// --service names a folder: a FIFO or device in its place, or as one
	// of its files, is refused the same way (analyze and export)
	for _, kind := range []string{"fifo", "zero"} {
		for _, name := range []string{"", "request.csv", "batch.csv", "profiler.db"} {
			svc := filepath.Join(t.TempDir(), "service")
			p := svc
			if name != "" {
				require.NoError(t, os.MkdirAll(svc, 0o755))
				p = filepath.Join(svc, name)
			}
			if kind == "fifo" {
				require.NoError(t, syscall.Mkfifo(p, 0o644))
			} else {
				require.NoError(t, os.Symlink("/dev/zero", p))
			}
			for _, args := range [][]string{
				{"analyze", rank, "--service", svc},
				{"diff", rank, rank, "--service-before", svc},
				{"diff", rank, rank, "--service-after", svc},
				{"export", rank, "-o", filepath.Join(t.TempDir(), "out"), "--service", svc},
			} {
				code, stderr := runWithin(t, args)
				require.Equal(t, ExitUsage, code, "%v: %s", args, stderr)
				require.Contains(t, stderr, p, args)
				what := "not a regular file"
				if name == "" {
					what = "not a folder"
				}
				require.Contains(t, stderr, what, args)
			}
		}
	}
}

// A FIFO or /dev/zero in the capture folder (a server log, a file of
// experts/) is refused the same way.
func TestCaptureFolderFIFORefused(t *testing.T) {
	for _, name := range []string{"server.log", filepath.Join("experts", "decode_0.csv"), filepath.Join("experts", "load.csv"), filepath.Join("experts", "eplb.log"),
		filepath.Join("service", "request.csv"), filepath.Join("service", "batch.csv"), filepath.Join("service", "profiler.db")} {
		for _, kind := range []string{"fifo", "zero"} {
			_, rank := testutil.GenerateTiny(t)
			capture := filepath.Dir(rank)
			p := filepath.Join(capture, name)
			require.NoError(t, os.MkdirAll(filepath.Dir(p), 0o755))
			if strings.HasPrefix(name, "service") {
				// a service profile folder beside the ranks: the other
				// table of the pair, so the folder is recognised
				other := "batch.csv"
				if filepath.Base(name) == "batch.csv" {
					other = "request.csv"
				}
				require.NoError(t, os.WriteFile(filepath.Join(capture, "service", other), []byte("x\n"), 0o644))
				if filepath.Base(name) == "profiler.db" {
					require.NoError(t, os.WriteFile(filepath.Join(capture, "service", "chrome_tracing.json"), []byte("[]"), 0o644))
				}
			}
			if kind == "fifo" {
				require.NoError(t, syscall.Mkfifo(p, 0o644))
			} else {
				require.NoError(t, os.Symlink("/dev/zero", p))
			}
			code, stderr := runWithin(t, []string{"analyze", capture})
			require.Equal(t, ExitUsage, code, "%s %s: %s", name, kind, stderr)
			require.Contains(t, stderr, p, name)
		}
	}
}

func runWithin(t *testing.T, args []string) (int, string) {
	t.Helper()
	type res struct {
		code   int
		stderr string
	}
	done := make(chan res, 1)
	go func() {
		code, _, e := run(args...)
		done <- res{code, e}
	}()
	select {
	case r := <-done:
		return r.code, r.stderr
	// an open of a FIFO blocks, and a read of /dev/zero never ends: a
	// refusal returns long before this (not a timing test: a loaded
	// machine only delays the refusal, never past the wait)
	case <-time.After(30 * time.Second):
		t.Fatalf("npuprof %s blocked", strings.Join(args, " "))
	}
	return 0, ""
}

// check with a budget whose metric the baseline lacks exits 1 with the
// reason; --allow-missing lets it pass (issue 31).
func TestCheckUnjudgedBudgetFails(t *testing.T) {
	_, rank := testutil.GenerateTiny(t)
	base := filepath.Join(t.TempDir(), "base.json")
	code, js, errs := run("analyze", rank, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	// the baseline lost the metric (an older npuprof, a capture without it)
	var doc any
	require.NoError(t, json.Unmarshal([]byte(js), &doc))
	var drop func(v any)
	drop = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			delete(x, "hccl.total.time_us")
			for _, e := range x {
				drop(e)
			}
		case []any:
			for _, e := range x {
				drop(e)
			}
		}
	}
	drop(doc)
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(base, b, 0o644))
	budget := "hccl.total.time_us <= baseline * 1.05"
	code, _, errs = run("check", rank, "--baseline", base, "--budget", budget, "--fail-on", "high")
	require.Equal(t, ExitFindings, code, errs)
	require.Contains(t, errs, "budget/hccl.total.time_us could not be evaluated: metric hccl.total.time_us is not in the baseline")
	require.Contains(t, errs, "(--allow-missing lets it pass)")
	require.Equal(t, 1, strings.Count(errs, "\n"), errs)
	code, _, errs = run("check", rank, "--baseline", base, "--budget", budget, "--fail-on", "high", "--allow-missing")
	require.NotContains(t, errs, "could not be evaluated", "exit %d", code)
}

// A 256 MiB --deploy (or --rules) is refused by its size before it is read
// (a sparse file: nothing is written to disk).
func TestOversizedFlagFilesRefused(t *testing.T) {
	_, rank := testutil.GenerateTiny(t)
	big := filepath.Join(t.TempDir(), "serve.sh")
	f, err := os.Create(big)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(256<<20))
	require.NoError(t, f.Close())
	for flag, limit := range map[string]string{"--deploy": "256 KiB limit for a deployment script", "--rules": "1 MiB limit for a rule file"} {
		code, stderr := runWithin(t, []string{"analyze", rank, flag, big})
		require.Equal(t, ExitUsage, code, stderr)
		require.Contains(t, stderr, big+" is 256 MiB, over the "+limit+": not read")
	}
}

// A service profile file that is a link out of its folder is not read, so
// nothing of it is quoted; the rest of the folder is.
func TestServiceLinkOutsideNotRead(t *testing.T) {
	_, rank := testutil.GenerateTiny(t)
	capture := filepath.Dir(rank)
	svc := filepath.Join(capture, "service")
	require.NoError(t, os.MkdirAll(svc, 0o755))
	outside := filepath.Join(t.TempDir(), "request.csv")
	require.NoError(t, os.WriteFile(outside, []byte("SECRETLINE,start_time\nx,1\n"), 0o644))
	require.NoError(t, os.Symlink(outside, filepath.Join(svc, "request.csv")))
	require.NoError(t, os.WriteFile(filepath.Join(svc, "batch.csv"), []byte("x\n"), 0o644))
	code, out, errs := run("analyze", capture, "--format", "json")
	require.Equal(t, ExitOK, code, errs)
	require.NotContains(t, out+errs, "SECRETLINE")
	require.Contains(t, out+errs, "request.csv is a symbolic link that leads outside")
}

// A --deploy script at its size limit, of the costliest shape to parse (a
// command substitution a line), is analyzed in under 100 MiB of peak RSS
// (issue 31: a 256 MiB one took 9.8 GB; bigger ones are refused by size).
// The analysis runs in a child process (this test binary, alone), so that
// no other test's memory is counted.
func TestDeployPeakMemory(t *testing.T) {
	if args := os.Getenv("NPUPROF_DEPLOY_PEAK"); args != "" {
		rank, script, _ := strings.Cut(args, string(os.PathListSeparator))
		code, _, errs := run("analyze", rank, "--deploy", script)
		status, err := os.ReadFile("/proc/self/status")
		require.NoError(t, err)
		for _, l := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(l, "VmHWM:") {
				fmt.Printf("exit %d peak %s\n", code, strings.TrimSpace(strings.TrimPrefix(l, "VmHWM:")))
			}
		}
		require.Equal(t, ExitOK, code, errs)
		return
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc/self/status (VmHWM) on this system")
	}
	if raceEnabled {
		t.Skip("the race detector's memory counts in the peak RSS (311-335 MiB under -race)")
	}
	_, rank := testutil.GenerateTiny(t)
	var b strings.Builder
	b.WriteString("#!/bin/bash\n")
	for b.Len() < 256<<10-64 {
		b.WriteString("a=$(b)\n")
	}
	b.WriteString("vllm serve /m\n")
	require.LessOrEqual(t, b.Len(), 256<<10)
	script := filepath.Join(t.TempDir(), "serve.sh")
	require.NoError(t, os.WriteFile(script, []byte(b.String()), 0o644))
	cmd := exec.Command(os.Args[0], "-test.run=^TestDeployPeakMemory$", "-test.count=1")
	cmd.Env = append(os.Environ(), "NPUPROF_DEPLOY_PEAK="+rank+string(os.PathListSeparator)+script)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s", out)
	m := regexp.MustCompile(`exit 0 peak (\d+) kB`).FindSubmatch(out)
	require.NotNil(t, m, "%s", out)
	kb, err := strconv.Atoi(string(m[1]))
	require.NoError(t, err)
	t.Logf("peak RSS %.1f MiB", float64(kb)/1024)
	require.Less(t, kb, 100<<10, "peak RSS of analyze --deploy with a 256 KiB script")
}

// check never vouches for a capture no rank of which was read whole:
// exit 1 with one line saying why, whatever --partial-findings says.
func TestCheckNoWholeRankFails(t *testing.T) {
	for _, pf := range []string{"gate", "report"} {
		code, out, errs := run("check", filepath.Join(brokenDir, "truncated-mid-event"), "--partial-findings", pf)
		require.Equal(t, ExitFindings, code, "%s: %s", pf, errs)
		require.Equal(t, 1, strings.Count(errs, "\n"), "%s: %s", pf, errs)
		require.Contains(t, errs, "no rank was read whole (all 1 are partial: a file cut short or damaged), so the check cannot vouch for the capture", pf)
		require.Contains(t, out, "no rank read whole: FAIL", pf)
	}
}
