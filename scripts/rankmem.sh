#!/usr/bin/env bash
# Peak RSS per rank on generated clusters of many small ranks: what a
# finished rank leaves behind for the cross-rank passes and the document
# (its results, the collective arrival times), once its model is released.
# Run by make bench (after the single-rank figures), or alone:
#
#   scripts/rankmem.sh            # 8 and 1024 ranks, default --workers
#   RANK_COUNTS="8 2048" RUNS=1 scripts/rankmem.sh
#
# Each cluster (tracegen clean-steps, 1 layer, 1 step, ~0.13 MB a rank) is
# cached in .cache/bench. Prints, per count, the median wall time and peak
# RSS of `npuprof analyze --format json -o /dev/null` over RUNS runs, then
# the growth per rank between the smallest and the largest count.
set -euo pipefail
cd "$(dirname "$0")/.."
RANK_COUNTS=${RANK_COUNTS:-"8 1024"}
RUNS=${RUNS:-3}
. scripts/benchlib.sh
need_bins
echo "== many ranks: peak RSS per rank (clean-steps, 1 layer, 1 step per rank; default --workers, $(nproc) CPUs)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
first="" last=""
for n in $RANK_COUNTS; do
	dir="$CACHE/ranks-clean-steps-$n"
	if [ ! -f "$dir/.complete" ]; then
		rm -rf "$dir"
		echo "generating $n ranks in $dir ..." >&2
		"$BIN/tracegen" -scenario clean-steps -ranks "$n" -layers 1 -steps 1 -q -o "$dir" >&2
		touch "$dir/.complete"
	fi
	read -r w _ m < <(median_runs "$RUNS" "$BIN/npuprof" analyze "$dir" --format json -o /dev/null)
	awk -v n="$n" -v w="$w" -v m="$m" 'BEGIN { printf "%5d ranks: %7.2f s wall (%.2f ms a rank), peak RSS %6.1f MiB\n", n, w, 1000*w/n, m/1024 }'
	[ -z "$first" ] && first="$n $m"
	last="$n $m"
done
read -r n0 m0 <<<"$first"
read -r n1 m1 <<<"$last"
if [ "$n1" -gt "$n0" ]; then
	awk -v n0="$n0" -v m0="$m0" -v n1="$n1" -v m1="$m1" 'BEGIN { printf "peak RSS per rank: %.1f KiB (%d -> %d ranks)\n", (m1-m0)/(n1-n0), n0, n1 }'
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
