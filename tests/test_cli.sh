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
for cmd in cast compare info table types onnx-test onnx-run; do
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

# ---- messages: escaped bytes, suggestions, flags as typed ---------------------------------------

# expect_error_fixed NAME STATUS TEXT [ABSENT]: as expect_error, with TEXT a fixed string that the
# stderr line must hold (and ABSENT one it must not).
expect_error_fixed() {
    local name=$1 want=$2 text=$3 absent=${4:-}
    if [ "$status" -ne "$want" ]; then
        fail "$name" "exit $status, expected $want (stderr: $(head -c 300 "$TMP/err"))"
    elif [ "$(wc -l <"$TMP/err")" -ne 1 ] || ! grep -q '^dtcast: ' "$TMP/err"; then
        fail "$name" "expected one 'dtcast: ...' line on stderr, got: $(head -c 300 "$TMP/err")"
    elif ! grep -qF -- "$text" "$TMP/err"; then
        fail "$name" "stderr lacks '$text': $(cat "$TMP/err")"
    elif [ -n "$absent" ] && grep -qF -- "$absent" "$TMP/err"; then
        fail "$name" "stderr holds '$absent': $(cat "$TMP/err")"
    else
        pass "$name"
    fi
}

# Bytes that are not UTF-8, and control characters, print as \xNN; valid UTF-8 as it is.
run cast --to f16 "$TMP/w$(printf '\377')x.npy" "$TMP/x.npy"
expect_error_fixed escape_file_name 1 "w\\xffx.npy"
LC_ALL=C grep -q "$(printf '\377')" "$TMP/err" && fail escape_file_name_raw "a raw 0xff byte on stderr" ||
    pass escape_file_name_raw
run cast --to "$(printf 'fl\377oat')" "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed escape_type_argument 2 "unknown type 'fl\\xffoat'"
run cast --to f16 "--r$(printf '\377')und=rne" "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed escape_flag 2 "unknown option '--r\\xffund'"
run cast --to "$(printf 'a\033[31mb\nc')" "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed escape_control_characters 2 "'a\\x1b[31mb\\x0ac'"
run cast --to f16 "$TMP/café.npy" "$TMP/x.npy"
expect_error_fixed utf8_passes_through 1 "café.npy" "\\x"
printf '1.5\n2\001\n\303\251\n' >"$TMP/strings.raw"
run compare --from string --to string "$TMP/strings.raw"
expect_ok escape_compare_strings && { grep -qF '"2\x01"' "$TMP/out" && grep -qF '"é"' "$TMP/out" &&
    pass escape_compare_strings || fail escape_compare_strings "$(cat "$TMP/out")"; }
# A tensor name with a control character (JSON \u001b) in the report and in the warning.
header='{"w\u001b[31m":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}}'
{ printf "\\$(printf '%03o' ${#header})\\000\\000\\000\\000\\000\\000\\000%s" "$header"
  printf '\000\000\200\077\312\362\111\161'; } >"$TMP/esc.safetensors" # 1.0, 1e30
run cast --to f16 --report "$TMP/esc.safetensors" "$TMP/esc_out.safetensors"
expect_ok escape_tensor_name_report && { grep -qF 'w\x1b[31m: float32 -> float16' "$TMP/err" &&
    pass escape_tensor_name_report || fail escape_tensor_name_report "$(head -2 "$TMP/err")"; }
run cast --to f16 "$TMP/esc.safetensors" "$TMP/esc_out.safetensors"
expect_ok escape_tensor_name_warning && { grep -qF 'dtcast: warning: w\x1b[31m: 1 finite value' "$TMP/err" &&
    pass escape_tensor_name_warning || fail escape_tensor_name_warning "$(cat "$TMP/err")"; }
# Against Python's UTF-8 decoder (backslashreplace, then C0/DEL/C1 controls as their bytes):
# random mixes of ASCII, valid and invalid sequences (overlong, surrogates, above U+10FFFF, cut).
if command -v python3 >/dev/null 2>&1; then
    python3 - "$DTCAST" >"$TMP/escape.log" 2>&1 <<'PY'
import random, subprocess, sys
rng = random.Random(13)
pieces = [b"a", b"Z", b"~", b"\x01", b"\x1f", b"\x7f", b"\xc3\xa9", b"\xc2\x9b", b"\xc2\xa0",
          b"\xe2\x82\xac", b"\xf0\x9f\x98\x80", b"\xff", b"\xfe", b"\x80", b"\xbf", b"\xc0\xaf",
          b"\xc1\xbf", b"\xe0\x80\xaf", b"\xed\xa0\x80", b"\xed\x9f\xbf", b"\xf4\x90\x80\x80",
          b"\xf4\x8f\xbf\xbf", b"\xf5\x80", b"\xe2\x82", b"\xf0\x9f\x98", b"\xc3", b"\\"]
def expected(raw):
    out = []
    for ch in raw.decode("utf-8", "backslashreplace"):
        if ord(ch) < 0x20 or 0x7f <= ord(ch) < 0xa0:
            out.append("".join("\\x%02x" % b for b in ch.encode("utf-8")))
        else:
            out.append(ch)
    return "".join(out)
bad = 0
for i in range(150):
    raw = b"zq" + b"".join(rng.choice(pieces) for _ in range(rng.randint(1, 12)))
    p = subprocess.run([sys.argv[1], raw], capture_output=True)
    want = ("dtcast: unknown command '%s' (see 'dtcast --help')\n" % expected(raw)).encode()
    if p.returncode != 2 or p.stderr != want:
        bad += 1
        if bad <= 3:
            print("arg %r: got %r, want %r" % (raw, p.stderr, want))
print("%d of 150 differ" % bad)
sys.exit(1 if bad else 0)
PY
    [ $? -eq 0 ] && pass escape_matches_python_utf8 || fail escape_matches_python_utf8 "$(cat "$TMP/escape.log")"
else
    echo "SKIP escape_matches_python_utf8: no python3"
fi

# "did you mean": each kind of name, and none when nothing is close.
run cast --to flaot16 "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed suggest_type 2 "unknown type 'flaot16' (did you mean 'float16'?)"
run cast --to qqqqqqqq "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed suggest_type_none 2 "(see 'dtcast types')" "did you mean"
run info bflaot16
expect_error_fixed suggest_type_info 2 "(did you mean 'bfloat16'?)"
run compare "$WEIGHTS" --to float8e4m3fn,float8e4m3fm
expect_error_fixed suggest_type_compare 2 "(did you mean 'float8e4m3fn'"
run cast --to f16 --round flor "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed suggest_round 2 "unknown rounding mode 'flor' (did you mean 'floor'?)"
run cast --to int32 --profile pypto --cast-mode CAST_FLOR "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed suggest_cast_mode 2 "(did you mean 'CAST_FLOOR'?)"
run cast --to float8e8m0 --profile onnx --round-mode nearst "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed suggest_round_mode 2 "(did you mean 'nearest'?)"
run cast --to f16 --profile onxx:21 "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed suggest_profile 2 "unknown profile 'onxx:21' (did you mean 'onnx:21'?)"
run cast --to f16 --profile pytpo "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed suggest_profile_pypto 2 "(did you mean 'pypto'?)"
run cast --to f16 --overflow satruate "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed suggest_value 2 "(did you mean 'saturate'?)"
run cast --to f16 --roud rne "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed suggest_flag 2 "unknown option '--roud' (did you mean '--round'?)"
run cast --to f16 --external-dta never "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed suggest_flag_cast_only 2 "(did you mean '--external-data'?)"
run cast --to f16 --frobnicate "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed suggest_flag_none 2 "unknown option '--frobnicate'" "did you mean"
run cats --to f16 "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed suggest_command 2 "unknown command 'cats' (did you mean 'cast'?)"
run help compre
expect_error_fixed suggest_command_help 2 "unknown command 'compre' (did you mean 'compare'?)"
run --verison
expect_error_fixed suggest_main_option 2 "unknown option '--verison' (did you mean '--version'?)"
# The type candidates are the library's table: every name that 'dtcast types' lists, with two
# adjacent letters swapped, gets itself suggested.
run types
if expect_ok suggest_every_type; then
    missed=""
    for name in $(awk 'NR > 1 {print $3}' "$TMP/out"); do
        swapped=$(printf '%s' "$name" | sed -E 's/^(.)(.)/\2\1/')
        [ "$swapped" = "$name" ] && continue
        "$DTCAST" info "$swapped" >/dev/null 2>"$TMP/err2" && continue # the swap is a name too
        grep -qF "'$name'" "$TMP/err2" || missed="$missed $name"
    done
    [ -z "$missed" ] && pass suggest_every_type || fail suggest_every_type "no suggestion for:$missed"
fi

# Messages name the flag as the user typed it, never a C field.
run cast -t f16 -r sideways "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed flag_as_typed_round 2 "-r: unknown rounding mode" "--round"
run cast -t flaot16 "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed flag_as_typed_to 2 "-t: unknown type" "--to"
run cast -t f16 -p onnx:99 "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed flag_as_typed_profile 2 "-p: bad ONNX opset" "--profile"
run cast -t f16 -T lots "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed flag_as_typed_threads 2 "-T: 'lots'" "--threads"
run cast -t f16 -p onnx -r trunc "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed flag_as_typed_refusal 2 "-r is not an option of -p onnx:" "--round is"
run compare -n x "$WEIGHTS" -t f16
expect_error_fixed flag_as_typed_limit 2 "-n: 'x'" "--limit"
run cast --to f16 --profile onnx:18 --saturate 0 "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed flag_as_typed_saturate_opset 2 "--saturate 0 needs ONNX opset 19" "'saturate'"
run cast --to float8e8m0 --profile onnx:23 --round-mode up "$WEIGHTS" "$TMP/x.npy"
expect_error_fixed flag_as_typed_round_mode_opset 2 "--round-mode needs ONNX opset 24" "'round_mode'"
printf '\000\000\200\077\000\000\000\100' >"$TMP/c1.raw"
run cast --from complex64 --to float32 "$TMP/c1.raw" -
expect_error_fixed flag_not_field_discard_imag 1 "(give --discard-imag)" "discard_imaginary"

# ---- help and version ---------------------------------------------------------------------------

run --help
expect_ok help_lists_commands && {
    commands=$(sed -n '/^Commands:/,/^$/p' "$TMP/out" | awk 'NF > 1 {print $1}')
    [ -n "$commands" ] && pass help_lists_commands || fail help_lists_commands "no Commands section"; }
# 'dtcast help CMD', 'dtcast CMD --help' and 'dtcast CMD -h': the same text, exit 0.
for cmd in $commands; do
    [ "$cmd" = help ] || [ "$cmd" = version ] && continue
    "$DTCAST" help "$cmd" >"$TMP/h1" 2>&1; s1=$?
    "$DTCAST" "$cmd" --help >"$TMP/h2" 2>&1; s2=$?
    "$DTCAST" "$cmd" -h >"$TMP/h3" 2>&1; s3=$?
    if [ $s1$s2$s3 = 000 ] && cmp -s "$TMP/h1" "$TMP/h2" && cmp -s "$TMP/h1" "$TMP/h3" &&
        grep -q "^usage: dtcast $cmd" "$TMP/h1"; then
        pass "help_same_text_$cmd"
    else
        fail "help_same_text_$cmd" "exit $s1/$s2/$s3; $(diff "$TMP/h1" "$TMP/h2" | head -5)"
    fi
done
"$DTCAST" help >"$TMP/h1"; "$DTCAST" --help >"$TMP/h2"; "$DTCAST" help --help >"$TMP/h3"
cmp -s "$TMP/h1" "$TMP/h2" && cmp -s "$TMP/h1" "$TMP/h3" && pass help_alone_is_main_help ||
    fail help_alone_is_main_help "dtcast help differs from dtcast --help"
# --version: "dtcast X.Y.Z", the library's version as the header and the Makefile give it.
want_version=$(sed -n 's/^#define DTCAST_VERSION_STRING "\(.*\)"$/\1/p' "$ROOT/include/dtcast.h")
make_version=$(sed -n 's/^VERSION := //p' "$ROOT/Makefile")
for flag in --version -V version; do
    run $flag
    if [ "$status" -eq 0 ] && [ "$(cat "$TMP/out")" = "dtcast $want_version" ] &&
        [ "$want_version" = "$make_version" ] && [ ! -s "$TMP/err" ]; then
        pass "version_$flag"
    else
        fail "version_$flag" "printed '$(cat "$TMP/out")', header $want_version, Makefile $make_version"
    fi
done

# ---- the manual page ----------------------------------------------------------------------------

MAN=$ROOT/docs/dtcast.1
# Its text with roff escapes undone enough to find flags: \- is -, fonts dropped.
sed -e 's/\\-/-/g' -e 's/\\f[BIRP]//g' "$MAN" >"$TMP/man.txt"
missing=""
for cmd in $commands; do
    grep -qE "^\.SS \"?dtcast $cmd( |\"|$)" "$TMP/man.txt" || missing="$missing $cmd"
    [ "$cmd" = help ] || [ "$cmd" = version ] && continue
    "$DTCAST" "$cmd" --help >"$TMP/h1"
    # Option lines of the help: "  -t, --to TYPE ...", "      --select GLOB ...".
    for flag in $(grep -oE '^ +(-[A-Za-z], )?--[a-z0-9][a-z0-9-]*' "$TMP/h1" | grep -oE -- '-{1,2}[A-Za-z0-9][a-z0-9-]*'); do
        grep -qE -- "(^|[^a-z0-9-])$flag([^a-z0-9-]|$)" "$TMP/man.txt" || missing="$missing $cmd:$flag"
    done
done
for flag in --help -h --version -V; do
    grep -qE -- "(^|[^a-z0-9-])$flag([^a-z0-9-]|$)" "$TMP/man.txt" || missing="$missing $flag"
done
for section in SYNOPSIS DESCRIPTION FILES ENVIRONMENT "EXIT STATUS" EXAMPLES DTCAST_ISA; do
    grep -q "$section" "$TMP/man.txt" || missing="$missing section:$section"
done
[ -z "$missing" ] && pass man_page_names_every_flag || fail man_page_names_every_flag "missing:$missing"
if command -v groff >/dev/null 2>&1; then
    warnings=$(groff -man -Tutf8 -ww -z "$MAN" 2>&1)
    [ -z "$warnings" ] && pass man_page_renders || fail man_page_renders "$warnings"
else
    echo "SKIP man_page_renders: no groff"
fi

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
# float8e5m3fnu has no sign bit: 1.0 is 0x78, -1.5 NaN (0xFF) as in ml_dtypes, 0 saturating
run_stdin "$TMP/two.raw" cast --from float32 --to float8_e5m3fnu - -
expect_ok e5m3fnu_raw && { [ "$(hex "$TMP/out")" = 78ff ] && pass e5m3fnu_raw ||
    fail e5m3fnu_raw "got $(hex "$TMP/out")"; }
grep -q "no negative values" "$TMP/err" && pass e5m3fnu_warning ||
    fail e5m3fnu_warning "stderr: $(cat "$TMP/err")"
run_stdin "$TMP/two.raw" cast --from float32 --to e5m3fnu --overflow saturate - -
expect_ok e5m3fnu_saturate && { [ "$(hex "$TMP/out")" = 7800 ] && pass e5m3fnu_saturate ||
    fail e5m3fnu_saturate "got $(hex "$TMP/out")"; }
run info float8_e5m3fnu
expect_output e5m3fnu_info "lowest +0 +0x00"
run table float8e5m3fnu
expect_output e5m3fnu_table "^0x80 +10000000 +2\.0 "
run cast --profile onnx --to float8e5m3fnu "$WEIGHTS" "$TMP/x.npy"
expect_error e5m3fnu_onnx 1 "ONNX Cast does not take float8e5m3fnu"
run cast --to float8e5m3fnu "$WEIGHTS" "$TMP/x.safetensors"
expect_error e5m3fnu_safetensors 2 "safetensors cannot hold"
# int1 (-1 and 0, packed 8 per byte): 1.0 wraps to -1, -1.5 truncates to -1 (bits 0 and 1);
# saturating, 1.0 is 0. bcomplex32: bfloat16 real parts, imaginary 0.
run_stdin "$TMP/two.raw" cast --from float32 --to int1 - -
expect_ok int1_raw && { [ "$(hex "$TMP/out")" = 03 ] && pass int1_raw ||
    fail int1_raw "got $(hex "$TMP/out")"; }
run_stdin "$TMP/two.raw" cast --from float32 --to i1 --int-overflow saturate - -
expect_ok int1_saturate && { [ "$(hex "$TMP/out")" = 02 ] && pass int1_saturate ||
    fail int1_saturate "got $(hex "$TMP/out")"; }
run_stdin "$TMP/two.raw" cast --from float32 --to bcomplex32 - -
expect_ok bcomplex32_raw && { [ "$(hex "$TMP/out")" = 803f0000c0bf0000 ] &&
    pass bcomplex32_raw || fail bcomplex32_raw "got $(hex "$TMP/out")"; }
run info int1
expect_output int1_info "min +-1 +0x1"
run info bcomplex32
expect_output bcomplex32_info "each bfloat16"
run cast --profile onnx --to int1 "$WEIGHTS" "$TMP/x.npy"
expect_error int1_onnx 1 "ONNX Cast does not take int1"
run cast --to bcomplex32 "$WEIGHTS" "$TMP/x.safetensors"
expect_error bcomplex32_safetensors 2 "safetensors cannot hold"
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
    if [ "$status" -eq 0 ] && grep -qE '^218 passed, 0 failed, 3 skipped$' "$TMP/out" &&
        grep -qE '^144 undefined elements in 24 tests, not judged' "$TMP/out"; then
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

    # Undefined elements (float -> int4 out of range) are listed, counted and not judged, whatever
    # the data says; a defined element beside them is still judged.
    t=$TMP/onnx/test_doctored_undefined
    cp -r "$node/test_castlike_FLOAT_to_INT4" "$t"
    set_dir=$t/test_data_set_0
    shape=$("$DTCAST" compare "$set_dir/output_0.pb" --to float32 | sed -n '1s/.*shape \([^ ]*\) .*/\1/p')
    "$DTCAST" cast --to int4 "$set_dir/output_0.pb" "$TMP/i4.raw"
    byte=$(od -An -N1 -tu1 "$TMP/i4.raw" | tr -d ' ')
    # element 0 (input -9: undefined) in the low nibble of byte 0, element 1 (-8: defined) above
    { printf "\\$(printf '%03o' $((byte ^ 0x05)))"; tail -c +2 "$TMP/i4.raw"; } >"$TMP/i4.undef.raw"
    "$DTCAST" cast --from int4 --shape "$shape" --to int4 "$TMP/i4.undef.raw" "$set_dir/output_0.pb"
    run onnx-test "$t"
    if [ "$status" -eq 0 ] &&
        grep -qE '^ok +test_doctored_undefined \(9 undefined elements: element 0: input -9.0 \(0xc1100000\) gives 0x7, the data 0x5' "$TMP/out" &&
        grep -q '^9 undefined elements in 1 test, not judged' "$TMP/out"; then
        pass onnx_test_undefined_listed
    else
        fail onnx_test_undefined_listed "exit $status: $(cat "$TMP/out")"
    fi
    { printf "\\$(printf '%03o' $((byte ^ 0x10)))"; tail -c +2 "$TMP/i4.raw"; } >"$TMP/i4.def.raw"
    "$DTCAST" cast --from int4 --shape "$shape" --to int4 "$TMP/i4.def.raw" "$set_dir/output_0.pb"
    run onnx-test "$t"
    [ "$status" -eq 1 ] && grep -qE '^FAIL test_doctored_undefined: element 1: expected 0x[0-9a-f] got 0x8' "$TMP/out" &&
        pass onnx_test_undefined_only_where_undefined ||
        fail onnx_test_undefined_only_where_undefined "exit $status: $(cat "$TMP/out")"

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
