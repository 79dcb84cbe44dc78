#!/usr/bin/env bash
# The per-node workflow at scale (docs/parquet.md, "Clusters beyond one
# machine"): a generated capture split into NODES node folders (hard-linked
# copies of the cached capture), each exported with --summary-only, then
# merged by one `npuprof analyze` of the folder that holds the exports.
# Prints, per rank count and trace size, the export's bytes per rank, the
# slowest node's export, and the merge's wall time and peak RSS, with the
# growth per rank between the smallest and the largest count.
#
#   scripts/mergebench.sh                      # 1024 ranks, 2 layers x 2 steps
#   RANKS="1000 10000" scripts/mergebench.sh   # the figures in docs/parquet.md
#   RANKS=1024 LAYERS="2 8" scripts/mergebench.sh   # trace size at one rank count
#
# Captures are cached in .cache/bench (tracegen hot-rank; about 0.26 MB a
# rank at 2 layers x 2 steps), exports in a temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
RANKS=${RANKS:-1024}
LAYERS=${LAYERS:-2}
STEPS=${STEPS:-2}
NODES=${NODES:-8}
CACHE=${NPUPROF_BENCH_CACHE:-$PWD/.cache/bench}
BIN=./bin
TIME=/usr/bin/time
mkdir -p "$CACHE"
[ -x "$BIN/npuprof" ] && [ -x "$BIN/tracegen" ] || make build >/dev/null
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
echo "== per-node export and merge (hot-rank, $NODES nodes, --summary-only; $(nproc) CPUs)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
first="" last=""
for layers in $LAYERS; do
	for n in $RANKS; do
		cap="$CACHE/merge-hot-rank-$n-l$layers-s$STEPS"
		if [ ! -f "$cap/.complete" ]; then
			rm -rf "$cap"
			echo "generating $n ranks in $cap ..." >&2
			# tracegen simulates every rank at once: unbounded, its heap
			# grew by ~2 MiB a rank (garbage, mostly); the limit keeps
			# 10,000 ranks in a few GiB
			GOMEMLIMIT=${TRACEGEN_MEMLIMIT:-6GiB} "$BIN/tracegen" -scenario hot-rank -ranks "$n" -layers "$layers" -steps "$STEPS" -q -o "$cap" >&2
			touch "$cap/.complete"
		fi
		trace=$(du -sb "$cap" | cut -f1)
		nodes="$work/nodes-$n-$layers"
		out="$work/exports-$n-$layers"
		mkdir -p "$out"
		i=0
		while read -r d; do
			k=$((i * NODES / n))
			mkdir -p "$nodes/node$k"
			cp -al "$d" "$nodes/node$k/"
			i=$((i + 1))
		done < <(find "$cap" -mindepth 1 -maxdepth 1 -type d -name '*_ascend_pt' | sort -V)
		slowest=0
		for k in $(seq 0 $((NODES - 1))); do
			"$TIME" -f "%e %U %S %M" -o "$work/t" "$BIN/npuprof" export "$nodes/node$k" -o "$out/node$k.pq" -q --summary-only >/dev/null
			slowest=$(awk -v a="$slowest" -v b="$(awk '{print $1}' "$work/t")" 'BEGIN { print (b > a ? b : a) }')
		done
		bytes=$(du -sb "$out" | cut -f1)
		"$TIME" -f "%e %U %S %M" -o "$work/t" "$BIN/npuprof" analyze "$out" --format json -o /dev/null
		read -r w u sy m <"$work/t"
		c=$(awk -v u="$u" -v s="$sy" 'BEGIN { print u + s }')
		awk -v n="$n" -v l="$layers" -v tr="$trace" -v b="$bytes" -v s="$slowest" -v w="$w" -v c="$c" -v m="$m" 'BEGIN {
			printf "%6d ranks, %d layers: trace %.0f KiB a rank; export %.1f KiB a rank (slowest node %.1f s wall); merge %.2f s wall, %.2f s CPU (%.2f ms CPU a rank), peak RSS %.1f MiB (%.1f KiB a rank)\n",
				n, l, tr/n/1024, b/n/1024, s, w, c, 1000*c/n, m/1024, m/n }'
		[ -z "$first" ] && first="$n $m $c"
		last="$n $m $c"
		rm -rf "$nodes" "$out"
	done
done
read -r n0 m0 w0 <<<"$first"
read -r n1 m1 w1 <<<"$last"
if [ "$n1" -gt "$n0" ]; then
	awk -v n0="$n0" -v m0="$m0" -v w0="$w0" -v n1="$n1" -v m1="$m1" -v w1="$w1" 'BEGIN {
		printf "merge growth per rank (%d -> %d ranks): %.1f KiB peak RSS, %.2f ms CPU\n", n0, n1, (m1-m0)/(n1-n0), 1000*(w1-w0)/(n1-n0) }'
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
