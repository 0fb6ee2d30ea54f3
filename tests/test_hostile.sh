#!/usr/bin/env bash
# Hostile files and arguments for the dtcast CLI. Every malformed input is crafted here, at test
# time, with python3's standard library (struct only). For each one the check is:
#   - exit status 1 (never >= 128: no signal, no abort), 2 for a malformed command-line argument;
#   - exactly one stderr line "dtcast: ..." that names the problem and, for files, the byte offset;
#   - nothing at the output path (and no temporary file left in its folder); an OUT that existed
#     before keeps its bytes.
# Inputs numpy would read (big-endian data, Fortran order, unknown protobuf fields) must convert,
# to the same values as the plain little-endian C-order file.
#
#   tests/test_hostile.sh [path/to/dtcast]      (default: build/dtcast)
#
# Each check prints "PASS name" or "FAIL name: why"; DTCAST_WRAPPER (e.g. "valgrind -q
# --error-exitcode=99") runs dtcast under a tool.
set -u

DTCAST=${1:-build/dtcast}
WRAP=${DTCAST_WRAPPER:-}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dtcast-hostile.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT
IN=$TMP/in
OUTDIR=$TMP/out
mkdir -p "$IN" "$OUTDIR"

failures=0
pass() { echo "PASS $1"; }
fail() {
    echo "FAIL $1: $2"
    failures=$((failures + 1))
}

if ! command -v python3 >/dev/null 2>&1; then
    echo "FAIL hostile: python3 is needed to craft the files"
    exit 1
fi

# ---- the files ------------------------------------------------------------------------------
python3 - "$IN" <<'EOF' || { echo "FAIL hostile: could not craft the files"; exit 1; }
import struct, sys
D = sys.argv[1]

def write(name, data):
    with open(f"{D}/{name}", "wb") as f:
        f.write(data)

# .npy: magic, version, header length, dict padded with spaces to a multiple of 64, newline.
def npy(descr, shape, data=b"", fortran=False, ver=1, hlen=None, magic=b"\x93NUMPY", dict_text=None):
    h = dict_text if dict_text is not None else \
        "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)
    h = h.encode("latin-1")
    lenfmt = "<H" if ver == 1 else "<I"
    pre = 6 + 2 + struct.calcsize(lenfmt)
    h += b" " * ((64 - (pre + len(h) + 1) % 64) % 64) + b"\n"
    return magic + bytes([ver, 0]) + struct.pack(lenfmt, len(h) if hlen is None else hlen) + h + data

f6 = struct.pack("<6f", 1.5, -2.0, 3.25, 65504.0, 1e-3, -0.0)
write("good.npy", npy("<f4", "(2, 3)", f6))
write("good_1d.npy", npy("<f4", "(6,)", f6))
# numpy reads these: convert them.
write("bigendian_f4.npy", npy(">f4", "(2, 3)", struct.pack(">6f", 1.5, -2.0, 3.25, 65504.0, 1e-3, -0.0)))
write("bigendian_f8.npy", npy(">f8", "(2, 3)", struct.pack(">6d", 1.5, -2.0, 3.25, 65504.0, 1e-3, -0.0)))
write("bigendian_i2.npy", npy(">i2", "(6,)", struct.pack(">6h", 1, -2, 3, 300, 0, -32768)))
write("good_i2.npy", npy("<i2", "(6,)", struct.pack("<6h", 1, -2, 3, 300, 0, -32768)))
# Fortran order: the same 2x3 matrix stored column by column.
write("fortran.npy", npy("<f4", "(2, 3)", struct.pack("<6f", 1.5, 65504.0, -2.0, 1e-3, 3.25, -0.0), fortran=True))
write("fortran_be.npy", npy(">f4", "(2, 3)", struct.pack(">6f", 1.5, 65504.0, -2.0, 1e-3, 3.25, -0.0), fortran=True))
write("version2.npy", npy("<f4", "(2, 3)", f6, ver=2))
# Refused.
write("npy_empty.npy", b"")
write("npy_short.npy", b"\x93NUM")
write("npy_magic.npy", npy("<f4", "(6,)", f6, magic=b"\x93NUMPZ"))
write("npy_version.npy", npy("<f4", "(6,)", f6, ver=9))
write("npy_truncated_data.npy", npy("<f4", "(6,)", f6[:10]))
write("npy_truncated_header.npy", npy("<f4", "(6,)", f6)[:40])
write("npy_header_len_lies_long.npy", npy("<f4", "(6,)", f6, hlen=60000))
write("npy_header_len_lies_short.npy", npy("<f4", "(6,)", f6, hlen=20))
write("npy_dims_overflow.npy", npy("<f4", "(4294967296, 4294967296, 4294967296)", b""))
write("npy_dims_overflow_zero.npy", npy("<f4", "(0, 4294967296, 4294967296, 4294967296)", b""))
write("npy_negative_dim.npy", npy("<f4", "(-3,)", f6))
write("npy_absurd_dim.npy", npy("<f4", "(1099511627776,)", f6))
write("npy_dim_beyond_int64.npy", npy("<f4", "(99999999999999999999999,)", f6))
write("npy_too_many_dims.npy", npy("<f4", "(" + "1, " * 40 + ")", f6))
write("npy_bad_descr.npy", npy("<f3", "(6,)", f6))
write("npy_structured.npy", npy("", "", f6, dict_text="{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (6,), }"))
write("npy_garbage_dict.npy", npy("", "", f6, dict_text="{'descr': '<f4', 'fortran_order': Maybe, 'shape': (6,), }"))
write("npy_unterminated_string.npy", npy("", "", f6, dict_text="{'descr': '<f4"))
write("npy_missing_key.npy", npy("", "", f6, dict_text="{'descr': '<f4', 'shape': (6,), }"))
write("npy_nul_in_header.npy", npy("", "", f6, dict_text="{'descr': '<f4\x00', 'fortran_order': False, 'shape': (6,), }"))

# .pb: TensorProto. dims = 1, data_type = 2, float_data = 4, int32_data = 5, string_data = 6,
# name = 8, raw_data = 9, segment = 3.
def varint(n):
    n &= (1 << 64) - 1
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])
def key(field, wire): return varint(field << 3 | wire)
def ld(field, b): return key(field, 2) + varint(len(b)) + b
def vi(field, n): return key(field, 0) + varint(n)

raw = struct.pack("<6f", 1.5, -2.0, 3.25, 65504.0, 1e-3, -0.0)
write("good.pb", vi(1, 2) + vi(1, 3) + vi(2, 1) + ld(9, raw))
write("pb_unknown_fields.pb", vi(1, 2) + ld(99, b"zzz") + vi(1, 3) + vi(77, 5) + key(55, 5) + b"abcd"
      + key(56, 1) + b"12345678" + vi(2, 1) + ld(1000, ld(1, b"nested")) + ld(9, raw))
write("pb_empty.pb", b"")
write("pb_truncated_varint.pb", vi(1, 2) + b"\x10\xff")
write("pb_truncated_field.pb", vi(1, 6) + vi(2, 1) + key(9, 2) + varint(24) + raw[:10])
write("pb_huge_length.pb", vi(1, 6) + vi(2, 1) + key(9, 2) + varint((1 << 64) - 1))
write("pb_varint_too_long.pb", vi(1, 6) + b"\x10" + b"\xff" * 11 + b"\x01")
write("pb_bad_wire_type.pb", vi(1, 6) + vi(2, 1) + key(40, 7) + ld(9, raw))
write("pb_group.pb", vi(1, 6) + vi(2, 1) + key(40, 3) + key(40, 4) + ld(9, raw))
write("pb_nested_garbage.pb", vi(1, 6) + vi(2, 1) + ld(3, b"\xff\xff\xff\xff\xff") + ld(9, raw))
write("pb_dims_wrong_wire.pb", ld(1, b"\xff\xff") + vi(2, 1) + ld(9, raw))
write("pb_type_payload_mismatch.pb", vi(1, 6) + vi(2, 1) + ld(9, raw[:23]))
write("pb_type_payload_mismatch_int8.pb", vi(1, 2) + vi(2, 3) + ld(4, struct.pack("<2f", 1, 2)))
write("pb_too_few_values.pb", vi(1, 6) + vi(2, 1) + ld(4, struct.pack("<2f", 1, 2)))
write("pb_unknown_data_type.pb", vi(1, 6) + vi(2, 999) + ld(9, raw))
write("pb_missing_data_type.pb", vi(1, 6) + ld(9, raw))
write("pb_dims_overflow.pb", vi(1, 1 << 62) + vi(1, 1 << 62) + vi(1, 1 << 62) + vi(2, 1) + ld(9, b""))
write("pb_negative_dim.pb", vi(1, -6) + vi(2, 1) + ld(9, raw))
write("pb_absurd_dim.pb", vi(1, 1 << 40) + vi(2, 1) + ld(9, raw))
write("pb_too_many_dims.pb", b"".join(vi(1, 1) for _ in range(40)) + vi(2, 1) + ld(9, raw[:4]))
write("pb_string_length_oob.pb", vi(1, 1) + vi(2, 8) + key(6, 2) + varint(1 << 40) + b"x")
write("pb_external_data.pb", vi(1, 6) + vi(2, 1) + vi(14, 1) + ld(9, raw))

# Raw little-endian data.
write("raw_7_bytes.raw", b"\x00" * 7)
write("raw_24_bytes.raw", raw)
EOF

# ---- helpers ----------------------------------------------------------------------------------

# cast NAME ARGS...: runs "dtcast cast ARGS..." with OUT = $OUTDIR/NAME.EXT as the last argument
# (callers give ARGS with the input); leaves $status and $TMP/err.
run() {
    # shellcheck disable=SC2086
    $WRAP "$DTCAST" "$@" >"$TMP/stdout" 2>"$TMP/err" </dev/null
    status=$?
}

# refused NAME WANT_STATUS PATTERN [OFFSET]: the last run failed with WANT_STATUS, one stderr
# line "dtcast: ..." matching PATTERN (grep -E -i), naming "at byte N" when OFFSET=offset,
# and left $OUTDIR empty.
refused() {
    local name=$1 want=$2 pattern=$3 offset=${4:-}
    if [ "$status" -ge 128 ]; then
        fail "$name" "killed by a signal (status $status): $(head -c 300 "$TMP/err")"
        return
    fi
    if [ "$status" -ne "$want" ]; then
        fail "$name" "exit $status, expected $want: $(head -c 300 "$TMP/err")"
        return
    fi
    if [ "$(wc -l <"$TMP/err")" -ne 1 ] || ! grep -q '^dtcast: ' "$TMP/err"; then
        fail "$name" "expected one 'dtcast: ...' line, got: $(head -c 400 "$TMP/err")"
        return
    fi
    if ! grep -qiE -- "$pattern" "$TMP/err"; then
        fail "$name" "message does not name the problem ('$pattern'): $(cat "$TMP/err")"
        return
    fi
    if [ "$offset" = offset ] && ! grep -qE 'at byte [0-9]+' "$TMP/err"; then
        fail "$name" "message names no offset: $(cat "$TMP/err")"
        return
    fi
    if [ -n "$(ls -A "$OUTDIR")" ]; then
        fail "$name" "output folder not empty after the error: $(ls -A "$OUTDIR" | head -c 200)"
        rm -f "$OUTDIR"/* "$OUTDIR"/.[!.]* 2>/dev/null
        return
    fi
    pass "$name"
}

# bad_file FILE PATTERN: casting FILE to float16 (into .npy and .pb) is refused with status 1,
# a message matching PATTERN and an offset.
bad_file() {
    local file=$1 pattern=$2 base
    base=$(basename "$file")
    base=${base%.*}
    run cast --to float16 "$IN/$file" "$OUTDIR/out.npy"
    refused "$base/npy_out" 1 "$pattern" offset
    run cast --to int4 "$IN/$file" "$OUTDIR/out.pb"
    refused "$base/pb_out" 1 "$pattern" offset
}

# same_as NAME FILE REFERENCE [ARGS]: FILE converts (to float16 and to string) to exactly what
# REFERENCE converts to.
same_as() {
    local name=$1 file=$2 ref=$3
    shift 3
    local to
    for to in float16 string; do
        run cast --to $to "$@" "$IN/$file" "$TMP/a.txt"
        local s1=$status
        run cast --to $to "$@" "$IN/$ref" "$TMP/b.txt"
        local s2=$status
        if [ "$s1" -ne 0 ] || [ "$s2" -ne 0 ]; then
            fail "$name/$to" "exit $s1 / $s2: $(head -c 300 "$TMP/err")"
        elif ! cmp -s "$TMP/a.txt" "$TMP/b.txt"; then
            fail "$name/$to" "differs from $ref: $(head -c 100 "$TMP/a.txt" | tr '\n' ' ') vs $(head -c 100 "$TMP/b.txt" | tr '\n' ' ')"
        else
            pass "$name/$to"
        fi
    done
}

# ---- inputs numpy reads: converted ------------------------------------------------------------
same_as npy_bigendian_f4 bigendian_f4.npy good.npy
same_as npy_bigendian_f8 bigendian_f8.npy good.npy
same_as npy_bigendian_i2 bigendian_i2.npy good_i2.npy
same_as npy_fortran_order fortran.npy good.npy
same_as npy_fortran_bigendian fortran_be.npy good.npy
same_as npy_version2 version2.npy good.npy
# a zero in the shape makes an empty tensor, however large the other dimensions (numpy agrees)
run cast --to float16 "$IN/npy_dims_overflow_zero.npy" "$TMP/z.npy"
if [ "$status" -eq 0 ]; then pass npy_zero_dim_with_huge_dims; else
    fail npy_zero_dim_with_huge_dims "exit $status: $(cat "$TMP/err")"; fi
same_as pb_unknown_fields_skipped pb_unknown_fields.pb good.pb
# the shape survives: a Fortran-order 2x3 file stays Fortran-order in .npy (streamed, as numpy's
# astype keeps the order), and becomes C order in a format that has only C order (.pb)
run cast --to float32 "$IN/fortran.npy" "$TMP/f.npy"
s1=$status
run cast --to float32 "$TMP/f.npy" "$TMP/f.pb"
s2=$status
run cast --to float32 "$IN/good.npy" "$TMP/g.pb"
if [ "$s1" -eq 0 ] && [ "$s2" -eq 0 ] && [ "$status" -eq 0 ] && cmp -s "$TMP/f.pb" "$TMP/g.pb" &&
    grep -aq "'fortran_order': True" "$TMP/f.npy"; then
    pass npy_fortran_kept_then_c_order
else
    fail npy_fortran_kept_then_c_order "status $s1/$s2/$status or the C-order bytes differ"
fi

# ---- .npy refused -----------------------------------------------------------------------------
bad_file npy_empty.npy 'magic|too short|truncated|empty'
bad_file npy_short.npy 'magic|too short|truncated'
bad_file npy_magic.npy 'magic'
bad_file npy_version.npy 'version'
bad_file npy_truncated_data.npy 'data is [0-9]+ bytes|truncated'
bad_file npy_truncated_header.npy 'header|truncated|exceeds'
bad_file npy_header_len_lies_long.npy 'header length'
bad_file npy_header_len_lies_short.npy 'header'
bad_file npy_dims_overflow.npy 'overflow'
bad_file npy_negative_dim.npy 'negative|non-negative'
bad_file npy_absurd_dim.npy 'data is [0-9]+ bytes|need'
bad_file npy_dim_beyond_int64.npy 'dimension|integer|too large|overflow'
bad_file npy_too_many_dims.npy 'dimensions'
bad_file npy_bad_descr.npy "dtype|descr|f3"
bad_file npy_structured.npy 'structured'
bad_file npy_garbage_dict.npy 'fortran_order|True or False|expected'
bad_file npy_unterminated_string.npy 'string|header'
bad_file npy_missing_key.npy 'missing'
bad_file npy_nul_in_header.npy 'dtype|descr|header'

# ---- .pb refused ------------------------------------------------------------------------------
bad_file pb_empty.pb 'data_type'
bad_file pb_truncated_varint.pb 'truncated varint'
bad_file pb_truncated_field.pb 'runs past the end'
bad_file pb_huge_length.pb 'runs past the end'
bad_file pb_varint_too_long.pb 'varint'
bad_file pb_bad_wire_type.pb 'wire type 7'
bad_file pb_group.pb 'wire type 3'
bad_file pb_nested_garbage.pb 'segment'
bad_file pb_dims_wrong_wire.pb 'dims|varint|wire'
bad_file pb_type_payload_mismatch.pb 'raw_data is 23 bytes'
bad_file pb_type_payload_mismatch_int8.pb 'int32_data, not float_data'
bad_file pb_too_few_values.pb 'float_data has 2 values'
bad_file pb_unknown_data_type.pb 'data_type 999'
bad_file pb_missing_data_type.pb 'data_type'
bad_file pb_dims_overflow.pb 'overflow'
bad_file pb_negative_dim.pb 'negative'
bad_file pb_absurd_dim.pb 'raw_data is 24 bytes'
bad_file pb_too_many_dims.pb 'dims'
bad_file pb_string_length_oob.pb 'runs past the end'
bad_file pb_external_data.pb 'external'

# ---- from stdin, and an OUT that already exists keeps its bytes -------------------------------
$WRAP "$DTCAST" cast --to float16 - "$OUTDIR/out.npy" <"$IN/npy_truncated_data.npy" >/dev/null 2>"$TMP/err"
status=$?
refused npy_truncated_from_stdin 1 'data is [0-9]+ bytes' offset
printf 'keep' >"$TMP/existing.npy"
run cast --to float16 "$IN/npy_dims_overflow.npy" "$TMP/existing.npy"
if [ "$status" -eq 1 ] && [ "$(cat "$TMP/existing.npy")" = keep ] &&
    [ -z "$(find "$TMP" -maxdepth 1 -name '*.tmp*' -o -maxdepth 1 -name '.*dtcast*')" ]; then
    pass existing_out_untouched
else
    fail existing_out_untouched "status $status, OUT now: $(head -c 40 "$TMP/existing.npy" | od -c | head -2)"
fi

# ---- raw data and hostile arguments -----------------------------------------------------------
run cast --from float32 --to float16 "$IN/raw_7_bytes.raw" "$OUTDIR/out.raw"
refused raw_partial_element 1 '7 bytes|whole|multiple'
run cast --from float32 --shape 2x4 --to float16 "$IN/raw_24_bytes.raw" "$OUTDIR/out.raw"
refused raw_shape_disagrees 1 'shape|elements|bytes'
run cast --from float32 --shape 4294967296x4294967296x4294967296 --to float16 "$IN/raw_24_bytes.raw" "$OUTDIR/out.raw"
refused arg_shape_overflow 1 'overflow'
run cast --from float32 --shape 2x-3 --to float16 "$IN/raw_24_bytes.raw" "$OUTDIR/out.raw"
refused arg_shape_negative 2 'shape|-3'
run cast --from float32 --shape 99999999999999999999999 --to float16 "$IN/raw_24_bytes.raw" "$OUTDIR/out.raw"
refused arg_shape_beyond_int64 2 'shape'
run cast --threads -1 --to float16 "$IN/good.npy" "$OUTDIR/out.npy"
refused arg_threads_negative 2 'threads|-1'
run cast --threads 99999999999999999999 --to float16 "$IN/good.npy" "$OUTDIR/out.npy"
refused arg_threads_huge 2 'threads'
run cast --to float16 --profile onnx:-5 "$IN/good.npy" "$OUTDIR/out.npy"
refused arg_opset_negative 2 'opset|-5|profile'
run cast --to "$(printf 'x%.0s' $(seq 1 3000))" "$IN/good.npy" "$OUTDIR/out.npy"
refused arg_type_name_long 2 'type|xxxx'
run cast --to float16 "$IN/good.npy" "$OUTDIR/no/such/dir/out.npy"
refused out_folder_missing 1 'no/such/dir|directory|cannot'

# ---- model.onnx through onnx-test: refused per directory, never a crash -----------------------
mkdir -p "$TMP/model/garbage" "$TMP/model/truncated" "$TMP/model/empty"
python3 - "$TMP/model" <<'EOF'
import sys
D = sys.argv[1]
open(D + "/garbage/model.onnx", "wb").write(bytes((i * 131 + 7) % 256 for i in range(300)))
open(D + "/truncated/model.onnx", "wb").write(b"\x08\x07\x3a\xff\xff\x03\x0a")
open(D + "/empty/model.onnx", "wb").write(b"")
EOF
for m in garbage truncated empty; do
    $WRAP "$DTCAST" onnx-test "$TMP/model/$m" >"$TMP/stdout" 2>"$TMP/err"
    status=$?
    if [ "$status" -ge 128 ]; then
        fail "model_$m" "killed by signal (status $status)"
    elif [ "$status" -ne 1 ] || ! grep -q "^FAIL $m: " "$TMP/stdout"; then
        fail "model_$m" "status $status, output: $(head -c 300 "$TMP/stdout")"
    else
        pass "model_$m"
    fi
done

[ "$failures" -eq 0 ]
