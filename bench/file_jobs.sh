#!/usr/bin/env bash
# The file jobs' memory and speed targets (docs/files.md; issue "the file layer as a library"),
# in one run: `dtcast inspect` of a 2 GiB sharded float32 checkpoint (median of 3), `dtcast diff`
# of it against its bfloat16 copy (peak RSS, wall time, and `cat` of both inputs beside it),
# 1 GiB of raw float32 and a 1 GiB .npy through a pipe (peak RSS), and Python's
# dtcast.convert_checkpoint against `dtcast cast` of the same checkpoint (medians of 5: the
# Python process, its imports included, and the call alone, python-call). Page cache warm;
# peak RSS from /usr/bin/time -v.
#
#   bash bench/file_jobs.sh [BUILD] [WORK_DIR]     (defaults: build, /tmp/dtcast-file-jobs)
#
# PYTHON: a Python with numpy, safetensors and the package (default .venv/bin/python, the tests'
# environment; PYTHONPATH is set to BUILD/python). WORK_DIR needs about 8 GiB; on tmpfs
# (/dev/shm) the disk's writeback stays out of the figures.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
work=${2:-/tmp/dtcast-file-jobs}
py=${PYTHON:-.venv/bin/python}
export PYTHONPATH="$PWD/$build/python${PYTHONPATH:+:$PYTHONPATH}"
dt="$build/dtcast"
mkdir -p "$work"
a="$work/f32" b="$work/bf16"
if [ ! -f "$a/model.safetensors.index.json" ]; then
    "$py" - "$a" <<'PY'
import json, os, sys
import numpy as np
from safetensors.numpy import save_file
out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(0)
index = {"metadata": {"total_size": 0}, "weight_map": {}}
for s in range(2):  # 2 shards of 1 GiB: 4 tensors of 64 Mi float32 each
    name = "model-%05d-of-00002.safetensors" % (s + 1)
    tensors = {}
    for t in range(4):
        key = "layers.%d.weight" % (4 * s + t)
        tensors[key] = (rng.standard_normal((8192, 8192), dtype=np.float32) * 0.02)
        index["weight_map"][key] = name
        index["metadata"]["total_size"] += tensors[key].nbytes
    save_file(tensors, os.path.join(out, name), metadata={"format": "pt"})
with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
    json.dump(index, f)
PY
fi
[ -f "$b/model.safetensors.index.json" ] || "$dt" cast -q --to bfloat16 "$a/model.safetensors.index.json" "$b"
cat "$a"/* "$b"/* >/dev/null

# measure LABEL CMD...: prints wall seconds and peak RSS (KiB) of one run; FRESH=PATH: PATH is
# deleted after the sync, just before the run
measure() {
    local label=$1
    shift
    sync
    [ -z "${FRESH:-}" ] || rm -rf "$FRESH"
    /usr/bin/time -v -o "$work/time.txt" "$@" >/dev/null
    local wall rss
    wall=$(awk -F': ' '/Elapsed/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$work/time.txt")
    rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$work/time.txt")
    printf '  %-34s %8.3f s %9d KiB peak RSS\n' "$label" "$wall" "$rss"
    echo "$wall $rss" >>"$work/$label.txt"
}
median() { sort -n "$work/$1.txt" | awk '{w[NR] = $1; r[NR] = $2} END {m = int((NR + 1) / 2); printf "%.3f s, %d KiB", w[m], r[m]}'; }

rm -f "$work"/*.txt
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs"
echo "inspect: 2 GiB checkpoint, 2 shards"
for i in 1 2 3; do measure inspect-index "$dt" inspect "$a/model.safetensors.index.json"; done
for i in 1 2 3; do measure inspect-folder "$dt" inspect "$a"; done
echo "diff: the float32 checkpoint against its bfloat16 copy (2 GiB + 1 GiB)"
for i in 1 2 3; do
    measure cat-both sh -c "cat '$a'/* '$b'/* >/dev/null"
    set +e
    measure diff "$dt" diff "$a" "$b"
    set -e
done
echo "diff: two 2 GiB checkpoints (the float32 one against itself, a copy)"
[ -d "$work/f32copy" ] || cp -r "$a" "$work/f32copy"
cat "$work/f32copy"/* >/dev/null
for i in 1 2 3; do
    measure cat-two sh -c "cat '$a'/* '$work/f32copy'/* >/dev/null"
    measure diff-2x2GiB "$dt" diff "$a" "$work/f32copy"
done
echo "pipes: 1 GiB"
npy="$a/../one.npy"
[ -f "$npy" ] || "$py" -c "import numpy as np; np.save('$npy', np.random.default_rng(1).standard_normal(1 << 28, dtype=np.float32))"
measure pipe-raw sh -c "tail -c +129 '$npy' | '$dt' cast --from float32 --to bfloat16 - - >/dev/null"
measure pipe-npy sh -c "cat '$npy' | '$dt' cast --to bfloat16 - '$work/pipe.npy'"
rm -f "$work/pipe.npy"
echo "convert_checkpoint (Python, in process) against dtcast cast, to bfloat16"
# Each run deletes the previous output just before it converts (after measure's sync, which may
# wait for the disk); the Python process deletes it after its imports. On a virtual machine whose
# balloon reports free pages to the host (this one), memory freed more than a second or two
# earlier comes back through a host page fault, so a conversion that starts later than its `rm`
# writes its output up to twice as slowly: timing the CLI right after `rm` and Python after its
# imports measured that, not dtcast.
for i in 1 2 3 4 5; do
    FRESH="$work/out" measure cli "$dt" cast -q --to bfloat16 "$a/model.safetensors.index.json" "$work/out"
    measure python "$py" -c "import shutil, time, dtcast; shutil.rmtree('$work/out'); t = time.perf_counter(); dtcast.convert_checkpoint('$a/model.safetensors.index.json', '$work/out', to='bfloat16'); open('$work/call.txt', 'a').write('%.3f 0\\n' % (time.perf_counter() - t))"
done
mv "$work/call.txt" "$work/python-call.txt"
rm -rf "$work/out"
echo
echo "medians:"
for l in inspect-index inspect-folder cat-both diff cat-two diff-2x2GiB pipe-raw pipe-npy cli python python-call; do
    printf '  %-14s %s\n' "$l" "$(median "$l")"
done
