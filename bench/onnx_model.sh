#!/usr/bin/env bash
# An ONNX model with 3 GiB of float32 weights in external data (bench/make_onnx_model.py) to
# float16, weights only: `dtcast cast` against `cp` of the model and its data file in the same
# run (page cache warm, medians of 3), with peak RSS from /usr/bin/time -v; then the two Python
# converters people use on the same model, once each: onnxruntime.transformers.float16 and
# onnxconverter-common's convert_float_to_float16 (time, peak RSS, or how they fail). The
# dtcast output is checked with onnx.checker (full_check) and run in onnxruntime's CPU session.
#
#   bash bench/onnx_model.sh [BUILD] [WORK_DIR]      (defaults: build, /tmp/dtcast-onnx-bench)
#
# PYTHON: a Python with numpy, onnx and onnxruntime (default .venv/bin/python);
# onnxconverter-common is used when that Python has it. WORK_DIR needs about 12 GiB.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
work=${2:-/tmp/dtcast-onnx-bench}
py=${PYTHON:-.venv/bin/python}
dt="$build/dtcast"
mkdir -p "$work"
in="$work/in"
[ -f "$in/model.onnx" ] || "$py" bench/make_onnx_model.py "$in" --gib "${GIB:-3}"
cat "$in"/* >/dev/null
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(nproc) CPUs"
echo "input: $(du -sh "$in" | cut -f1) in $in"
measure() {
    local label=$1
    shift
    sync
    local status=0
    /usr/bin/time -v -o "$work/time.txt" "$@" >"$work/$label.out" 2>&1 || status=$?
    local wall rss
    wall=$(awk -F': ' '/Elapsed/ {n = split($2, p, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$work/time.txt")
    rss=$(awk -F': ' '/Maximum resident/ {print $2}' "$work/time.txt")
    printf '  %-24s %8.2f s %10d KiB peak RSS  exit %d\n' "$label" "$wall" "$rss" "$status"
    echo "$wall $rss" >>"$work/$label.txt"
}
rm -f "$work"/*.txt
for round in 1 2 3; do
    rm -rf "$work/out" && mkdir -p "$work/out"
    measure cp cp "$in/model.onnx" "$in/model.onnx.data" "$work/out/"
    rm -rf "$work/out" && mkdir -p "$work/out"
    measure dtcast "$dt" cast -q --to float16 "$in/model.onnx" "$work/out/model.onnx"
done
median() { sort -n "$work/$1.txt" | awk '{w[NR] = $1; r[NR] = $2} END {m = int((NR + 1) / 2); printf "%.2f s, %d KiB", w[m], r[m]}'; }
echo "medians: cp $(median cp); dtcast $(median dtcast)"
"$py" - "$work/out/model.onnx" <<'PY'
import sys, numpy as np, onnx, onnxruntime as ort
p = sys.argv[1]
onnx.checker.check_model(p, full_check=True)
s = ort.InferenceSession(p, providers=["CPUExecutionProvider"])
d = s.get_inputs()[0].shape[1]
y = s.run(None, {"x": np.ones((1, d), np.float32)})[0]
print("  dtcast's output: check_model(full_check) passes; onnxruntime runs it, output", y.shape,
      "finite" if np.isfinite(y).all() else "NOT finite")
PY
echo "the Python converters (one run each; they load the whole model):"
rm -rf "$work/out"
cat >"$work/ort_fp16.py" <<'PY'
import sys, onnx
from onnxruntime.transformers.float16 import convert_float_to_float16
m = onnx.load(sys.argv[1])
m = convert_float_to_float16(m, keep_io_types=True, disable_shape_infer=True)
onnx.save(m, sys.argv[2], save_as_external_data=True, all_tensors_to_one_file=True,
          location="model.onnx.data")
PY
mkdir -p "$work/ort"
measure ort-float16 "$py" "$work/ort_fp16.py" "$in/model.onnx" "$work/ort/model.onnx"
tail -n 2 "$work/ort-float16.out" | sed 's/^/    /'
rm -rf "$work/ort"
if "$py" -c "import onnxconverter_common" 2>/dev/null; then
    cat >"$work/occ_fp16.py" <<'PY'
import sys, onnx
from onnxconverter_common.float16 import convert_float_to_float16
m = onnx.load(sys.argv[1])
m = convert_float_to_float16(m, keep_io_types=True, disable_shape_infer=True)
onnx.save(m, sys.argv[2], save_as_external_data=True, all_tensors_to_one_file=True,
          location="model.onnx.data")
PY
    mkdir -p "$work/occ"
    measure onnxconverter-common "$py" "$work/occ_fp16.py" "$in/model.onnx" "$work/occ/model.onnx"
    tail -n 2 "$work/onnxconverter-common.out" | sed 's/^/    /'
    rm -rf "$work/occ"
else
    echo "  onnxconverter-common: not installed in $py"
fi
