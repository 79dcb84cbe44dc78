package main

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// The locale's character set decides µs or us: LC_ALL, then LC_CTYPE, then
// LANG; none set is the C locale.
func TestUTF8Locale(t *testing.T) {
	for _, c := range []struct {
		env  map[string]string
		utf8 bool
	}{
		{map[string]string{"LANG": "en_US.UTF-8"}, true},
		{map[string]string{"LANG": "zh_CN.utf8"}, true},
		{map[string]string{"LANG": "zh_CN.GBK"}, false},
		{map[string]string{"LANG": "C"}, false},
		{map[string]string{}, false},
		{map[string]string{"LC_ALL": "C", "LANG": "en_US.UTF-8"}, false},
		{map[string]string{"LC_CTYPE": "C.UTF-8", "LANG": "C"}, true},
	} {
		require.Equal(t, c.utf8, utf8Locale(func(k string) string { return c.env[k] }), "%v", c.env)
	}
}

// On a non-UTF-8 locale the summary spells µs as us, nothing else changes;
// the JSON keeps its units either way.
func TestSummaryASCIIUnits(t *testing.T) {
	args := []string{"analyze", "../../testdata/traces/ep-fc1-cumsum", "-q"}
	_, utf, _ := run(args...)
	var out, errb bytes.Buffer
	io := newStreams(strings.NewReader(""), &out, &errb)
	io.asciiUnits = true
	require.Equal(t, ExitOK, runMain(io, args), errb.String())
	require.Contains(t, utf, "µs")
	require.NotContains(t, out.String(), "µs")
	require.Equal(t, strings.ReplaceAll(utf, "µs", "us"), out.String())
}

// check --baseline's comparison is part of check's summary: on a
// non-UTF-8 locale it spells µs as us too, nothing else changes.
func TestCheckBaselineASCIIUnits(t *testing.T) {
	old := filepath.Join(t.TempDir(), "old.json")
	code, _, errs := run("analyze", "../../testdata/traces/ep-fc1-cumsum", "--format", "json", "-o", old, "-q")
	require.Equal(t, ExitOK, code, errs)
	args := []string{"check", "../../testdata/traces/clean-2ranks", "--baseline", old, "-q"}
	want, utf, _ := run(args...)
	var out, errb bytes.Buffer
	io := newStreams(strings.NewReader(""), &out, &errb)
	io.asciiUnits = true
	require.Equal(t, want, runMain(io, args), errb.String())
	require.Contains(t, utf, "Compared with the baseline ")
	require.Regexp(t, `\n  step time: \S+ → \S+, \S+µs`, utf)
	require.NotContains(t, out.String(), "µs")
	require.Equal(t, strings.ReplaceAll(utf, "µs", "us"), out.String())
}
