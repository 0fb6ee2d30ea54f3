#!/usr/bin/env bash
# The package as a user gets it: `pip wheel .` (the build backend, CMake and the compiler as pip
# runs them, in its isolated build environment, the backend pinned by tests/python/wheel/build.txt),
# then that one wheel installed into two new virtual environments, one with the lowest and one
# with the newest numpy and ml_dtypes that pyproject.toml admits (tests/python/wheel/lowest.txt,
# newest.txt, every package exact), and in each the README's line and the API tests against the
# installed package, from outside the repository.
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
pip_q=(-q --disable-pip-version-check)

"$py" -m venv "$tmp/build" || fail "python3 -m venv"
t0=$(date +%s)
if PIP_CONSTRAINT="$repo/tests/python/wheel/build.txt" "$tmp/build/bin/pip" wheel "${pip_q[@]}" \
        --no-deps -w "$tmp/dist" "$repo" >"$tmp/pip.log" 2>&1; then
    echo "PASS pip wheel . ($(($(date +%s) - t0)) s)"
else
    tail -30 "$tmp/pip.log"
    fail "pip wheel . (log above)"
fi
wheel=$(ls "$tmp"/dist/dtcast-*.whl)

for env in lowest newest; do
    pins=$repo/tests/python/wheel/$env.txt
    v=$tmp/$env
    "$py" -m venv "$v" || fail "python3 -m venv"
    "$v/bin/pip" install "${pip_q[@]}" "$wheel" -r "$pins" >"$tmp/pip.log" 2>&1 ||
        { tail -30 "$tmp/pip.log"; fail "$env: pip install the wheel with $pins"; }
    vers=$("$v/bin/python" -c "import numpy, ml_dtypes; print(f'numpy {numpy.__version__}, ml_dtypes {ml_dtypes.__version__}')")
    echo "PASS $env: pip install the wheel ($vers)"
    cd "$tmp" || exit 2
    out=$("$v/bin/python" -c "import numpy as np, dtcast; print(dtcast.cast(np.float32([0.1, 500]), 'float8_e4m3fn', saturate=True))" 2>&1)
    [ "$out" = "[0.101562 448]" ] && echo "PASS $env: README line: $out" || fail "$env: README line printed: $out"
    where=$("$v/bin/python" -c "import dtcast, os; print(os.path.dirname(dtcast.__file__))")
    case $where in "$v"/*) echo "PASS $env: installed in the venv: $where" ;; *) fail "$env: imported from $where" ;; esac
    ls "$where"/_core*.so >/dev/null 2>&1 || fail "$env: the wheel has no dtcast/_core*.so"
    for f in _bin/dtcast py.typed __init__.pyi; do
        [ -e "$where/$f" ] || fail "$env: the wheel has no dtcast/$f"
    done
    echo "PASS $env: the wheel has _core, _bin/dtcast, py.typed, __init__.pyi"
    "$v/bin/python" -m dtcast --version | grep -q "^dtcast 1" && echo "PASS $env: python -m dtcast --version" ||
        fail "$env: python -m dtcast --version"
    if "$v/bin/python" -m pytest -q -p no:cacheprovider "$repo/tests/python/test_api.py" \
            >"$tmp/pytest.log" 2>&1; then
        echo "PASS $env: test_api.py against the installed package ($vers): $(tail -1 "$tmp/pytest.log")"
    else
        tail -30 "$tmp/pytest.log"
        fail "$env: test_api.py against the installed package ($vers)"
    fi
    cd "$repo" || exit 2
done
