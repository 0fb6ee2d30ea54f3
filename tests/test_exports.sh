#!/usr/bin/env bash
# The dynamic symbols of libdtcast.so: it defines only dtcast_* names (everything else is hidden:
# -fvisibility=hidden, DTCAST_API on the public functions), and every function the public header
# declares with DTCAST_API is among them. Prints "PASS name" / "FAIL name: why" per check.
#
#   tests/test_exports.sh [path/to/libdtcast.so]        (default: build/libdtcast.so)
set -u
lib=${1:-build/libdtcast.so}
cd "$(dirname "$0")/.." || exit 2
failures=0
pass() { echo "PASS $1"; }
fail() {
    echo "FAIL $1: $2"
    failures=$((failures + 1))
}

if ! command -v nm >/dev/null 2>&1; then
    echo "SKIP exports: nm not installed (apt-get install binutils)"
    exit 0
fi
if ! syms=$(nm -D --defined-only "$lib" 2>&1); then
    fail exports_readable "nm -D $lib: $(printf '%s\n' "$syms" | head -n 3)"
    exit 1
fi
# "ADDRESS TYPE NAME"; version-definition entries (type A, no address meaning) are not symbols
# of ours, but the library has no version script, so any is reported too.
names=$(printf '%s\n' "$syms" | awk 'NF >= 2 { print $NF }' | sort -u)

if [ -z "$names" ]; then
    fail exports_only_dtcast "no defined dynamic symbol in $lib"
else
    stray=$(printf '%s\n' "$names" | grep -v '^dtcast_')
    if [ -z "$stray" ]; then
        pass exports_only_dtcast
    else
        fail exports_only_dtcast "$(printf '%s\n' "$stray" | wc -l) exported names without the dtcast_ prefix: $(printf '%s\n' "$stray" | head -n 10 | tr '\n' ' ')"
    fi
fi

# The DTCAST_API declarations of include/*.h: "DTCAST_API type name(" on one line.
api=$(sed -n 's/^DTCAST_API[^(]*[^A-Za-z0-9_(]\([A-Za-z_][A-Za-z0-9_]*\)(.*/\1/p' include/*.h | sort -u)
declared=$(cat include/*.h | grep -c '^DTCAST_API')
if [ -z "$api" ]; then
    fail exports_public_api "no DTCAST_API declaration found in include/*.h"
elif [ "$(printf '%s\n' "$api" | wc -l)" -ne "$declared" ]; then
    fail exports_public_api "$declared DTCAST_API lines in include/*.h, $(printf '%s\n' "$api" | wc -l) names read from them (a declaration not of the form \"DTCAST_API type name(\" on one line?)"
else
    missing=$(comm -23 <(printf '%s\n' "$api") <(printf '%s\n' "$names"))
    if [ -z "$missing" ]; then
        pass exports_public_api
    else
        fail exports_public_api "declared DTCAST_API but not exported: $(printf '%s\n' "$missing" | tr '\n' ' ')"
    fi
fi

[ "$failures" -eq 0 ]
