#!/usr/bin/env bash
# `dtcast dequantize` of a synthetic 2 GiB DeepSeek-V4-Flash checkpoint (bench/make_dsv4_checkpoint.py:
# dense FP8 with F8_E8M0 128x128 tile scales, routed experts float4 e2m1 in I8 with F8_E8M0 scales
# per 32, about 88 % of the bytes) to bfloat16, against the write floor and the numpy job
# bench/dequant_dsv4.py, in the same run, page cache warm. Three rounds (medians) of dtcast and
# of the floor: `dd` of zeros writing as many bytes as dtcast writes (4 MiB writes, no fsync; the
# output is about 3.5 times the input, so the page cache taking it is the bound); the numpy job
# once. Wall time and peak RSS from /usr/bin/time -v. Then dtcast's output files are compared
# with numpy's by `cmp`.
#
#   bash bench/dsv4_bench.sh [BUILD] [WORK_DIR]     (defaults: build, /tmp/dtcast-dsv4-bench)
#
# GIB: the checkpoint's size when it is made (default 2; a smoke test: GIB=0.3).
#
# PYTHON: a Python with numpy (default .venv/bin/python, else python3). WORK_DIR (on the disk,
# not /dev/shm) needs about 17 GiB: the input (2 GiB, made once and kept), dtcast's output and
# numpy's (7.1 GiB each), or dtcast's and the floor's file.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
work=${2:-/tmp/dtcast-dsv4-bench}
py=${PYTHON:-.venv/bin/python}
[ -x "$py" ] || py=python3
dt="$build/dtcast"
in="$work/in"
mkdir -p "$work"
[ -f "$in/model.safetensors.index.json" ] || "$py" bench/make_dsv4_checkpoint.py "$in" --gib "${GIB:-2}"
in_bytes=$(du -sb "$in" | cut -f1)
cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "CPU: $cpu_model, $(nproc) CPUs (nproc); load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "input: $in_bytes bytes in $in"
# the binary measured (a rebuild in the middle of the run would mix two programs: checked at the end)
bin_id() { echo "$(sha256sum "$dt" | cut -c1-12), built $(date -r "$dt" '+%F %T')"; }
bin_before=$(bin_id)
echo "dtcast: $dt sha256 $bin_before; git HEAD $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet HEAD -- src files programs include 2>/dev/null || echo ' + uncommitted C changes')"
cat "$in"/* >/dev/null # warm

# busy: CPU seconds the whole machine has spent busy (/proc/stat: all but idle and iowait)
busy() { awk '/^cpu / {print ($2 + $3 + $4 + $7 + $8 + $9) / 100}' /proc/stat; }

# run LABEL CMD...: wall time, peak RSS and CPU time of one run, appended to $work/LABEL.txt;
# "others" is the CPU time the rest of the machine used meanwhile (other people's jobs on the
# same cores make the figures worthless when it is large; kernel writeback threads count too)
run() {
    local label=$1
    shift
    sync
    local status=0 b0 b1
    b0=$(busy)
    /usr/bin/time -v -o "$work/time.txt" "$@" >"$work/$label.out" 2>&1 || status=$?
    b1=$(busy)
    local wall rss cpu others
    cpu=$(awk -F': ' '/User time|System time/ {s += $2} END {printf "%.2f", s}' "$work/time.txt")
    wall=$(awk -F': ' '/Elapsed/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$work/time.txt")
    rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$work/time.txt")
    others=$(awk -v a="$b0" -v b="$b1" -v c="$cpu" 'BEGIN {o = b - a - c; printf "%.2f", o < 0 ? 0 : o}')
    echo "$wall $rss $cpu $others" >>"$work/$label.txt"
    printf '  %-8s %7.2f s  (CPU %6.2f s, others %6.2f s)  %8d KiB peak RSS  exit %d\n' "$label" "$wall" "$cpu" "$others" "$rss" "$status"
    if [ "$status" != 0 ]; then
        sed 's/^/    /' "$work/$label.out" | tail -n 5
        exit 1
    fi
}

rm -f "$work"/dtcast.txt "$work"/dd.txt "$work"/numpy.txt
rm -rf "$work/out" "$work/numpy-out" "$work/dd.bin"
out_bytes=
for round in 1 2 3; do
    echo "round $round"
    rm -rf "$work/out"
    run dtcast "$dt" dequantize -q --to bfloat16 "$in" "$work/out"
    [ -n "$out_bytes" ] || out_bytes=$(du -sb "$work/out" | cut -f1)
    run dd dd if=/dev/zero of="$work/dd.bin" bs=4M count=$(((out_bytes + 4194303) / 4194304)) status=none
    rm -f "$work/dd.bin"
done
echo "numpy job (once)"
run numpy "$py" bench/dequant_dsv4.py "$in" "$work/numpy-out"
same=yes
files=0
for f in "$work"/out/*; do
    files=$((files + 1))
    cmp "$f" "$work/numpy-out/$(basename "$f")" || same=NO
done
[ "$(ls "$work/out" | wc -l)" = "$(ls "$work/numpy-out" | wc -l)" ] || same=NO
echo "dtcast's output = numpy's, byte for byte ($files files, cmp): $same"
[ "$(bin_id)" = "$bin_before" ] || echo "WARNING: $dt changed during the run (now $(bin_id)): the figures mix two builds"
rm -rf "$work/out" "$work/numpy-out"

# median FILE: the median of each column (wall, RSS, CPU, others) of its rows, on its own
median() {
    local i
    for i in 1 2 3 4; do
        cut -d' ' -f$i "$work/$1.txt" | sort -n | awk '{v[NR] = $1} END {printf "%s ", v[int((NR + 1) / 2)]}'
    done
    echo
}
read -r dt_s dt_rss dt_cpu dt_o < <(median dtcast)
read -r dd_s dd_rss dd_cpu dd_o < <(median dd)
read -r np_s np_rss np_cpu np_o < <(median numpy)
awk -v ib="$in_bytes" -v ob="$out_bytes" -v dt="$dt_s" -v dd="$dd_s" -v np="$np_s" \
    -v dr="$dt_rss" -v xr="$dd_rss" -v nr="$np_rss" -v dc="$dt_cpu" -v xc="$dd_cpu" -v nc="$np_cpu" \
    -v dto="$dt_o" -v xo="$dd_o" -v no="$np_o" -v cpu="$cpu_model" -v nproc="$(nproc)" 'BEGIN {
    printf "\n%s, %d CPUs; input %.0f bytes (%.2f GiB), output %.0f bytes (%.2f GiB)\n", cpu, nproc, ib, ib / 2^30, ob, ob / 2^30
    printf "%-34s %8s %8s %8s %10s %12s\n", "", "wall s", "CPU s", "others", "GB/s out", "peak RSS MiB"
    printf "%-34s %8.2f %8.2f %8.2f %10.2f %12.1f\n", "dtcast dequantize (median of 3)", dt, dc, dto, ob / dt / 1e9, dr / 1024
    printf "%-34s %8.2f %8.2f %8.2f %10.2f %12.1f\n", "dd, same bytes, 4M (median of 3)", dd, xc, xo, ob / dd / 1e9, xr / 1024
    printf "%-34s %8.2f %8.2f %8.2f %10.2f %12.1f\n", "numpy job (once)", np, nc, no, ob / np / 1e9, nr / 1024
    printf "dtcast speed vs dd: %.2f (target >= 1)\n", dd / dt
    printf "dtcast speed vs numpy: %.1fx (target >= 10)\n", np / dt
    printf "dtcast peak RSS: %.1f MiB (target <= 64)\n", dr / 1024
}'
