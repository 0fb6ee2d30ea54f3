#!/usr/bin/env bash
# Builds the ggml oracle: libggml-base.so (ggml's reference quantizers, to_float and the GGUF
# reader) from the llama.cpp that the llama-cpp-python 0.3.36 sdist on PyPI vendors. Nothing of
# llama.cpp is kept in this repository: the sdist is downloaded here at check-long time.
#
#   tests/ggml_oracle/build.sh [DIR]        (default DIR: build/ggml-oracle)
#
# Leaves DIR/lib/libggml-base.so and DIR/info.json (ggml's version and commit, the sdist's
# sha256, the compiler, the flags) and prints the library's path on its last line. Idempotent:
# when DIR/info.json names a library that exists, it does nothing. The sdist is fetched with
# `pip download` (PyPI must be reachable) unless $GGML_ORACLE_SDIST names a copy of it; either way
# its sha256 must be the one below.
#
# The library is built as ggml builds it by default on x86-64 (Release: -O3, no -march): the
# baseline instruction set, so no FMA contraction and no AVX: the scalar reference code that
# dtcast reproduces. The script checks that no FMA instruction made it into the library.
set -eu
cd "$(dirname "$0")/../.." || exit 2
dir=${1:-build/ggml-oracle}
version=0.3.36
sha256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
sdist=llama_cpp_python-$version.tar.gz
lib=$dir/lib/libggml-base.so
py=${PYTHON:-}
[ -n "$py" ] || { [ -x .venv/bin/python ] && py=.venv/bin/python; } || py=python3

if [ -f "$dir/info.json" ] && [ -f "$lib" ]; then
    echo "$lib"
    exit 0
fi
mkdir -p "$dir"

# 1. the sdist
if [ ! -f "$dir/$sdist" ]; then
    if [ -n "${GGML_ORACLE_SDIST:-}" ]; then
        cp "$GGML_ORACLE_SDIST" "$dir/$sdist.part"
    else
        rm -rf "$dir/download"
        if ! "$py" -m pip download --no-deps --no-binary :all: "llama-cpp-python==$version" \
                -d "$dir/download" >"$dir/download.log" 2>&1; then
            tail -n 5 "$dir/download.log" >&2
            echo "ggml oracle: cannot download llama-cpp-python==$version's sdist from PyPI" \
                 "(pip download failed; log in $dir/download.log). Set GGML_ORACLE_SDIST to a" \
                 "copy of $sdist to build offline." >&2
            exit 1
        fi
        mv "$dir/download/$sdist" "$dir/$sdist.part"
        rm -rf "$dir/download"
    fi
    got=$(sha256sum "$dir/$sdist.part" | cut -d' ' -f1)
    if [ "$got" != "$sha256" ]; then
        echo "ggml oracle: $sdist has sha256 $got, expected $sha256" >&2
        rm -f "$dir/$sdist.part"
        exit 1
    fi
    mv "$dir/$sdist.part" "$dir/$sdist"
fi

# 2. llama.cpp's source, as the sdist vendors it
src=$dir/llama_cpp_python-$version
if [ ! -f "$src/vendor/llama.cpp/ggml/CMakeLists.txt" ]; then
    rm -rf "$src"
    tar -xzf "$dir/$sdist" -C "$dir"
fi
llama=$src/vendor/llama.cpp

# 3. ggml-base only (the reference code; the CPU backend's SIMD kernels are not built)
cmake -S "$llama" -B "$dir/cmake" -DBUILD_SHARED_LIBS=ON -DGGML_NATIVE=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF \
    -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF -DGGML_OPENMP=OFF -DCMAKE_BUILD_TYPE=Release \
    >"$dir/cmake.log" 2>&1 || { tail -n 20 "$dir/cmake.log" >&2; echo "ggml oracle: cmake failed" >&2; exit 1; }
cmake --build "$dir/cmake" --target ggml-base -j"$(nproc 2>/dev/null || echo 2)" \
    >"$dir/build.log" 2>&1 || { tail -n 20 "$dir/build.log" >&2; echo "ggml oracle: build failed" >&2; exit 1; }
built=$(find "$dir/cmake" -name 'libggml-base.so*' -type f | head -n 1)
[ -n "$built" ] || { echo "ggml oracle: no libggml-base.so in $dir/cmake" >&2; exit 1; }

# 4. the reference is scalar code without FMA contraction: check the instructions
if command -v objdump >/dev/null 2>&1; then
    n=$(objdump -d "$built" | grep -cE '\bv?f(n)?m(add|sub)(sub)?[0-9]{3}' || true)
    if [ "$n" -ne 0 ]; then
        echo "ggml oracle: $built has $n FMA instructions; the reference must be built without" \
             "them (a compiler or CFLAGS with -mfma / -march?)" >&2
        exit 1
    fi
    fma=none
else
    fma=unchecked
fi

mkdir -p "$dir/lib"
cp "$built" "$lib.tmp" && mv "$lib.tmp" "$lib"
commit=$(git -C "$llama" rev-parse HEAD 2>/dev/null || echo unknown)
ggml_version=$(sed -n 's/^set(GGML_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\))/\2/p' "$llama/ggml/CMakeLists.txt" | paste -sd.)
cc=$(sed -n 's/^CMAKE_C_COMPILER:[A-Z]*=//p' "$dir/cmake/CMakeCache.txt")
ccv=$("$cc" --version 2>/dev/null | head -n 1)
cflags=$(sed -n 's/^C_FLAGS = //p' "$dir/cmake/ggml/src/CMakeFiles/ggml-base.dir/flags.make" 2>/dev/null)
"$py" - "$dir/info.json" <<EOF
import json, sys
json.dump({
    "source": "llama-cpp-python $version sdist (PyPI), vendor/llama.cpp",
    "sdist": "$sdist", "sdist_sha256": "$sha256",
    "llama_cpp_commit": "$commit", "ggml_version": "$ggml_version",
    "library": "libggml-base.so (cmake --target ggml-base, CMAKE_BUILD_TYPE=Release, GGML_NATIVE=OFF)",
    "compiler": """$ccv""", "c_flags": """$cflags""", "machine": "$(uname -m)",
    "fma_instructions": "$fma",
}, open(sys.argv[1], "w"), indent=1)
EOF
echo "$lib"
