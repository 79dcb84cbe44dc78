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
#   RANKS=1000 COPIES=10 scripts/mergebench.sh       # 10,000 ranks: see below
#
# tracegen cannot write 10,000 ranks here (it holds every rank's files open
# at once, past the open-file limit), so COPIES=K makes K copies of the
# generated capture: the trace files hard-linked, each copy's rank ids
# (folder name, profiler_info_N.json) and group members offset by the
# capture's rank count. The copies keep the communicator names, so the
# cross-rank passes match each collective over K times the ranks of one
# copy's group: a harder merge than K separate jobs, not an easier one.
#
# Captures are cached in .cache/bench (tracegen hot-rank; about 0.26 MB a
# rank at 2 layers x 2 steps), exports in a temporary folder.
set -euo pipefail
cd "$(dirname "$0")/.."
RANKS=${RANKS:-1024}
LAYERS=${LAYERS:-2}
STEPS=${STEPS:-2}
NODES=${NODES:-8}
COPIES=${COPIES:-1}
. scripts/benchlib.sh
need_bins
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
		if [ "$COPIES" -gt 1 ]; then
			big="$work/copies-$n-$layers"
			python3 - "$cap" "$big" "$COPIES" <<'PY'
import json, os, re, sys
src, dst, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
dirs = sorted(d for d in os.listdir(src) if d.endswith("_ascend_pt"))
n = len(dirs)
for k in range(copies):
    for d in dirs:
        r = int(re.search(r"_rank(\d+)_", d).group(1))
        nr = k * n + r
        nd = os.path.join(dst, d.replace(f"_rank{r}_", f"_rank{nr}_"))
        out = os.path.join(nd, "ASCEND_PROFILER_OUTPUT")
        os.makedirs(out)
        for f in os.listdir(os.path.join(src, d, "ASCEND_PROFILER_OUTPUT")):
            os.link(os.path.join(src, d, "ASCEND_PROFILER_OUTPUT", f), os.path.join(out, f))
        with open(os.path.join(src, d, f"profiler_info_{r}.json")) as f:
            info = json.load(f)
        info["rank_id"] = nr
        with open(os.path.join(nd, f"profiler_info_{nr}.json"), "w") as f:
            json.dump(info, f)
        with open(os.path.join(src, d, "profiler_metadata.json")) as f:
            meta = json.load(f)
        for g in meta.get("parallel_group_info", {}).values():
            g["global_ranks"] = [x + k * n for x in g["global_ranks"]]
        with open(os.path.join(nd, "profiler_metadata.json"), "w") as f:
            json.dump(meta, f)
PY
			cap="$big"
			n=$((n * COPIES))
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
		rm -rf "$nodes" "$out" "$work/copies-"*
	done
done
read -r n0 m0 w0 <<<"$first"
read -r n1 m1 w1 <<<"$last"
if [ "$n1" -gt "$n0" ]; then
	awk -v n0="$n0" -v m0="$m0" -v w0="$w0" -v n1="$n1" -v m1="$m1" -v w1="$w1" 'BEGIN {
		printf "merge growth per rank (%d -> %d ranks): %.1f KiB peak RSS, %.2f ms CPU\n", n0, n1, (m1-m0)/(n1-n0), 1000*(w1-w0)/(n1-n0) }'
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
