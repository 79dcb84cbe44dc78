# Sourced by the bench scripts (bench.sh, depthbench.sh, mergebench.sh,
# rankmem.sh) from the repository's root: where captures are cached, the
# binaries, GNU time, and the median of timed runs.
CACHE=${NPUPROF_BENCH_CACHE:-$PWD/.cache/bench}
BIN=${NPUPROF_BENCH_BIN:-./bin} # another build's bin/
TIME=/usr/bin/time
mkdir -p "$CACHE"

# need_bins: builds bin/ unless BIN holds npuprof and tracegen.
need_bins() {
	[ -x "$BIN/npuprof" ] && [ -x "$BIN/tracegen" ] || make build >/dev/null
}

# median_runs N CMD...: runs CMD N times (its standard output dropped) and
# prints the medians over the runs of the wall time (s), the CPU time
# (user + system, s) and the peak RSS (KiB).
median_runs() {
	local n=$1 tmp mid
	shift
	tmp=$(mktemp)
	for _ in $(seq "$n"); do
		"$TIME" -f "%e %U %S %M" -o "$tmp.one" "$@" >/dev/null
		tail -1 "$tmp.one" >>"$tmp"
	done
	mid=$(((n + 1) / 2))
	echo "$(awk '{print $1}' "$tmp" | sort -g | sed -n "${mid}p")" \
		"$(awk '{print $2+$3}' "$tmp" | sort -g | sed -n "${mid}p")" \
		"$(awk '{print $4}' "$tmp" | sort -g | sed -n "${mid}p")"
	rm -f "$tmp" "$tmp.one"
}
