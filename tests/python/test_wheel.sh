#!/usr/bin/env bash
# The package as a user gets it: `pip install .` into a new virtual environment (the build
# backend, CMake and the compiler as pip runs them, in its isolated build environment), then the
# README's line and the API tests against the installed package, from outside the repository.
#
#   tests/python/test_wheel.sh          (make check-wheel; .ci/run)
#
# Prints PASS/FAIL lines. Needs Python >= 3.11 with venv, and PyPI.
set -u
cd "$(dirname "$0")/../.." || exit 2
repo=$PWD
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dtcast-wheel.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
py=python3
fail() { echo "FAIL $1"; exit 1; }

"$py" -m venv "$tmp/venv" || fail "python3 -m venv"
t0=$(date +%s)
if "$tmp/venv/bin/pip" install -q --disable-pip-version-check "$repo" >"$tmp/pip.log" 2>&1; then
    echo "PASS pip install . ($(($(date +%s) - t0)) s)"
else
    tail -30 "$tmp/pip.log"
    fail "pip install . (log above)"
fi
cd "$tmp" || exit 2
out=$("$tmp/venv/bin/python" -c "import numpy as np, dtcast; print(dtcast.cast(np.float32([0.1, 500]), 'float8_e4m3fn', saturate=True))" 2>&1)
[ "$out" = "[0.101562 448]" ] && echo "PASS README line: $out" || fail "README line printed: $out"
where=$("$tmp/venv/bin/python" -c "import dtcast, os; print(os.path.dirname(dtcast.__file__))")
case $where in "$tmp"/venv/*) echo "PASS installed in the venv: $where" ;; *) fail "imported from $where" ;; esac
ls "$where"/_core*.so >/dev/null 2>&1 || fail "the wheel has no dtcast/_core*.so"
for f in _bin/dtcast py.typed __init__.pyi; do
    [ -e "$where/$f" ] || fail "the wheel has no dtcast/$f"
done
echo "PASS the wheel has _core, _bin/dtcast, py.typed, __init__.pyi"
"$tmp/venv/bin/python" -m dtcast --version | grep -q "^dtcast 1" && echo "PASS python -m dtcast --version" ||
    fail "python -m dtcast --version"
"$tmp/venv/bin/pip" install -q --disable-pip-version-check pytest >/dev/null 2>&1 || fail "pip install pytest"
if "$tmp/venv/bin/python" -m pytest -q -p no:cacheprovider "$repo/tests/python/test_api.py" \
        >"$tmp/pytest.log" 2>&1; then
    echo "PASS test_api.py against the installed package: $(tail -1 "$tmp/pytest.log")"
else
    tail -30 "$tmp/pytest.log"
    fail "test_api.py against the installed package"
fi
