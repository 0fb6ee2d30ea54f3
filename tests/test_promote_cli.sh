#!/usr/bin/env bash
# Shell tests of `dtcast promote` and `dtcast convert-promote`. Each check prints "PASS name" or
# "FAIL name: why"; the script exits 1 when any check fails.
#
#   tests/test_promote_cli.sh [path/to/dtcast]        (default: build/dtcast)
set -u

DTCAST=${1:-build/dtcast}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TABLES=$ROOT/tests/promote_tables
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dtcast-promote.XXXXXX") || exit 1
trap 'rm -rf "$TMP"' EXIT

failures=0
pass() { echo "PASS $1"; }
fail() {
    echo "FAIL $1: $2"
    failures=$((failures + 1))
}

# run ARGS...: runs dtcast; leaves $status, $TMP/out and $TMP/err.
run() {
    "$DTCAST" "$@" >"$TMP/out" 2>"$TMP/err"
    status=$?
}

# expect_result NAME WANT ARGS...: `dtcast promote ARGS` prints exactly WANT, exit 0, no stderr.
expect_result() {
    local name=$1 want=$2
    shift 2
    run promote "$@"
    if [ "$status" -ne 0 ] || [ -s "$TMP/err" ]; then
        fail "$name" "exit $status: $(head -c 300 "$TMP/err")"
    elif [ "$(cat "$TMP/out")" != "$want" ]; then
        fail "$name" "printed '$(head -c 200 "$TMP/out")', expected '$want'"
    else
        pass "$name"
    fi
}

# expect_error NAME STATUS TEXT ARGS...: exit STATUS, nothing on stdout, one stderr line
# "dtcast: ..." containing TEXT (fixed string).
expect_error() {
    local name=$1 want=$2 text=$3
    shift 3
    run "$@"
    if [ "$status" -ne "$want" ]; then
        fail "$name" "exit $status, expected $want (stderr: $(head -c 300 "$TMP/err"))"
    elif [ -s "$TMP/out" ]; then
        fail "$name" "stdout is not empty: $(head -c 200 "$TMP/out")"
    elif [ "$(wc -l <"$TMP/err")" -ne 1 ] || ! grep -q '^dtcast: ' "$TMP/err"; then
        fail "$name" "expected one 'dtcast: ...' line, got: $(head -c 300 "$TMP/err")"
    elif ! grep -qF -- "$text" "$TMP/err"; then
        fail "$name" "stderr lacks '$text': $(cat "$TMP/err")"
    else
        pass "$name"
    fi
}

if [ ! -x "$DTCAST" ]; then
    fail binary_exists "$DTCAST is not an executable"
    exit 1
fi

# ---- one pair --------------------------------------------------------------------------------

expect_result openvino_default float32 --rules openvino i8 f32
expect_result openvino_i32_u8 int32 --rules openvino i32 u8
expect_result openvino_unsafe float16 --rules openvino --promote-unsafe f16 i64
expect_result openvino_unsafe_i8_u8 int16 --rules openvino --promote-unsafe i8 u8
expect_result openvino_scalar uint8 --rules openvino --pytorch-scalar-promotion --promote-unsafe \
    int64@0 uint8
expect_result openvino_unknown_rank dynamic --rules openvino --pytorch-scalar-promotion \
    int8@? int16@0
expect_result openvino_dynamic dynamic --rules openvino dynamic f16
expect_result openvino_u64_target float64 --rules openvino --promote-unsafe --u64-target f64 \
    u64 i8
expect_result openvino_attr_equals_form float64 --rules=openvino --promote-unsafe \
    --u64-target=double u64 i8
expect_result aclnn_bf16_f16 float32 --rules aclnn bf16 f16
expect_result aclnn_zero_dim float16 --rules aclnn f16 f32@0
expect_result torch_scalar float32 --rules torch int32 py:float
expect_result torch_zero_dim int8 --rules torch int8 int64@0
expect_result torch_promote_types int16 --rules torch uint8 int8
expect_result numpy_weak int8 --rules numpy int8 py:int
expect_result numpy_uint64 float64 --rules numpy int64 uint64
# numpy 2 + ml_dtypes 0.7.0 (tests/promote_tables/numpy_ml_dtypes_table.csv)
expect_result ml_dtypes_bf16_f16 float32 --rules numpy+ml_dtypes bfloat16 float16
expect_result ml_dtypes_f8_int8 float8e4m3fn --rules numpy+ml_dtypes float8e4m3fn int8
expect_result ml_dtypes_int4_uint4 int8 --rules numpy+ml_dtypes int4 uint4
expect_result ml_dtypes_bf16_int64 float64 --rules numpy+ml_dtypes bfloat16 int64
expect_result ml_dtypes_weak bfloat16 --rules numpy+ml_dtypes bfloat16 py:float
expect_result ml_dtypes_scalar_first float32 --rules numpy+ml_dtypes py:float bfloat16
expect_result ml_dtypes_alias float8e4m3fn --rules numpy+ml_dtypes float8_e4m3fn@0 uint8
expect_result jax_x64 float64 --rules jax --x64 1 uint64 int8
expect_result jax_x32 float32 --rules jax uint64 int8
expect_result jax_bf16_f16 float32 --rules jax bfloat16 float16
expect_result jax_weak uint8 --rules jax -r jax uint8 py:int

# ---- the systems' errors: exit 1, their text ---------------------------------------------------

expect_error openvino_int_float 1 "Integer input cannot be safely promoted to floating-point." \
    promote --rules openvino f16 i64
expect_error openvino_scalar_safe 1 \
    "Scalar input cannot be PyTorch-like promoted using safe promotion rules." \
    promote --rules openvino --pytorch-scalar-promotion int64@0 uint8
expect_error openvino_unsigned 1 \
    "Unsigned integer input cannot be safely promoted into any supported signed integer." \
    promote --rules openvino u64 i8
expect_error openvino_unsupported 1 \
    "Unsupported input element types for ConvertPromoteTypes with given attributes." \
    promote --rules openvino f16 bf16
expect_error openvino_type 1 "does not support element type complex64" \
    promote --rules openvino complex64 f32
expect_error aclnn_na 1 "Self dtype DT_UINT16 and other dtype DT_INT32 can not promote dtype." \
    promote --rules aclnn u16 s32
expect_error torch_float8 1 \
    "Promotion for Float8 Types is not supported, attempted to promote Float8_e4m3fn and Float" \
    promote --rules torch float8e4m3fn float32
expect_error numpy_bfloat16 1 "data type 'bfloat16' not understood" \
    promote --rules numpy bfloat16 float32
expect_error ml_dtypes_string 1 "data type 'string' not understood" \
    promote --rules numpy+ml_dtypes string float32
expect_error jax_strict 1 "when jax_numpy_dtype_promotion=strict" \
    promote --rules jax --strict int8 int16
expect_error jax_int4 1 "Input dtypes ('int4', 'int8') have no available implicit dtype" \
    promote --rules jax int4 int8
expect_error python_scalar_openvino 1 "take tensors, not Python scalars" \
    promote --rules openvino py:int i8

# ---- usage errors: exit 2 ----------------------------------------------------------------------

expect_error missing_rules 2 "missing --rules" promote i8 f32
expect_error unknown_rules 2 "tensorflow" promote --rules tensorflow i8 f32
expect_error unknown_type 2 "float7" promote --rules torch float7 f32
expect_error bad_rank 2 "bad rank" promote --rules torch int8@x f32
expect_error missing_operand 2 "missing operand B" promote --rules torch f32
expect_error extra_operand 2 "unexpected argument 'i8'" promote --rules torch f32 f16 i8
expect_error x64_needs_jax 2 "--x64 is an attribute of --rules jax" \
    promote --rules openvino --x64 1 i8 f32
expect_error unsafe_needs_openvino 2 "--promote-unsafe is an attribute of --rules openvino" \
    promote --rules torch --promote-unsafe i8 f32
expect_error bad_x64 2 "--x64" promote --rules jax --x64 2 i8 f32
expect_error bad_u64_target 2 "float7" promote --rules openvino --u64-target float7 u64 i8
# Suggestions, and flags named as typed (the spelling outlives the options parsed after it).
expect_error suggest_rules 2 "unknown rule set 'jxa' (did you mean 'jax'?)" promote -r jxa i8 f32
expect_error suggest_operand 2 "unknown type 'flaot32@0' (did you mean 'float32@0'?)" \
    promote --rules torch i8 flaot32@0
expect_error suggest_scalar 2 "(did you mean 'py:float'?)" promote --rules torch i8 py:flaot
expect_error suggest_flag 2 "unknown option '--promote-unsaf' (did you mean '--promote-unsafe'?)" \
    promote --rules openvino --promote-unsaf i8 u8
expect_error flag_kept_as_typed 2 "--promote-unsafe is an attribute of -r openvino, not jax" \
    promote -r jax --promote-unsafe --table
expect_error u64_target_as_typed 2 "--u64-target: unknown type 'flaot32' (did you mean 'float32'?)" \
    promote --rules openvino --u64-target flaot32 u64 i8
expect_error format_needs_table 2 "--format applies to --table" \
    promote --rules numpy --format csv i8 f32
expect_error bad_format 2 "--format" promote --rules numpy --table --format html
expect_error table_takes_no_operands 2 "--table takes no operands" \
    promote --rules numpy --table i8

run promote --help
if [ "$status" -eq 0 ] && grep -q "usage: dtcast promote" "$TMP/out"; then pass help_promote; else
    fail help_promote "exit $status"; fi
run help convert-promote
if [ "$status" -eq 0 ] && grep -q "usage: dtcast convert-promote" "$TMP/out"; then
    pass help_convert_promote; else fail help_convert_promote "exit $status"; fi
run --help
if grep -q "promote" "$TMP/out" && grep -q "convert-promote" "$TMP/out"; then
    pass help_lists_commands; else fail help_lists_commands "not listed"; fi

# ---- tables ------------------------------------------------------------------------------------

for rules in openvino aclnn torch numpy jax numpy+ml_dtypes; do
    run promote --rules "$rules" --table
    if [ "$status" -ne 0 ] || [ -s "$TMP/err" ]; then
        fail "table_grid_$rules" "exit $status: $(head -c 200 "$TMP/err")"
        continue
    fi
    # The grid: the corner names the rules; every row has as many cells as the header.
    rows=$(awk 'NF == 0 { exit } { print NF }' "$TMP/out" | sort -u | wc -l)
    if head -n 1 "$TMP/out" | grep -q "^$rules " && [ "$rows" -eq 1 ]; then
        pass "table_grid_$rules"
    else
        fail "table_grid_$rules" "ragged grid or wrong corner: $(head -n 1 "$TMP/out")"
    fi
    run promote --rules "$rules" --table --format csv
    fields=$(awk -F, '{ print NF }' "$TMP/out" | sort -u)
    lines=$(wc -l <"$TMP/out")
    if [ "$status" -eq 0 ] && [ "$(echo "$fields" | wc -l)" -eq 1 ] &&
        [ "$fields" -eq "$lines" ] && head -n 1 "$TMP/out" | grep -q "^$rules,"; then
        pass "table_csv_$rules"
    else
        fail "table_csv_$rules" "not a square grid ($lines lines, fields: $fields)"
    fi
done

# numpy's whole table is exactly what the real numpy 1.24 answered (NEP 50 weak scalars).
run promote --rules numpy --table --format csv
if grep -v '^#' "$TABLES/numpy_table.csv" | cmp -s - "$TMP/out"; then
    pass table_numpy_equals_real_numpy
else
    fail table_numpy_equals_real_numpy "$(grep -v '^#' "$TABLES/numpy_table.csv" | diff - "$TMP/out" | head -5)"
fi

# numpy+ml_dtypes: the whole table is what numpy 2.4.6 + ml_dtypes 0.7.0 answered (every type of
# both is a dtcast type).
run promote --rules numpy+ml_dtypes --table --format csv
grep -v '^#' "$TABLES/numpy_ml_dtypes_table.csv" >"$TMP/ml_expected"
if [ "$status" -eq 0 ] && cmp -s "$TMP/ml_expected" "$TMP/out" &&
    [ "$(wc -l <"$TMP/out")" -ge 40 ]; then
    pass table_numpy_ml_dtypes_equals_real
else
    fail table_numpy_ml_dtypes_equals_real "$(diff "$TMP/ml_expected" "$TMP/out" | head -5)"
fi

# The attributes reach the table.
run promote --rules openvino --table --format csv --promote-unsafe
if grep -q '^float16,.*float32' "$TMP/out" && ! grep -q '^bfloat16,.*error' "$TMP/out"; then
    pass table_openvino_unsafe
else
    fail table_openvino_unsafe "$(grep '^bfloat16' "$TMP/out")"
fi
run promote --rules jax --table --format csv --x64 1
if grep -q '^int64,int64,' "$TMP/out"; then pass table_jax_x64; else
    fail table_jax_x64 "$(grep '^int64' "$TMP/out" | head -c 100)"; fi

# ---- convert-promote ---------------------------------------------------------------------------

# hex FILE: the bytes of FILE as one line of hex.
hex() { od -An -v -tx1 "$1" | tr -d ' \n'; }

printf '\001\000\376\377\054\001' >"$TMP/a.raw"                # int16 1, -2, 300
printf '\007\000\000\000\000\050\153\356' >"$TMP/b.raw"        # uint32 7, 4000000000
"$DTCAST" cast --from int16 --to int16 "$TMP/a.raw" "$TMP/a.npy" &&
    "$DTCAST" cast --from uint32 --to uint32 "$TMP/b.raw" "$TMP/b.npy" ||
    fail make_inputs "cast could not write the inputs"

expect_error convert_promote_safe 1 \
    "Unsigned integer input cannot be safely promoted into any supported signed integer." \
    convert-promote "$TMP/a.npy" "$TMP/b.npy" "$TMP/a_out.npy" "$TMP/b_out.npy"
if [ -e "$TMP/a_out.npy" ] || [ -e "$TMP/b_out.npy" ]; then
    fail convert_promote_writes_nothing "an output exists after the refusal"
else
    pass convert_promote_writes_nothing
fi

run convert-promote --promote-unsafe "$TMP/a.npy" "$TMP/b.npy" "$TMP/a_out.npy" "$TMP/b_out.npy"
if [ "$status" -eq 0 ] &&
    "$DTCAST" cast --from int64 --to int64 "$TMP/a_out.npy" "$TMP/a_out.raw" 2>/dev/null &&
    "$DTCAST" cast --from int64 --to int64 "$TMP/b_out.npy" "$TMP/b_out.raw" 2>/dev/null &&
    [ "$(hex "$TMP/a_out.raw")" = "0100000000000000feffffffffffffff2c01000000000000" ] &&
    [ "$(hex "$TMP/b_out.raw")" = "070000000000000000286bee00000000" ]; then
    pass convert_promote_unsafe_int64
else
    fail convert_promote_unsafe_int64 "exit $status: $(head -c 200 "$TMP/err")"
fi

# pytorch_scalar_promotion: a 0-dim float32 joins a float16 vector as float16 and stays 0-dim.
printf '\000\074\000\300' >"$TMP/h.raw"                       # float16 1, -2
printf '\000\000\200\076' >"$TMP/s.raw"                       # float32 0.25
"$DTCAST" cast --from float16 --to float16 "$TMP/h.raw" "$TMP/h.npy" &&
    "$DTCAST" cast --from float32 --shape scalar --to float32 "$TMP/s.raw" "$TMP/s.npy" ||
    fail make_inputs_scalar "cast could not write the inputs"
run convert-promote --pytorch-scalar-promotion --promote-unsafe "$TMP/s.npy" "$TMP/h.npy" \
    "$TMP/s_out.npy" "$TMP/h_out.npy"
if [ "$status" -eq 0 ] && grep -q "'descr': '<f2'" "$TMP/s_out.npy" &&
    grep -q "'shape': ()" "$TMP/s_out.npy" && grep -q "'shape': (2,)" "$TMP/h_out.npy"; then
    pass convert_promote_scalar_keeps_shapes
else
    fail convert_promote_scalar_keeps_shapes "exit $status: $(head -c 200 "$TMP/err")"
fi
run convert-promote --rules aclnn "$TMP/h.npy" "$TMP/s.npy" "$TMP/h2.npy" "$TMP/s2.npy"
if [ "$status" -eq 0 ] && grep -q "'descr': '<f2'" "$TMP/s2.npy"; then
    pass convert_promote_aclnn_zero_dim
else
    fail convert_promote_aclnn_zero_dim "exit $status: $(head -c 200 "$TMP/err")"
fi
expect_error convert_promote_rules 2 "openvino or aclnn" \
    convert-promote --rules torch "$TMP/h.npy" "$TMP/s.npy" "$TMP/x.npy" "$TMP/y.npy"
expect_error convert_promote_same_out 2 "same file" \
    convert-promote "$TMP/h.npy" "$TMP/s.npy" "$TMP/x.npy" "$TMP/x.npy"
expect_error convert_promote_missing 2 "missing outputs" \
    convert-promote "$TMP/h.npy" "$TMP/s.npy"
expect_error convert_promote_no_table 2 "--table" \
    convert-promote --table "$TMP/h.npy" "$TMP/s.npy" "$TMP/x.npy" "$TMP/y.npy"

[ "$failures" -eq 0 ]
