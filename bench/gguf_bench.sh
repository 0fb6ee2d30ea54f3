#!/usr/bin/env bash
# The GGUF jobs on about 2 GiB, against `cp` of the same input in the same run, page cache warm:
#   dequantize: a GGUF model (Q8_0 + Q4_K + F32; bench/make_gguf_model.py) -> bfloat16 safetensors
#   cast:       a bfloat16 safetensors checkpoint -> a Q8_0 GGUF
# Three rounds each (medians); wall time and peak RSS from /usr/bin/time -v; the ratio is cp's
# time over the job's (>= 0.5: the job takes at most twice as long as copying its input).
#
#   bash bench/gguf_bench.sh [BUILD] [WORK_DIR]     (defaults: build, /tmp/dtcast-gguf-bench)
#
# GIB: the inputs' size when made (default 2). PYTHON: the test venv's python (numpy, gguf,
# ml_dtypes, safetensors). WORK_DIR needs about 14 GiB.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
work=${2:-/tmp/dtcast-gguf-bench}
py=${PYTHON:-.venv/bin/python}
dt="$build/dtcast"
mkdir -p "$work"
if [ ! -f "$work/model.gguf" ] || [ ! -f "$work/model-bf16.safetensors" ]; then
    PYTHONPATH="$build/python" "$py" bench/make_gguf_model.py "$work/model.gguf" \
        "$work/model-bf16.safetensors" --gib "${GIB:-2}"
fi
cpu_model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//')
echo "CPU: $cpu_model, $(nproc) CPUs; load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "dtcast: $dt, git HEAD $(git rev-parse --short HEAD 2>/dev/null || echo '?')"
cat "$work/model.gguf" "$work/model-bf16.safetensors" >/dev/null

run() { # LABEL CMD...: appends "wall rss" to $work/LABEL.txt
    local label=$1
    shift
    sync
    /usr/bin/time -v -o "$work/time.txt" "$@" >"$work/$label.log" 2>&1 || {
        tail -n 5 "$work/$label.log"
        exit 1
    }
    local wall rss
    wall=$(awk -F': ' '/Elapsed/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$work/time.txt")
    rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$work/time.txt")
    echo "$wall $rss" >>"$work/$label.txt"
    printf '  %-12s %7.2f s  %8d KiB peak RSS\n' "$label" "$wall" "$rss"
}
rm -f "$work"/*.txt
for round in 1 2 3; do
    echo "round $round"
    rm -f "$work/out.safetensors" "$work/out.gguf" "$work/cp.bin"
    run cp-gguf cp "$work/model.gguf" "$work/cp.bin"
    rm -f "$work/cp.bin"
    run dequantize "$dt" dequantize -q --to bfloat16 "$work/model.gguf" "$work/out.safetensors"
    rm -f "$work/out.safetensors"
    run cp-st cp "$work/model-bf16.safetensors" "$work/cp.bin"
    rm -f "$work/cp.bin"
    run cast-q8_0 "$dt" cast -q --to q8_0 "$work/model-bf16.safetensors" "$work/out.gguf"
    rm -f "$work/out.gguf"
done
med() { sort -n -k1 "$work/$1.txt" | awk 'NR == 2 {print $1}'; }
rss() { sort -n -k2 "$work/$1.txt" | tail -n 1 | awk '{printf "%.1f", $2 / 1024}'; }
echo "medians:"
for pair in "dequantize cp-gguf model.gguf" "cast-q8_0 cp-st model-bf16.safetensors"; do
    set -- $pair
    printf '  %-11s %6.2f s  cp %6.2f s  ratio %.2f  peak RSS %s MiB  (input %s bytes)\n' "$1" \
        "$(med "$1")" "$(med "$2")" "$(awk -v a="$(med "$2")" -v b="$(med "$1")" 'BEGIN {print a / b}')" \
        "$(rss "$1")" "$(stat -c %s "$work/$3")"
done
