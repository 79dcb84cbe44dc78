#!/usr/bin/env bash
# make bench: npuprof's throughput and peak memory on generated traces of
# 50 MB, 200 MB and 1 GB (one rank each, cached in .cache/bench), the Go
# benchmarks of the trace reader and of end-to-end analyze, the Parquet
# read-back, N ranks on N cores, and Python's json.load on the same 200 MB
# file for the ratio. Issue 7's reference loop (internal/bench/walkref: a Go loop
# that only walks the bytes, string-aware, counting events) is timed on the
# same files, so a run can be related to the issue's figures, which came
# from another machine ("Calibration"). docs/performance.md explains every
# number.
#
# Environment: SIZES (default "50MB 200MB 1GB"), RUNS (CLI runs per
# measurement, median reported; default 5), PYRUNS (default 3),
# GOBENCH=0 to skip the go test benchmarks. Ends with scripts/rankmem.sh:
# peak RSS per rank on 8 and 1024 generated ranks (RANK_COUNTS), and
# scripts/depthbench.sh: 8, 48 and 94 MoE layers at 1 to 1024 ranks.
set -euo pipefail
cd "$(dirname "$0")/.."

SIZES=${SIZES:-"50MB 200MB 1GB"}
RUNS=${RUNS:-5}
PYRUNS=${PYRUNS:-3}
SCENARIO=ep-fc1-cumsum-steps
# device metadata before the device slices, as real torch_npu traces
# (tracegen -device-meta-first; internal/bench/benchdata.CacheTag)
TAG=metafirst
. scripts/benchlib.sh
if ! "$TIME" -f %M true >/dev/null 2>&1; then
	echo "bench: needs GNU time at /usr/bin/time for peak RSS (Debian: apt-get install time)" >&2
	exit 2
fi
go build -o "$BIN/walkref" ./tools/walkref

bytes_of() { # 50MB -> 50000000 (decimal units, as benchdata.ParseSize)
	local s=${1^^}
	case $s in
	*GB) echo $((${s%GB} * 1000000000)) ;;
	*MB) echo $((${s%MB} * 1000000)) ;;
	*KB) echo $((${s%KB} * 1000)) ;;
	*) echo "$s" ;;
	esac
}

# rank_dir SIZE [RANK]: the cached single-rank folder (same layout as
# internal/bench/benchdata, so go test and this script share the cache)
rank_dir() {
	local size=$1 rank=${2:-0} dir
	dir="$CACHE/$SCENARIO-$TAG-$size"
	[ "$rank" != 0 ] && dir="$CACHE/$SCENARIO-$TAG-$size-rank$rank"
	if [ ! -f "$dir/.complete" ]; then
		rm -rf "$dir"
		echo "generating $size trace (rank $rank) in $dir ..." >&2
		"$BIN/tracegen" -scenario "$SCENARIO" -device-meta-first -size "$(bytes_of "$size")" -rank "$rank" -q -o "$dir" >&2
		touch "$dir/.complete"
	fi
	ls -d "$dir"/*_ascend_pt
}

# measure LABEL CMD...: RUNS runs; prints the median wall s, cpu s, max RSS MiB
measure() {
	local label=$1
	shift
	local w c m
	read -r w c m < <(median_runs "$RUNS" "$@")
	awk -v l="$label" -v w="$w" -v c="$c" -v m="$m" 'BEGIN { printf "%s %.3f %.3f %.1f\n", l, w, c, m/1024 }'
}

# paired LABEL N CMD_A... -- CMD_B...: N rounds of A then B, so both see the
# same moment of a shared machine; prints the median wall s of A and of B
# and the median of the per-round ratios time(A)/time(B)
paired() {
	local label=$1 n=$2
	shift 2
	local a=() b=() tmp
	while [ "$1" != -- ]; do a+=("$1"); shift; done
	shift
	b=("$@")
	tmp=$(mktemp)
	for _ in $(seq "$n"); do
		"$TIME" -f "%e" -o "$tmp.a" "${a[@]}" >/dev/null
		"$TIME" -f "%e" -o "$tmp.b" "${b[@]}" >/dev/null
		echo "$(tail -1 "$tmp.a") $(tail -1 "$tmp.b")" >>"$tmp"
	done
	local mid=$(((n + 1) / 2)) ta tb r
	ta=$(awk '{print $1}' "$tmp" | sort -g | sed -n "${mid}p")
	tb=$(awk '{print $2}' "$tmp" | sort -g | sed -n "${mid}p")
	r=$(awk '{print ($2 > 0 ? $1/$2 : 0)}' "$tmp" | sort -g | sed -n "${mid}p")
	echo "$label $ta $tb $r"
	rm -f "$tmp" "$tmp.a" "$tmp.b"
}

mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b/1e6 }'; }

echo "== npuprof benchmark $(date -u +%Y-%m-%dT%H:%MZ) on $(nproc) CPUs ($(go version | awk '{print $3}'))"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo

results=$(mktemp)
for size in $SIZES; do
	dir=$(rank_dir "$size")
	trace="$dir/ASCEND_PROFILER_OUTPUT/trace_view.json"
	tb=$(stat -c %s "$trace")
	echo "$size $tb" >>"$results.sizes"
	measure "analyze-$size" "$BIN/npuprof" analyze "$dir" --format json -o /dev/null >>"$results"
	measure "analyze-1cpu-$size" env GOMAXPROCS=1 "$BIN/npuprof" analyze "$dir" --format json -o /dev/null >>"$results"
	pq="$CACHE/$SCENARIO-$TAG-$size-parquet"
	if [ ! -f "$pq/.complete" ]; then
		rm -rf "$pq"
		"$BIN/npuprof" export "$dir" -o "$pq" -q >/dev/null
		touch "$pq/.complete"
	fi
	measure "parquet-$size" "$BIN/npuprof" analyze "$pq" --format json -o /dev/null >>"$results"
done

# N ranks on N cores: as many 200 MB ranks as CPUs, in one cluster folder
n=$(nproc)
cluster="$CACHE/cluster-$TAG-200MB-x$n"
if [ ! -f "$cluster/.complete" ]; then
	rm -rf "$cluster"
	mkdir -p "$cluster"
	for r in $(seq 0 $((n - 1))); do
		echo "generating 200MB trace (rank $r) in $cluster ..." >&2
		"$BIN/tracegen" -scenario "$SCENARIO" -device-meta-first -size 200000000 -rank "$r" -q -o "$cluster" >&2
	done
	touch "$cluster/.complete"
fi
measure "cluster-$n-ranks-200MB" "$BIN/npuprof" analyze "$cluster" --format json -o /dev/null >>"$results"

py=""
if command -v python3 >/dev/null; then
	trace200="$(rank_dir 200MB)/ASCEND_PROFILER_OUTPUT/trace_view.json"
	py=$(RUNS=$PYRUNS measure "python-json.load-200MB" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$trace200")
	echo "$py" >>"$results"
fi

echo "End to end (npuprof analyze, one rank: trace_view.json + kernel_details.csv + step_trace_time.csv +"
echo "communication.json + metadata, every pass, JSON written); median of $RUNS runs; MB/s counts trace bytes"
printf "%-8s %10s %9s %9s %10s %12s %10s %12s %10s %12s\n" size trace_MB wall_s cpu_s MB/s MB/s/cpu-s peak_MiB RSS/trace 1cpu_wall 1cpu_MB/s
while read -r size tb; do
	read -r _ w c m < <(grep "^analyze-$size " "$results")
	read -r _ w1 c1 m1 < <(grep "^analyze-1cpu-$size " "$results")
	awk -v s="$size" -v tb="$tb" -v w="$w" -v c="$c" -v m="$m" -v w1="$w1" 'BEGIN {
		printf "%-8s %10.1f %9.3f %9.3f %10.1f %12.1f %10.1f %12.3f %10.3f %12.1f\n", s, tb/1e6, w, c, tb/1e6/w, tb/1e6/c, m, m*1048576/tb, w1, tb/1e6/w1 }'
done <"$results.sizes"
echo
echo "Parquet read-back (npuprof analyze OUTDIR of npuprof export), median of $RUNS runs; json_peak_MiB is the"
echo "same rank's analyze of its trace (above), RSS/json the ratio: the read-back must need less memory"
printf "%-8s %9s %9s %10s %18s %14s %9s %10s\n" size wall_s cpu_s peak_MiB trace_MB/s_equiv json_peak_MiB RSS/json RSS/trace
while read -r size tb; do
	read -r _ w c m < <(grep "^parquet-$size " "$results")
	read -r _ _ _ jm < <(grep "^analyze-$size " "$results")
	awk -v s="$size" -v tb="$tb" -v w="$w" -v c="$c" -v m="$m" -v jm="$jm" 'BEGIN {
		printf "%-8s %9.3f %9.3f %10.1f %18.1f %14.1f %9.2f %10.3f\n", s, w, c, m, tb/1e6/w, jm, m/jm, m*1048576/tb }'
done <"$results.sizes"
echo
read -r _ cw cc cm < <(grep "^cluster-" "$results")
if ! grep -q "^analyze-200MB " "$results"; then
	measure "analyze-200MB" "$BIN/npuprof" analyze "$(rank_dir 200MB)" --format json -o /dev/null >>"$results"
fi
read -r _ ow oc om < <(grep "^analyze-200MB " "$results")
if ! grep -q "^analyze-1cpu-200MB " "$results"; then
	measure "analyze-1cpu-200MB" env GOMAXPROCS=1 "$BIN/npuprof" analyze "$(rank_dir 200MB)" --format json -o /dev/null >>"$results"
fi
read -r _ o1w _ _ < <(grep "^analyze-1cpu-200MB " "$results")
trace200="$(rank_dir 200MB)/ASCEND_PROFILER_OUTPUT/trace_view.json"
tb200=$(stat -c %s "$trace200")
# a single rank uses every CPU (its trace is read in parts), so N ranks on
# N CPUs are compared with one rank on one CPU
awk -v n="$n" -v cw="$cw" -v cm="$cm" -v ow="$ow" -v o1w="$o1w" -v om="$om" 'BEGIN {
	printf "%d ranks of 200 MB on %d CPUs: %.3f s wall (one rank on one CPU: %.3f s, ratio %.2f; one rank on %d CPUs: %.3f s), peak %.1f MiB (one rank: %.1f MiB)\n", n, n, cw, o1w, cw/o1w, n, ow, cm, om }'
if [ -n "$py" ]; then
	read -r _ pw pc pm <<<"$py"
	tb=$tb200
	awk -v pw="$pw" -v pm="$pm" -v ow="$ow" -v om="$om" -v tb="${tb:-200000000}" -v n="$PYRUNS" 'BEGIN {
		printf "Python json.load of the same 200 MB trace_view.json (median of %d): %.2f s, %.1f MB/s, peak %.0f MiB -> npuprof analyze is %.1fx faster with %.1fx less memory\n", n, pw, tb/1e6/pw, pm, pw/ow, pm/om }'
fi
# issue 7's targets, on the 200 MB rank
if grep -q "^analyze-1cpu-200MB " "$results"; then
	read -r _ w1 _ _ < <(grep "^analyze-1cpu-200MB " "$results")
	tb=$tb200
	pw=""
	[ -n "$py" ] && read -r _ pw _ _ <<<"$py"
	awk -v w1="$w1" -v om="$om" -v ow="$ow" -v tb="$tb" -v pw="$pw" 'BEGIN {
		v = tb/1e6/w1; printf "target: >= 400 MB/s of trace per core (GOMAXPROCS=1, 200 MB): %.0f MB/s -> %s\n", v, (v >= 400 ? "met" : "NOT met")
		r = om*1048576/tb; printf "target: peak RSS <= 0.3x the trace (200 MB): %.2fx -> %s\n", r, (r <= 0.3 ? "met" : "NOT met")
		if (pw != "") { x = pw/ow; printf "target: > 20x Python json.load (wall, 200 MB): %.1fx -> %s\n", x, (x > 20 ? "met" : "NOT met") } }'
fi
if grep -q "^parquet-200MB " "$results" && grep -q "^analyze-200MB " "$results"; then
	read -r _ _ _ qm < <(grep "^parquet-200MB " "$results")
	read -r _ _ _ jm < <(grep "^analyze-200MB " "$results")
	tb=$tb200
	awk -v qm="$qm" -v jm="$jm" -v tb="$tb" 'BEGIN {
		r = qm*1048576/tb; printf "target: Parquet read-back peak RSS <= 0.3x the trace and below the JSON path (200 MB): %.2fx, %.1f vs %.1f MiB -> %s\n", r, qm, jm, (r <= 0.3 && qm < jm ? "met" : "NOT met") }'
fi
# Calibration. Issue 7's figures come from another machine: there its
# reference loop walked the 200 MB trace in 0.28 s (720 MB/s) and Python's
# json.load took 11 s. The same loop, npuprof and Python on this machine,
# same file, run in alternation (the machine is shared: a paired ratio is
# steadier than two medians taken minutes apart), say how this machine
# compares, and express the targets in the loop's units: 400 MB/s per core
# = 400/720 = 0.556x the loop's speed; > 20x Python = 11/20 s = 0.55 s =
# 0.51x the loop's speed there.
echo
echo "Calibration: issue 7's reference loop (internal/bench/walkref: a Go loop that only walks the bytes, string-aware,"
echo "counting events, 1 MiB reads) in alternation with npuprof and with Python on the same 200 MB trace_view.json"
read -r _ ww w1 r1 < <(paired walk-np1 "$RUNS" "$BIN/walkref" "$trace200" -- env GOMAXPROCS=1 "$BIN/npuprof" analyze "$(rank_dir 200MB)" --format json -o /dev/null)
read -r _ ww2 w2 r2 < <(paired walk-np2 "$RUNS" "$BIN/walkref" "$trace200" -- "$BIN/npuprof" analyze "$(rank_dir 200MB)" --format json -o /dev/null)
awk -v ww="$ww" -v w1="$w1" -v r1="$r1" -v ww2="$ww2" -v w2="$w2" -v r2="$r2" -v tb="$tb200" -v n="$RUNS" 'BEGIN {
	printf "reference loop: %.3f s = %.0f MB/s here (medians of %d; the issue'"'"'s machine: 0.28 s = 720 MB/s, %.2fx this one)\n", ww, tb/1e6/ww, n, (tb/1e6/ww > 0 ? 720/(tb/1e6/ww) : 0)
	printf "npuprof analyze on one CPU: %.3f s; its speed in the loop'"'"'s units (median of the per-round ratios): %.2fx -> the per-core target in those units (>= 0.556x) %s\n", w1, r1, (r1 >= 0.556 ? "met" : "NOT met")
	printf "npuprof analyze on %s CPUs: %.3f s; %.2fx the loop'"'"'s speed\n", "all", w2, r2 }'
if command -v python3 >/dev/null; then
	read -r _ pw3 ww3 rp < <(paired python-walk "$PYRUNS" python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$trace200" -- "$BIN/walkref" "$trace200")
	awk -v pw="$pw3" -v ww="$ww3" -v rp="$rp" -v r2="$r2" -v n="$PYRUNS" 'BEGIN {
		printf "Python json.load: %.2f s here (the issue'"'"'s machine: ~11 s); the reference loop itself is %.1fx Python here (median of %d paired rounds; there: 39x)\n", pw, rp, n
		printf "so > 20x Python asks npuprof for %.2fx the loop'"'"'s speed on this machine (there: 0.51x); npuprof on all CPUs: %.2fx -> %s\n", 20/rp, r2, (r2 >= 20/rp ? "met" : "NOT met") }'
fi
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
rm -f "$results" "$results.sizes"

if [ "${GOBENCH:-1}" != 0 ]; then
	echo
	echo "== go test -bench (trace reader alone, the byte-walk floor, end-to-end analyze, Parquet read-back); cpu-MB/s = trace"
	echo "   bytes per CPU second; peak-heap-MiB = largest heap in the loop (GOGC=100 here, 50 in the CLI); B/op = allocated per run"
	gs=$(echo "$SIZES" | tr ' ' ',')
	NPUPROF_BENCH_CACHE=$CACHE NPUPROF_BENCH_SIZES=$gs go test -run '^$' -bench 'Read|Walk' -benchtime 3x -count 3 ./internal/parser/traceview/ | grep -E '^Benchmark|^ok'
	NPUPROF_BENCH_CACHE=$CACHE NPUPROF_BENCH_SIZES=$gs go test -run '^$' -bench 'Analyze|ReadBack' -benchtime 3x -count 3 ./internal/analysis/ ./internal/pipeline/ | grep -E '^Benchmark|^ok'
	echo
	echo "== cluster memory: peak heap grows with --workers, not with the rank count"
	NPUPROF_MEMORY_TESTS=1 go test -count=1 -run 'TestClusterMemoryBoundedByWorkers' -v ./internal/pipeline/ | grep -E 'peak heap|^(ok|FAIL|---)'
fi

echo
RUNS=$RUNS ./scripts/rankmem.sh

echo
RUNS=$(((RUNS + 1) / 2)) ./scripts/depthbench.sh
