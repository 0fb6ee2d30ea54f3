#!/usr/bin/env bash
# Shell tests of the dtcast command-line tool. Each check prints "PASS name" or "FAIL name: why";
# the script exits 1 when any check fails.
#
#   tests/test_cli.sh [path/to/dtcast]        (default: build/dtcast)
#
# DTCAST_CONFORMANCE points at the conformance data (default: tests/conformance); the
# onnx-test check is skipped when it is not there.
set -u

DTCAST=${1:-build/dtcast}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WEIGHTS=$ROOT/examples/weights.npy
CONFORMANCE=${DTCAST_CONFORMANCE:-$ROOT/tests/conformance}
TMP=$(mktemp -d "${TMPDIR:-/tmp}/dtcast-cli.XXXXXX") || exit 1
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

# run_stdin FILE ARGS...: the same with stdin from FILE.
run_stdin() {
    local input=$1
    shift
    "$DTCAST" "$@" <"$input" >"$TMP/out" 2>"$TMP/err"
    status=$?
}

# hex FILE: the bytes of FILE as one line of hex.
hex() { od -An -v -tx1 "$1" | tr -d ' \n'; }

# expect_ok NAME: the last run succeeded with nothing on stderr.
expect_ok() {
    if [ "$status" -ne 0 ]; then
        fail "$1" "exit $status: $(head -c 300 "$TMP/err")"
        return 1
    fi
    return 0
}

# expect_error NAME STATUS PATTERN...: the last run failed with STATUS and one stderr line
# "dtcast: ..." that matches every PATTERN (grep -E, case-insensitive).
expect_error() {
    local name=$1 want=$2
    shift 2
    if [ "$status" -ne "$want" ]; then
        fail "$name" "exit $status, expected $want (stderr: $(head -c 300 "$TMP/err"))"
        return 1
    fi
    local lines
    lines=$(wc -l <"$TMP/err")
    if [ "$lines" -ne 1 ] || ! grep -q '^dtcast: ' "$TMP/err"; then
        fail "$name" "expected one 'dtcast: ...' line on stderr, got: $(head -c 300 "$TMP/err")"
        return 1
    fi
    local p
    for p in "$@"; do
        if ! grep -qiE -- "$p" "$TMP/err"; then
            fail "$name" "stderr does not match '$p': $(cat "$TMP/err")"
            return 1
        fi
    done
    pass "$name"
}

# expect_output NAME PATTERN: the last run succeeded and stdout matches PATTERN (grep -E).
expect_output() {
    expect_ok "$1" || return
    if grep -qE -- "$2" "$TMP/out"; then pass "$1"; else fail "$1" "stdout lacks '$2'"; fi
}

# expect_absent NAME FILE: FILE was not created (nor any temporary file next to it).
expect_absent() {
    if [ -e "$2" ]; then
        fail "$1" "$2 exists after a failed command"
    elif ls "$(dirname "$2")" | grep -q '\.tmp'; then
        fail "$1" "a temporary file was left behind: $(ls "$(dirname "$2")" | grep '\.tmp')"
    else
        pass "$1"
    fi
}

if [ ! -x "$DTCAST" ]; then
    fail binary_exists "$DTCAST is not an executable"
    exit 1
fi

# ---- help, version, usage errors --------------------------------------------------------------

run --help
expect_output help "usage: dtcast"
run
[ "$status" -eq 2 ] && pass no_arguments_is_usage || fail no_arguments_is_usage "exit $status"
run --version
expect_output version "^dtcast [0-9]+\.[0-9]+\.[0-9]+"
for cmd in cast compare info table types onnx-test; do
    run "$cmd" --help
    expect_output "help_$cmd" "usage: dtcast $cmd"
    run "$cmd" -h
    expect_output "help_short_$cmd" "usage: dtcast $cmd"
done
run help cast
expect_output help_command "usage: dtcast cast"

run frobnicate
expect_error unknown_subcommand 2 "frobnicate"
run cast --bogus --to f16 "$WEIGHTS" "$TMP/x.npy"
expect_error unknown_flag 2 "--bogus"
run cast --to float7 "$WEIGHTS" "$TMP/x.npy"
expect_error unknown_type_to 2 "float7"
run info float7
expect_error unknown_type_info 2 "float7"
run cast --to f16 "$WEIGHTS"
expect_error missing_out 2 "OUT"
run cast "$WEIGHTS" "$TMP/x.npy"
expect_error missing_to 2 "--to"
run cast --to f16 --round sideways "$WEIGHTS" "$TMP/x.npy"
expect_error bad_round 2 "sideways"
run cast --to f16 --profile onnx:99 "$WEIGHTS" "$TMP/x.npy"
expect_error bad_opset 2 "99"
run cast --to f16 --profile onnx --round trunc "$WEIGHTS" "$TMP/x.npy"
expect_error onnx_refuses_round 2 "--round" "onnx"
run cast --to f16 --profile onnx --overflow saturate "$WEIGHTS" "$TMP/x.npy"
expect_error onnx_refuses_overflow 2 "--overflow" "saturate"
run cast --to f16 --saturate 0 "$WEIGHTS" "$TMP/x.npy"
expect_error exact_refuses_saturate 2 "--saturate"
run cast --to f16 --profile pypto --round rne "$WEIGHTS" "$TMP/x.npy"
expect_error pypto_refuses_round 2 "--round" "cast-mode"
expect_absent usage_error_writes_nothing "$TMP/x.npy"

# ---- files ------------------------------------------------------------------------------------

run cast --to f16 "$TMP/missing.npy" "$TMP/out.npy"
expect_error missing_file 1 "$TMP/missing.npy"
expect_absent missing_file_no_output "$TMP/out.npy"

printf 'not a numpy file' >"$TMP/bad.npy"
run cast --to f16 "$TMP/bad.npy" "$TMP/out.npy"
expect_error malformed_npy 1 "bad.npy"
expect_absent malformed_npy_no_output "$TMP/out.npy"

run cast --to f16 --from int8 "$WEIGHTS" "$TMP/out.npy"
expect_error from_disagrees_with_file 1 "float32" "int8"

# ---- info, table, types -----------------------------------------------------------------------

run info float8e4m3fn
expect_output info_e4m3fn_max "^ *max +448( |$)"
run info FLOAT8E4M3FN
expect_output info_onnx_name "float8e4m3fn"
run info 17
expect_output info_onnx_code "float8e4m3fn"
run info bf16
expect_output info_alias "bfloat16"
run info int4
expect_output info_int4_min "^ *min +-8 "
run table float4e2m1
expect_ok table_float4e2m1_rows &&
    { rows=$(grep -c '^0x' "$TMP/out"); [ "$rows" -eq 16 ] && pass table_float4e2m1_rows ||
        fail table_float4e2m1_rows "$rows rows"; }
run table float4e2m1
expect_output table_float4e2m1_max "^0x7 +0111 +6(\.0)? "
run table float8e4m3fn
expect_ok table_float8_rows &&
    { rows=$(grep -c '^0x' "$TMP/out"); [ "$rows" -eq 256 ] && pass table_float8_rows ||
        fail table_float8_rows "$rows rows"; }
run table float32
expect_error table_refuses_wide_type 2 "float32"
run types
expect_output types_lists_e4m3fn "^ *17 +8 +float8e4m3fn"
run types
expect_output types_lists_float4 "float4e2m1"

# ---- cast -------------------------------------------------------------------------------------

F16_HEX=662e00be48424056005fd05f00801914004740c85435ff7b
run cast --to float16 "$WEIGHTS" "$TMP/a.npy"
expect_ok cast_npy_to_npy && { [ -s "$TMP/a.npy" ] && pass cast_npy_to_npy ||
    fail cast_npy_to_npy "no output"; }
run cast --to float16 "$TMP/a.npy" "$TMP/a.raw"
expect_ok cast_npy_values &&
    { [ "$(hex "$TMP/a.raw")" = "$F16_HEX" ] && pass cast_npy_values ||
        fail cast_npy_values "got $(hex "$TMP/a.raw")"; }

run cast --to=float16 "$WEIGHTS" "$TMP/b.pb"
expect_ok cast_npy_to_pb && pass cast_npy_to_pb
run cast --to float16 "$TMP/b.pb" "$TMP/c.npy"
expect_ok roundtrip_pb &&
    { cmp -s "$TMP/a.npy" "$TMP/c.npy" && pass roundtrip_pb ||
        fail roundtrip_pb "npy -> pb -> npy differs from npy -> npy"; }
run cast --to float32 "$TMP/b.pb" "$TMP/d.pb"
run cast --to float16 "$TMP/d.pb" -
expect_ok roundtrip_widen && { [ "$(hex "$TMP/out")" = "$F16_HEX" ] && pass roundtrip_widen ||
    fail roundtrip_widen "float16 -> float32 -> float16 changed: $(hex "$TMP/out")"; }

# Every float8e4m3fn code of the example, exact profile (500 and 65504 overflow to NaN) and ONNX
# (saturate=1 clamps them to 448).
run cast --to float8e4m3fn "$WEIGHTS" -
expect_ok cast_exact_f8 && { [ "$(hex "$TMP/out")" = 1dbc456c7e7f80014ed02b7f ] &&
    pass cast_exact_f8 || fail cast_exact_f8 "got $(hex "$TMP/out")"; }
run cast --to float8e4m3fn --overflow saturate "$WEIGHTS" -
expect_ok cast_exact_f8_saturate && { [ "$(hex "$TMP/out")" = 1dbc456c7e7e80014ed02b7e ] &&
    pass cast_exact_f8_saturate || fail cast_exact_f8_saturate "got $(hex "$TMP/out")"; }
run cast --profile onnx --to FLOAT8E4M3FN "$WEIGHTS" -
expect_ok cast_onnx_f8 && { [ "$(hex "$TMP/out")" = 1dbc456c7e7e80014ed02b7e ] &&
    pass cast_onnx_f8 || fail cast_onnx_f8 "got $(hex "$TMP/out")"; }
run cast --profile onnx:19 --saturate 0 --to float8e4m3fn "$WEIGHTS" -
expect_ok cast_onnx_f8_no_saturate && { [ "$(hex "$TMP/out")" = 1dbc456c7e7f80014ed02b7f ] &&
    pass cast_onnx_f8_no_saturate || fail cast_onnx_f8_no_saturate "got $(hex "$TMP/out")"; }

# Raw data through stdin and stdout.
printf '\000\000\200\077\000\000\300\277' >"$TMP/two.raw" # 1.0, -1.5
run_stdin "$TMP/two.raw" cast --from float32 --to bfloat16 - -
expect_ok raw_stdin && { [ "$(hex "$TMP/out")" = 803fc0bf ] && pass raw_stdin ||
    fail raw_stdin "got $(hex "$TMP/out")"; }
run_stdin "$WEIGHTS" cast --to float16 - -
expect_ok npy_stdin && { [ "$(hex "$TMP/out")" = "$F16_HEX" ] && pass npy_stdin ||
    fail npy_stdin "got $(hex "$TMP/out")"; }
run cast --to float8e4m3fn "$WEIGHTS" "$TMP/f8.npy"
run cast --from float8e4m3fn --to float8e4m3fn "$TMP/f8.npy" -
expect_ok npy_packed_type_roundtrip &&
    { [ "$(hex "$TMP/out")" = 1dbc456c7e7f80014ed02b7f ] && pass npy_packed_type_roundtrip ||
        fail npy_packed_type_roundtrip "got $(hex "$TMP/out")"; }
run_stdin "$TMP/two.raw" cast --to bfloat16 - -
expect_error raw_stdin_needs_from 2 "--from"
printf '\000\000\200' >"$TMP/odd.raw"
run cast --from float32 --to f16 "$TMP/odd.raw" "$TMP/odd_out.raw"
expect_error raw_partial_element 1 "odd.raw" "3 bytes"
run cast --from float32 --to int4 "$TMP/two.raw" -
expect_ok raw_to_int4 && { [ "$(hex "$TMP/out")" = f1 ] && pass raw_to_int4 ||
    fail raw_to_int4 "got $(hex "$TMP/out") (1 -> 0x1, -1.5 trunc -> -1 = 0xf)"; }

# Strings: one per line in raw form.
run cast --to string "$WEIGHTS" -
expect_output cast_to_string "^0\.1$"
run cast --to string "$WEIGHTS" -
expect_output cast_to_string_negative_zero "^-0\.0$"
printf '1.5\nabc\n2\n' >"$TMP/strings.txt"
run cast --from string --to float32 "$TMP/strings.txt" "$TMP/s.npy"
expect_error bad_string_index 1 "(index|element) 1" "abc"
expect_absent bad_string_no_output "$TMP/s.npy"
printf '1.5\n-2\n' >"$TMP/good.txt"
run cast --from string --to float32 "$TMP/good.txt" -
expect_ok string_to_float && { [ "$(hex "$TMP/out")" = 0000c03f000000c0 ] &&
    pass string_to_float || fail string_to_float "got $(hex "$TMP/out")"; }

# Complex to real needs --discard-imag.
printf '\000\000\200\077\000\000\000\100' >"$TMP/c.raw" # 1 + 2i
run cast --from complex64 --to float32 "$TMP/c.raw" "$TMP/real.raw"
expect_error complex_to_real_refused 1 "complex"
expect_absent complex_to_real_no_output "$TMP/real.raw"
run cast --from complex64 --to float32 --discard-imag "$TMP/c.raw" -
expect_ok complex_discard_imag && { [ "$(hex "$TMP/out")" = 0000803f ] &&
    pass complex_discard_imag || fail complex_discard_imag "got $(hex "$TMP/out")"; }

# ---- profiles ---------------------------------------------------------------------------------

run cast --profile onnx:13 --to float8e4m3fn "$WEIGHTS" "$TMP/o13.npy"
expect_error onnx_opset13_refuses_float8 1 "13" "float8e4m3fn|FLOAT8E4M3FN"
expect_absent onnx_opset13_no_output "$TMP/o13.npy"
run cast --profile onnx:13 --to bfloat16 "$WEIGHTS" "$TMP/o13.npy"
expect_ok onnx_opset13_bfloat16 && pass onnx_opset13_bfloat16

run cast --profile pypto --to int8 "$WEIGHTS" "$TMP/p.npy"
expect_error pypto_refuses_pair 1 "float32" "int8"
expect_absent pypto_refuses_pair_no_output "$TMP/p.npy"
printf '\000\000\200\077\000\000\300\277\000\000\200\077\000\000\300\277' >"$TMP/four.raw"
run cast --profile pypto --from float32 --shape 1x1x1x2x2 --to float16 "$TMP/four.raw" "$TMP/p5.raw"
expect_error pypto_refuses_5d 1 "dim|shape|rank"
expect_absent pypto_refuses_5d_no_output "$TMP/p5.raw"
run cast --profile pypto --from float32 --shape 1x1x2x2 --to float16 "$TMP/four.raw" -
expect_ok pypto_4d && { [ "$(hex "$TMP/out")" = 003c00be003c00be ] && pass pypto_4d ||
    fail pypto_4d "got $(hex "$TMP/out")"; }
run cast --profile pypto --cast-mode CAST_ROUND --to int32 "$WEIGHTS" -
expect_ok pypto_cast_mode && pass pypto_cast_mode

# ---- compare ----------------------------------------------------------------------------------

run compare "$WEIGHTS" --to float8e4m3fn,float8e5m2,float4e2m1,bfloat16,int4
expect_output compare_table "448"
expect_ok compare_rows && { rows=$(grep -cE '^ *[0-9]+ ' "$TMP/out"); [ "$rows" -eq 12 ] &&
    pass compare_rows || fail compare_rows "$rows element rows"; }
run compare --hex "$WEIGHTS" --to float8e4m3fn
expect_output compare_hex "0x7e"
run compare "$WEIGHTS" --to float8e4m3fn,float9
expect_error compare_unknown_type 2 "float9"

# ---- onnx-test --------------------------------------------------------------------------------

if [ -d "$CONFORMANCE/onnx/node" ]; then
    run onnx-test --quiet "$CONFORMANCE/onnx/node" "$CONFORMANCE/onnx/node_legacy"
    if [ "$status" -eq 0 ] && grep -qE '^178 passed, 0 failed$' "$TMP/out"; then
        pass onnx_test_conformance
    else
        fail onnx_test_conformance "exit $status: $(tail -5 "$TMP/out" | tr '\n' '|')"
    fi

    # The runner's judgement, on copies of real tests with doctored expectations.
    node=$CONFORMANCE/onnx/node
    legacy=$CONFORMANCE/onnx/node_legacy
    mkdir -p "$TMP/onnx"

    # FLOAT8E8M0 0x00 -> FLOAT stored as 0x003FFFFF: the one accepted e8m0 artefact.
    t=$TMP/onnx/test_doctored_e8m0_artefact
    cp -r "$node/test_cast_e8m0_FLOAT8E8M0_to_FLOAT" "$t"
    set_dir=$t/test_data_set_0
    "$DTCAST" cast --to float32 "$set_dir/input_0.pb" "$TMP/e8.raw"
    shape=$("$DTCAST" compare "$set_dir/input_0.pb" --to float32 | sed -n '1s/.*shape \([^ ]*\) .*/\1/p')
    { printf '\377\377\077\000'; tail -c +5 "$TMP/e8.raw"; } >"$TMP/e8.doctored.raw"
    "$DTCAST" cast --from float32 --shape "$shape" --to float32 "$TMP/e8.doctored.raw" \
        "$set_dir/output_0.pb"
    run onnx-test "$t"
    expect_output onnx_test_e8m0_artefact \
        "^ok +test_doctored_e8m0_artefact \(known artefact: FLOAT8E8M0 0x00"

    # A wrong expected byte is a failure that names the element.
    t=$TMP/onnx/test_doctored_mismatch
    cp -r "$node/test_cast_FLOAT_to_FLOAT8E4M3FN" "$t"
    set_dir=$t/test_data_set_0
    shape=$("$DTCAST" compare "$set_dir/output_0.pb" --to float32 | sed -n '1s/.*shape \([^ ]*\) .*/\1/p')
    "$DTCAST" cast --to float8e4m3fn "$set_dir/output_0.pb" "$TMP/f8.raw"
    byte=$(od -An -j2 -N1 -tu1 "$TMP/f8.raw" | tr -d ' ')
    { head -c 2 "$TMP/f8.raw"; printf "\\$(printf '%03o' $(((byte + 1) % 256)))"; tail -c +4 "$TMP/f8.raw"; } \
        >"$TMP/f8.doctored.raw"
    "$DTCAST" cast --from float8e4m3fn --shape "$shape" --to float8e4m3fn "$TMP/f8.doctored.raw" \
        "$set_dir/output_0.pb"
    run onnx-test "$t"
    if [ "$status" -eq 1 ] && grep -qE '^FAIL test_doctored_mismatch: .*element 2: expected 0x[0-9a-f]{2} got 0x[0-9a-f]{2}' "$TMP/out" &&
        grep -q '^0 passed, 1 failed$' "$TMP/out"; then
        pass onnx_test_reports_mismatch
    else
        fail onnx_test_reports_mismatch "exit $status: $(cat "$TMP/out")"
    fi

    # Number -> string: strings must match exactly, even one that parses to the same float32.
    t=$TMP/onnx/test_doctored_strings
    cp -r "$legacy/test_cast_FLOAT_to_STRING" "$t"
    set_dir=$t/test_data_set_0
    shape=$("$DTCAST" compare "$set_dir/output_0.pb" --to string | sed -n '1s/.*shape \([^ ]*\) .*/\1/p')
    "$DTCAST" cast --to string "$set_dir/output_0.pb" "$TMP/strings.raw"
    sed '3s/^0\.7392636$/0.73926362/' "$TMP/strings.raw" >"$TMP/strings.doctored.raw"
    "$DTCAST" cast --from string --shape "$shape" --to string "$TMP/strings.doctored.raw" \
        "$set_dir/output_0.pb"
    run onnx-test "$t"
    [ "$status" -eq 1 ] && grep -q '^FAIL test_doctored_strings: .*element 2: expected "0.73926362"' "$TMP/out" &&
        pass onnx_test_strings_exact || fail onnx_test_strings_exact "$(cat "$TMP/out")"
    sed '3s/.*/0.75/' "$TMP/strings.raw" >"$TMP/strings.wrong.raw"
    "$DTCAST" cast --from string --shape "$shape" --to string "$TMP/strings.wrong.raw" \
        "$set_dir/output_0.pb"
    run onnx-test "$t"
    [ "$status" -eq 1 ] && grep -q '^FAIL test_doctored_strings: .*element 2: expected "0.75"' "$TMP/out" &&
        pass onnx_test_strings_mismatch || fail onnx_test_strings_mismatch "$(cat "$TMP/out")"
else
    echo "SKIP onnx_test_conformance: no $CONFORMANCE/onnx/node"
fi
run onnx-test "$TMP/no-such-test"
[ "$status" -eq 1 ] && grep -q '^0 passed, 1 failed$' "$TMP/out" && pass onnx_test_missing_dir ||
    fail onnx_test_missing_dir "exit $status: $(cat "$TMP/out")"

echo
if [ "$failures" -ne 0 ]; then
    echo "test_cli.sh: $failures check(s) failed"
    exit 1
fi
exit 0
