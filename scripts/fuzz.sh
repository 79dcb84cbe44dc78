#!/usr/bin/env bash
# Runs Go fuzz targets one after another, each for FUZZTIME:
#
#   scripts/fuzz.sh FUZZTIME ./pkg/dir:FuzzTarget...     (see FUZZ_TARGETS in the Makefile)
#
# Environment: GO (default go), FUZZFLAGS (extra `go test` flags, e.g. -parallel=1),
# FUZZMINIMIZETIME (time spent shrinking each new input, default 5s; Go's
# default of 60s stalls short runs on big seeds).
# A crasher is written by `go test` to <pkg>/testdata/fuzz/<Target>/; this
# script names it and exits 1. Rename the file after what it breaks, fix
# the bug, and commit the file: `go test` then replays it as a regression
# test.
#
# Go 1.26's fuzz coordinator can end a duration-limited run with "context
# deadline exceeded" while writing no crasher (go.dev/issue/75804, fixed in
# Go 1.27). Such a run did fuzz for the whole FUZZTIME and found nothing,
# so it is reported as such, not as a failure.
set -uo pipefail
if [ $# -lt 2 ]; then
	echo "usage: $0 FUZZTIME ./pkg/dir:FuzzTarget..." >&2
	exit 2
fi
fuzztime=$1
shift
go=${GO:-go}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
failed=()
for t in "$@"; do
	pkg=${t%%:*}
	fn=${t##*:}
	dir=$pkg/testdata/fuzz/$fn
	before=$(ls "$dir" 2>/dev/null | sort)
	echo "== $fn ($pkg, $fuzztime)"
	# shellcheck disable=SC2086
	$go test "$pkg" -run='^$' -fuzz="^$fn\$" -fuzztime="$fuzztime" -fuzzminimizetime="${FUZZMINIMIZETIME:-5s}" ${FUZZFLAGS:-} 2>&1 | tee "$log" | grep --line-buffered -v '^fuzz: elapsed: [0-9]*s, execs'
	rc=${PIPESTATUS[0]}
	grep '^fuzz: elapsed' "$log" | tail -n 1
	[ "$rc" -eq 0 ] && continue
	after=$(ls "$dir" 2>/dev/null | sort)
	if [ "$before" == "$after" ] && grep -q 'context deadline exceeded' "$log"; then
		echo "   ok: ran for $fuzztime; Go's coordinator then stopped with 'context deadline exceeded' and no crasher (go.dev/issue/75804)"
		continue
	fi
	new=$(comm -13 <(echo "$before") <(echo "$after") | tr '\n' ' ')
	echo "FAIL $fn: ${new:+new crasher(s) in $dir: $new}"
	failed+=("$fn")
done
if [ ${#failed[@]} -gt 0 ]; then
	echo "fuzz: failed: ${failed[*]}"
	exit 1
fi
echo "fuzz: all ${#} target(s) passed ($fuzztime each)"
