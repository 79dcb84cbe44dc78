#!/usr/bin/env bash
# Runs Go fuzz targets one after another, each for FUZZTIME:
#
#   scripts/fuzz.sh FUZZTIME ./pkg/dir:FuzzTarget...     (see FUZZ_TARGETS in the Makefile)
#
# Environment: GO (default go), FUZZFLAGS (extra `go test` flags, e.g. -parallel=1),
# FUZZMINIMIZETIME (time spent shrinking each new input, default 5s; Go's
# default of 60s stalls short runs on big seeds).
#
# FUZZ_ONLY (space-separated) runs only the targets it names, each matched
# exactly, never as a prefix: a bare name (FuzzRead is internal/parser/traceview's
# FuzzRead only, not FuzzReadDB) or, for a name two packages share,
# the package's last path elements and the name (vllmserve:FuzzReadLog,
# internal/inputs/expertload:FuzzReadLog). A name that matches no target, or a bare
# name that matches several, is an error (exit 2) listing the choices.
# FUZZ_LIST=1 prints the selected targets instead of running them.
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
if [ -n "${FUZZ_ONLY:-}" ]; then
	selected=()
	for want in $FUZZ_ONLY; do
		hits=()
		for t in "$@"; do
			if [[ $want == *:* ]]; then
				[[ $t == "./$want" || $t == */"$want" ]] && hits+=("$t")
			elif [ "${t##*:}" == "$want" ]; then
				hits+=("$t")
			fi
		done
		if [ ${#hits[@]} -eq 0 ]; then
			echo "fuzz: FUZZ_ONLY=$want names no fuzz target (make fuzz-list prints them)" >&2
			exit 2
		fi
		if [ ${#hits[@]} -gt 1 ]; then
			choices=$(for h in "${hits[@]}"; do p=${h%%:*}; printf ' %s:%s' "${p##*/}" "${h##*:}"; done)
			echo "fuzz: FUZZ_ONLY=$want is in ${#hits[@]} packages; name one:$choices" >&2
			exit 2
		fi
		selected+=("${hits[0]}")
	done
	set -- "${selected[@]}"
fi
if [ -n "${FUZZ_LIST:-}" ]; then
	printf '%s\n' "$@"
	exit 0
fi
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
