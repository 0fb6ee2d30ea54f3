#!/usr/bin/env bash
# The file job of issue 15 (BENCHMARKS.md, "Issue 15: checkpoint files"): `dtcast dequantize` of a
# synthetic 2 GiB block-FP8 checkpoint (bench/make_fp8_checkpoint.py: DeepSeek-V3 names and
# shapes) to bfloat16, against `cp -r` of the input and the numpy job bench/dequant_checkpoint.py,
# in the same run, page cache warm, three rounds (medians); peak RSS from /usr/bin/time -v.
# Also in each round the write floor: `dd` of zeros, as many bytes as dtcast writes, in 256 KiB
# writes (the fastest block size here), since the output is twice the input and no program
# writes it faster than the page cache takes it.
#
#   bash bench/checkpoint_bench.sh [BUILD] [WORK_DIR]     (defaults: build, /tmp/dtcast-ckpt-bench)
#
# WORK_DIR needs about 9 GiB: the input (2 GiB, made once and kept), then one output at a time.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
work=${2:-/tmp/dtcast-ckpt-bench}
py=${PYTHON:-python3}
in="$work/fp8"
mkdir -p "$work"
[ -f "$in/model.safetensors.index.json" ] || "$py" bench/make_fp8_checkpoint.py "$in" --gib 2
bytes=$(du -sb "$in" | cut -f1)
cat "$in"/* >/dev/null # warm

# run LABEL CMD...: the wall time and peak RSS of one run, appended to $work/LABEL.txt
run() {
    local label=$1
    shift
    rm -rf "$work/out"
    sync
    /usr/bin/time -v -o "$work/time.txt" "$@" >/dev/null
    local wall rss cpu
    cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$work/time.txt")
    wall=$(awk -F': ' '/Elapsed/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$work/time.txt")
    rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$work/time.txt")
    echo "$wall $rss $cpu" >>"$work/$label.txt"
    printf '  %-8s %7.2f s  (CPU %6.2f s)  %8d KiB peak RSS\n' "$label" "$wall" "$cpu" "$rss"
}

rm -f "$work"/cp.txt "$work"/dtcast.txt "$work"/numpy.txt "$work"/floor.txt
out_bytes=
for round in 1 2 3; do
    echo "round $round"
    run cp cp -r "$in" "$work/out"
    run dtcast "$build/dtcast" dequantize -q "$in" "$work/out"
    [ "$round" = 1 ] && cp -r "$work/out" "$work/dtcast-out"
    [ -n "$out_bytes" ] || out_bytes=$(du -sb "$work/out" | cut -f1)
    run floor dd if=/dev/zero of="$work/floor.bin" bs=256K count=$(((out_bytes + 262143) / 262144)) status=none
    rm -f "$work/floor.bin"
    run numpy "$py" bench/dequant_checkpoint.py "$in" "$work/out"
    if [ "$round" = 1 ]; then
        same=yes
        for f in "$work"/out/*; do cmp -s "$f" "$work/dtcast-out/$(basename "$f")" || same="NO ($f)"; done
        echo "  dtcast's output = numpy's, byte for byte: $same"
        rm -rf "$work/dtcast-out"
    fi
done
rm -rf "$work/out"
median() { sort -n "$1" | awk '{a[NR] = $1; r[NR] = $2; c[NR] = $3} END {print a[2], r[2], c[2]}'; }
read -r cp_s cp_rss cp_cpu < <(median "$work/cp.txt")
read -r dt_s dt_rss dt_cpu < <(median "$work/dtcast.txt")
read -r np_s np_rss np_cpu < <(median "$work/numpy.txt")
read -r fl_s fl_rss fl_cpu < <(median "$work/floor.txt")
echo "nproc $(nproc), load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
awk -v b="$bytes" -v ob="$out_bytes" -v fl="$fl_s" -v cp="$cp_s" -v dt="$dt_s" -v np="$np_s" -v dr="$dt_rss" -v nr="$np_rss" 'BEGIN {
    printf "input %.2f GiB; medians of 3 (wall clock):\n", b / 2^30
    printf "  cp -r IN             %6.2f s  %6.2f GB/s of input\n", cp, b / cp / 1e9
    printf "  dtcast dequantize    %6.2f s  %6.2f GB/s of input  speed vs cp %.2f  peak RSS %d MiB\n", dt, b / dt / 1e9, cp / dt, dr / 1024
    printf "  write floor (dd)     %6.2f s  %6.2f GB/s written (%.2f GiB)  dtcast vs the floor %.2f\n", fl, ob / fl / 1e9, ob / 2^30, fl / dt
    printf "  numpy job            %6.2f s  %6.2f GB/s of input  speed vs cp %.2f  peak RSS %d MiB\n", np, b / np / 1e9, cp / np, nr / 1024
    printf "  dtcast vs numpy      %.1fx faster\n", np / dt
}'
