#!/usr/bin/env bash
# Cost at the model's real depth (issue 34): one capture of
# ep-fc1-cumsum-steps at 8, 48 and 94 MoE layers (Qwen3-235B has 94),
# 4 steps, analyzed as 1, 8, 128 and 1024 ranks. tracegen writes 8 ranks;
# the larger counts are hard-linked copies of them (rank r is rank r mod 8's
# files under rank r's folder name and profiler_info_r.json), so 1024 deep
# ranks take the disk of 8. Run by make bench, or alone:
#
#   scripts/depthbench.sh                     # layers 8 48 94; ranks 1 8 128 1024
#   LAYERS="94" RANKS="1 8 128" RUNS=1 scripts/depthbench.sh
#
# Per capture: the median over RUNS runs (1 run from 1024 ranks on) of
# `npuprof analyze --format json -o /dev/null` with the default --workers:
# wall time, CPU time (user + system), peak RSS; then MB of trace (every
# file of the ranks) per CPU-second, CPU per rank, and the peak RSS a rank
# adds over the 8-rank run and over the 128-rank run. The second is the
# per-rank figure at depth: 8 deep ranks keep their replay timeline
# decoded (at most 8 MiB, replay.decodedMaxBytes), more stay encoded, so
# the first understates it by up to that much. Captures are cached in
# .cache/bench.
set -euo pipefail
cd "$(dirname "$0")/.."
LAYERS=${LAYERS:-"8 48 94"}
RANKS=${RANKS:-"1 8 128 1024"}
RUNS=${RUNS:-3}
. scripts/benchlib.sh
need_bins

# capture LAYERS RANKS: the cached folder of that many ranks
capture() {
	local layers=$1 n=$2 base dir r s src name info
	base="$CACHE/depth-L$layers-x8"
	if [ ! -f "$base/.complete" ]; then
		rm -rf "$base"
		echo "generating 8 ranks of $layers layers in $base ..." >&2
		"$BIN/tracegen" -scenario ep-fc1-cumsum-steps -layers "$layers" -steps 4 -ranks 8 -q -o "$base" >&2
		touch "$base/.complete"
	fi
	[ "$n" = 8 ] && { echo "$base"; return; }
	dir="$CACHE/depth-L$layers-x$n"
	if [ ! -f "$dir/.complete" ]; then
		rm -rf "$dir"
		mkdir -p "$dir"
		echo "linking $n ranks of $layers layers in $dir ..." >&2
		for r in $(seq 0 $((n - 1))); do
			s=$((r % 8))
			src=$(ls -d "$base"/*_rank${s}_*_ascend_pt)
			name=$(basename "$src" | sed -E "s/^dp0_/dp$((r / 8))_/; s/_rank${s}_/_rank${r}_/")
			mkdir -p "$dir/$name"
			cp -al "$src/ASCEND_PROFILER_OUTPUT" "$dir/$name/"
			ln "$src/profiler_metadata.json" "$dir/$name/"
			info="$src/profiler_info_$s.json"
			sed -E "s/\"rank_id\": $s\$/\"rank_id\": $r/" "$info" >"$dir/$name/profiler_info_$r.json"
		done
		touch "$dir/.complete"
	fi
	echo "$dir"
}

echo "== depth: ep-fc1-cumsum-steps, 4 steps, default --workers, $(nproc) CPUs ($(date -u +%Y-%m-%dT%H:%MZ))"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%6s %6s %9s %9s %9s %10s %12s %11s %12s %14s\n" layers ranks MB wall_s cpu_s MB/cpu-s "cpu/rank ms" "peak MiB" "KiB/rank>8" "KiB/rank>128"
for layers in $LAYERS; do
	m8="" m128=""
	for n in $RANKS; do
		dir=$(capture "$layers" "$n")
		bytes=$(find "$dir" -type f -name '*' ! -name npuprof_truth.json ! -name .complete -printf '%s\n' | awk '{s += $1} END {print s}')
		runs=$RUNS
		[ "$n" -ge 1024 ] && runs=1
		read -r w c m < <(median_runs "$runs" "$BIN/npuprof" analyze "$dir" --format json -o /dev/null)
		awk -v l="$layers" -v n="$n" -v b="$bytes" -v w="$w" -v c="$c" -v m="$m" -v m8="$m8" -v m128="$m128" 'BEGIN {
			per = (m8 != "" && n > 8) ? sprintf("%.1f", (m - m8) / (n - 8)) : "-"
			per128 = (m128 != "" && n > 128) ? sprintf("%.1f", (m - m128) / (n - 128)) : "-"
			printf "%6d %6d %9.1f %9.2f %9.2f %10.1f %12.1f %11.1f %12s %14s\n", l, n, b/1e6, w, c, (c > 0 ? b/1e6/c : 0), 1000*c/n, m/1024, per, per128 }'
		[ "$n" = 8 ] && m8=$m
		[ "$n" = 128 ] && m128=$m
	done
done
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
