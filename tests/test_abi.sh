#!/usr/bin/env bash
# The ABI: a program built against the 1.0 header keeps working with a library whose
# dtcast_options has grown a field, and the library refuses options it cannot read; and the
# 1.0 header's float6 codes (105, 106, renumbered 27, 28 in 1.1 after ONNX IR 14) still convert.
#
#   tests/test_abi.sh [LIBDTCAST_A]   (CC, default cc; run from the repository's root or anywhere)
#
# Self-contained: tests/abi/dtcast-1.0.h is the header as 1.0 shipped it (float6 = 105, 106; kept
# byte for byte, never edited); it is copied to a temporary folder as "the 1.0 header", the
# script builds the
# library's objects with $CC as they are (or takes the static library LIBDTCAST_A of a build,
# as make test does) and with -DDTCAST_TEST_FUTURE_OPTION (the test hook that adds one field at
# the end of dtcast_options; given LIBDTCAST_A, only the sources that use the struct are
# rebuilt), at -O1 (a short build), then builds a small program against the copied header and
# runs it linked to each library. Prints PASS/FAIL lines; exits 1 on a failure.
set -u
given=${1:-}
[ -z "$given" ] || given=$(cd "$(dirname "$given")" && pwd)/$(basename "$given")
cd "$(dirname "$0")/.."
CC=${CC:-cc}
tmp=$(mktemp -d)
trap '[ -n "${KEEP:-}" ] || rm -rf "$tmp"' EXIT
failures=0

pass() { echo "PASS abi/$1"; }
fail() { echo "FAIL abi/$1${2:+: $2}"; failures=$((failures + 1)); }

mkdir -p "$tmp/v1_0" "$tmp/plain" "$tmp/future"
cp tests/abi/dtcast-1.0.h "$tmp/v1_0/dtcast.h"

# One object per source file; -O1 keeps the build short, portable_f64.c converts in the rounding
# mode it sets (as the Makefile builds it).
CFLAGS_ABI="-std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Iinclude -Isrc -pthread"
build_lib() { # folder, extra flags
    local dir=$1 extra=$2 f o flags
    for f in src/*.c src/*/*.c; do
        o="$dir/$(echo "$f" | tr / _).o"
        flags="$CFLAGS_ABI $extra"
        case "$f" in src/kernels/portable_f64.c) flags="$flags -frounding-math" ;; esac
        echo "$CC $flags -c $f -o $o"
    done | xargs -P 2 -I{} sh -c '{}' || return 1
    ar rcs "$dir/libdtcast.a" "$dir"/*.o
}
if [ -n "$given" ]; then
    if cp "$given" "$tmp/plain/libdtcast.a" 2>"$tmp/plain.log"; then
        pass "build library"
    else
        fail "build library" "$(head -5 "$tmp/plain.log")"
    fi
elif build_lib "$tmp/plain" "-O1" 2>"$tmp/plain.log"; then
    pass "build library"
else
    fail "build library" "$(head -5 "$tmp/plain.log")"
fi
# The future library from a given one: its objects, those of the sources that use dtcast_options
# rebuilt with the extra field (the others never see the struct). Without a given library, or
# if two objects share a name in it, every source is rebuilt.
future_from_given() {
    local f o srcs
    srcs=$(grep -l "dtcast_options" src/*.c src/*/*.c) || return 1
    [ -z "$(ar t "$given" | sort | uniq -d)" ] || return 1
    (cd "$tmp/future" && ar x "$given") || return 1
    for f in $srcs; do
        o="$tmp/future/$(basename "$f" .c).o"
        [ -f "$o" ] || return 1
        echo "$CC $CFLAGS_ABI -O1 -DDTCAST_TEST_FUTURE_OPTION -c $f -o $o"
    done | xargs -P 2 -I{} sh -c '{}' || return 1
    ar rcs "$tmp/future/libdtcast.a" "$tmp/future"/*.o
}
if { [ -n "$given" ] && future_from_given; } ||
    build_lib "$tmp/future" "-O1 -DDTCAST_TEST_FUTURE_OPTION" 2>"$tmp/future.log"; then
    pass "build library with DTCAST_TEST_FUTURE_OPTION"
else
    fail "build library with DTCAST_TEST_FUTURE_OPTION" "$(head -5 "$tmp/future.log")"
fi

cat > "$tmp/abi.c" <<'EOF'
/* Built against the 1.0 header only; argv[1] says which library it is linked to. */
#include "dtcast.h"

#include <stddef.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static int failures;

static void check(int ok, const char *name, const char *detail)
{
    printf("%s abi/%s%s%s\n", ok ? "PASS" : "FAIL", name, ok ? "" : ": ", ok ? "" : detail);
    failures += !ok;
}

/* The 1.0 struct grown by a later header: a field after it, then one more nobody knows. */
typedef struct newer_options {
    dtcast_options o;
    unsigned char after[64];
} newer_options;

int main(int argc, char **argv)
{
    const int future = argc > 1 && strcmp(argv[1], "future") == 0;
    const float in[5] = {1.5f, -2.7f, 1e6f, NAN, 65520.0f};
    dtcast_error e;

    /* Options as the 1.0 header knows them. */
    dtcast_options o;
    dtcast_options_init(&o);
    check(o.size == sizeof o, "init sets size", "size is not sizeof(dtcast_options)");
    o.int_overflow = DTCAST_INT_OVERFLOW_SATURATE;
    int8_t i8[5] = {0};
    memset(&e, 0, sizeof e);
    dtcast_status st = dtcast_convert(i8, DTCAST_INT8, in, DTCAST_FLOAT32, 5, &o, &e);
    check(st == DTCAST_OK && i8[0] == 1 && i8[1] == -2 && i8[2] == 127 && i8[3] == 0 &&
              i8[4] == 127,
          "float32 -> int8 saturating, trunc", e.message);
    o.round = DTCAST_ROUND_RNE;
    o.int_overflow = DTCAST_INT_OVERFLOW_WRAP;
    o.float_overflow = DTCAST_FLOAT_OVERFLOW_SATURATE;
    uint16_t h[5] = {0};
    st = dtcast_convert(h, DTCAST_FLOAT16, in, DTCAST_FLOAT32, 5, &o, &e);
    check(st == DTCAST_OK && h[0] == 0x3E00 && h[1] == 0xC166 && h[2] == 0x7BFF &&
              (h[3] & 0x7C00) == 0x7C00 && (h[3] & 0x3FF) != 0 && h[4] == 0x7BFF,
          "float32 -> float16 rne, saturating", e.message);
    o.float_overflow = DTCAST_FLOAT_OVERFLOW_IEEE;
    st = dtcast_onnx_cast(h, DTCAST_FLOAT16, in, DTCAST_FLOAT32, 5, 21, 1, NULL, &o, &e);
    check(st == DTCAST_OK && h[0] == 0x3E00 && h[2] == 0x7C00 && h[4] == 0x7C00,
          "onnx cast float32 -> float16 with options", e.message);

    /* Never initialised: size 0. */
    dtcast_options zero;
    memset(&zero, 0, sizeof zero);
    memset(&e, 0, sizeof e);
    st = dtcast_convert(h, DTCAST_FLOAT16, in, DTCAST_FLOAT32, 5, &zero, &e);
    check(st == DTCAST_ERR_INVALID_ARGUMENT && e.status == st && e.index == (size_t)-1 &&
              strstr(e.message, "options not initialised") != NULL,
          "size 0 refused", e.message);
    zero.size = offsetof(dtcast_options, float6_packed); /* shorter than any 1.0 struct */
    st = dtcast_pypto_cast(h, DTCAST_FLOAT16, in, DTCAST_FLOAT32, (const int64_t[]){5}, 1,
                           DTCAST_CAST_NONE, &zero, &e);
    check(st == DTCAST_ERR_INVALID_ARGUMENT, "size below 1.0 refused", e.message);

    /* A newer caller: the struct is longer; zero bytes past the library's struct are fine. */
    newer_options n;
    memset(&n, 0x5A, sizeof n);
    dtcast_options_init_sized(&n.o, sizeof n);
    int zeroed = n.o.size == sizeof n;
    for (size_t i = 0; i < sizeof n.after; i++)
        zeroed &= n.after[i] == 0;
    check(zeroed, "init of a longer struct zeroes the fields it does not know", "not zeroed");
    n.o.int_overflow = DTCAST_INT_OVERFLOW_SATURATE;
    memset(i8, 0, sizeof i8);
    st = dtcast_convert(i8, DTCAST_INT8, in, DTCAST_FLOAT32, 5, &n.o, &e);
    check(st == DTCAST_OK && i8[2] == 127, "longer struct, zero tail accepted", e.message);
    /* The first 8 bytes past the 1.0 struct: the future library's extra field, unknown to the
     * plain one. */
    n.after[0] = 1;
    memset(&e, 0, sizeof e);
    st = dtcast_convert(i8, DTCAST_INT8, in, DTCAST_FLOAT32, 5, &n.o, &e);
    if (future)
        check(st == DTCAST_OK, "a field the library knows is read", e.message);
    else
        check(st == DTCAST_ERR_INVALID_ARGUMENT && strstr(e.message, "newer dtcast") != NULL,
              "a field the library does not know is refused", e.message);
    n.after[0] = 0;
    n.after[sizeof n.after - 1] = 1;
    memset(&e, 0, sizeof e);
    memset(i8, 0x11, sizeof i8);
    st = dtcast_convert(i8, DTCAST_INT8, in, DTCAST_FLOAT32, 5, &n.o, &e);
    check(st == DTCAST_ERR_INVALID_ARGUMENT && strstr(e.message, "newer dtcast") != NULL &&
              i8[0] == 0x11,
          "nonzero bytes past the library's struct refused", e.message);
    st = dtcast_onnx_options(&o, DTCAST_FLOAT16, DTCAST_FLOAT32, 21, 1, NULL, &n.o, &e);
    check(st == DTCAST_ERR_INVALID_ARGUMENT, "onnx options refuse them too", e.message);

    /* float6 by its 1.0 codes: 105 (e2m3fn), 106 (e3m2fn). The expected bytes are ml_dtypes
     * 0.7's (float6_e2m3fn / float6_e3m2fn), written down here. */
    {
        const float f6in[5] = {0.5f, -1.5f, 7.5f, 100.0f, 0.3f};
        static const uint8_t want[2][5] = {{0x04, 0x2C, 0x1F, 0x1F, 0x02},
                                           {0x08, 0x2E, 0x18, 0x1F, 0x05}};
        const dtcast_type f6[2] = {DTCAST_FLOAT6E2M3FN, DTCAST_FLOAT6E3M2FN};
        check(f6[0] == 105 && f6[1] == 106, "the 1.0 header says 105, 106", "not the 1.0 header");
        for (int k = 0; k < 2; k++) {
            char name[64], detail[160];
            uint8_t c[5] = {0}, packed[4] = {0}, back[5] = {0};
            float r[5] = {0};
            memset(&e, 0, sizeof e);
            st = dtcast_convert(c, f6[k], f6in, DTCAST_FLOAT32, 5, NULL, &e);
            snprintf(name, sizeof name, "float32 -> %d", (int)f6[k]);
            snprintf(detail, sizeof detail, "%.100s: %02x %02x %02x %02x %02x", e.message, c[0], c[1],
                     c[2], c[3], c[4]);
            check(st == DTCAST_OK && memcmp(c, want[k], 5) == 0, name, detail);
            st = dtcast_convert(r, DTCAST_FLOAT32, c, f6[k], 5, NULL, &e);
            snprintf(name, sizeof name, "%d -> float32", (int)f6[k]);
            check(st == DTCAST_OK && r[0] == 0.5f && r[1] == -1.5f && r[3] == (k ? 28.0f : 7.5f),
                  name, e.message);
            /* four in three bytes: 5 elements, ceil(30 / 8) = 4 bytes */
            dtcast_options po;
            dtcast_options_init(&po);
            po.float6_packed = true;
            size_t nb = 0;
            st = dtcast_storage_size_opts(f6[k], 5, &po, &nb, &e);
            snprintf(name, sizeof name, "%d packed: 4 bytes", (int)f6[k]);
            check(st == DTCAST_OK && nb == 4, name, e.message);
            st = dtcast_convert(packed, f6[k], f6in, DTCAST_FLOAT32, 5, &po, &e);
            const uint32_t bits = (uint32_t)packed[0] | (uint32_t)packed[1] << 8 |
                                  (uint32_t)packed[2] << 16 | (uint32_t)packed[3] << 24;
            int ok = st == DTCAST_OK;
            for (int i = 0; i < 5; i++)
                ok &= ((bits >> (6 * i)) & 63) == want[k][i];
            snprintf(name, sizeof name, "float32 -> %d packed", (int)f6[k]);
            check(ok && (bits >> 30) == 0, name, e.message);
            /* names, info, ONNX Cast-28 (whose 'to' the library also reads as 105, 106) */
            const char *n = dtcast_type_name(f6[k]);
            snprintf(name, sizeof name, "%d is named", (int)f6[k]);
            check(n && strcmp(n, k ? "float6e3m2fn" : "float6e2m3fn") == 0 &&
                      dtcast_type_bits(f6[k]) == 6,
                  name, n ? n : "NULL");
            dtcast_info info;
            st = dtcast_type_info(f6[k], &info, &e);
            snprintf(name, sizeof name, "%d info", (int)f6[k]);
            check(st == DTCAST_OK && info.max == (k ? 28.0 : 7.5) && !info.has_nan, name,
                  e.message);
            st = dtcast_onnx_cast(back, f6[k], f6in, DTCAST_FLOAT32, 5, 28, 1, NULL, NULL, &e);
            snprintf(name, sizeof name, "onnx cast-28 float32 -> %d", (int)f6[k]);
            check(st == DTCAST_OK && memcmp(back, want[k], 5) == 0, name, e.message);
            check(dtcast_onnx_opset_allows(28, f6[k]) && !dtcast_onnx_opset_allows(25, f6[k]),
                  k ? "onnx opset 28 takes 106" : "onnx opset 28 takes 105", "");
        }
    }

    /* NULL options are the defaults; NULL error is allowed. */
    st = dtcast_convert(i8, DTCAST_INT8, in, DTCAST_FLOAT32, 5, NULL, NULL);
    check(st == DTCAST_OK && i8[0] == 1 && i8[2] == 64, "NULL options, NULL error", "");
    return failures ? 1 : 0;
}
EOF

for lib in plain future; do
    if ! $CC -std=c11 -Wall -Wextra -Werror -I"$tmp/v1_0" "$tmp/abi.c" "$tmp/$lib/libdtcast.a" \
        -lm -pthread -o "$tmp/abi_$lib" 2>"$tmp/abi_$lib.log"; then
        fail "build program ($lib library)" "$(head -5 "$tmp/abi_$lib.log")"
        continue
    fi
    echo "# 1.0 header, $lib library"
    "$tmp/abi_$lib" "$lib" || failures=$((failures + 1))
done

[ "$failures" -eq 0 ] || exit 1
