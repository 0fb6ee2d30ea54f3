#!/usr/bin/env bash
# The layering of the sources (docs/files.md, "The file layer as a library"):
#   - nothing in files/, python/, src/ or fuzz/ includes a programs/ header (but
#     fuzz/fuzz_promote_args.c, a fuzzer of the command line's own argument parsing);
#   - files/ never prints nor exits: no printf/fprintf/puts/fputs/perror/exit/abort call, no
#     stderr, no stdout but the flush before writing an output named "-", no cli_ call; and
#     libdtcast_files.a references no printing or exiting symbol (nm: what the compiler kept);
#   - cmd_quantize.c and cmd_dequantize.c share no run of 6 or more identical non-blank lines;
#   - one function writes a safetensors shard and one an index (the only calls of dt_st_build and
#     dt_st_index_build outside their tests and fuzzers), and the glob matcher exists once.
# Prints "PASS name" / "FAIL name: why" per check.
#
#   tests/test_structure.sh [path/to/libdtcast_files.a]     (default: build/libdtcast_files.a)
set -u
lib=${1:-build/libdtcast_files.a}
cd "$(dirname "$0")/.." || exit 2
failures=0
pass() { echo "PASS $1"; }
fail() {
    echo "FAIL $1: $2"
    failures=$((failures + 1))
}
check() { # name, the offending lines (empty: pass)
    if [ -z "$2" ]; then pass "$1"; else fail "$1" "$(printf '%s\n' "$2" | head -n 5 | tr '\n' ';')"; fi
}

# 1. includes of programs/ headers
headers=$(cd programs && ls *.h | tr '\n' '|' | sed 's/|$//; s/\./\\./g')
bad=$(grep -nE "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"(programs/[^\"]*|($headers))\"" \
    $(find files python src fuzz -name '*.c' -o -name '*.h' | grep -v '^fuzz/fuzz_promote_args\.c$' |
      grep -v '/venv/' | sort) 2>/dev/null)
check no_programs_headers "$bad"

# 2. files/ prints nothing and never exits
calls='(^|[^A-Za-z0-9_])(printf|vprintf|fprintf|vfprintf|dprintf|puts|fputs|putchar|fputc|putc|perror|exit|_Exit|_exit|abort)[[:space:]]*\('
check files_no_print_calls "$(grep -nE "$calls" files/*.c files/*.h)"
check files_no_stderr "$(grep -nE '(^|[^A-Za-z0-9_])(stderr|STDERR_FILENO)([^A-Za-z0-9_]|$)' files/*.c files/*.h)"
# stdout passed to a call (fputs(x, stdout), fwrite(..., stdout), setvbuf(stdout, ...))
check files_no_stdout_writes "$(grep -nE '[(,][[:space:]]*stdout[[:space:]]*[),]' files/*.c files/*.h |
    grep -vE 'fflush\(stdout\);')"
check files_no_cli_calls "$(grep -nE '(^|[^A-Za-z0-9_])cli_[a-z_]+[[:space:]]*\(' files/*.c files/*.h)"
if ! command -v nm >/dev/null 2>&1; then
    echo "SKIP files_nm: nm not installed (apt-get install binutils)"
elif [ ! -f "$lib" ]; then
    fail files_nm "$lib missing (make all)"
else
    undefined=$(nm "$lib" 2>/dev/null | awk '$1 == "U" { print $2 } $2 == "U" { print $3 }' | sort -u)
    bad=$(printf '%s\n' "$undefined" | grep -E '^(__)?(printf|vprintf|fprintf|vfprintf|dprintf|puts|fputs|putchar|fputc|putc|perror|exit|_Exit|_exit|abort|stderr)(_chk|_unlocked)?$|^__(v?f?printf|dprintf)_chk$')
    if [ -z "$undefined" ]; then
        fail files_nm "nm $lib lists no undefined symbol (not an archive?)"
    else
        check files_nm "$bad"
    fi
fi

# 3. no run of 6 identical non-blank lines shared by cmd_quantize.c and cmd_dequantize.c
run=$(awk '
    FNR == 1 { f++ }
    /[^[:space:]]/ { if (f == 1) a[++na] = $0; else { b[++nb] = $0; bl[nb] = FNR } }
    END {
        best = 0
        for (i = 1; i <= na; i++)
            for (j = 1; j <= nb; j++)
                if (a[i] == b[j]) {
                    l[i, j] = l[i - 1, j - 1] + 1
                    if (l[i, j] > best) { best = l[i, j]; at = bl[j] }
                }
        if (best >= 6) printf "%d identical lines ending at cmd_dequantize.c:%d\n", best, at
    }' programs/cmd_quantize.c programs/cmd_dequantize.c)
check quantize_dequantize_share_no_run "$run"

# 4. one shard writer, one index writer, one glob matcher
sources=$(find files programs python src -name '*.c' | grep -v '/venv/' | sort)
calls_of() { # the call sites of $1 outside its definition
    grep -nE "(^|[^A-Za-z0-9_])$1[[:space:]]*\(" $sources | grep -vE "^[^:]+:[0-9]+:dtcast_status $1\("
}
n=$(calls_of dt_st_build | wc -l)
[ "$n" -eq 1 ] && pass one_shard_writer || fail one_shard_writer "$n callers of dt_st_build: $(calls_of dt_st_build | cut -d: -f1,2 | tr '\n' ' ')"
n=$(calls_of dt_st_index_build | wc -l)
[ "$n" -eq 1 ] && pass one_index_writer || fail one_index_writer "$n callers of dt_st_index_build: $(calls_of dt_st_index_build | cut -d: -f1,2 | tr '\n' ' ')"
for f in dt_ckpt_write_shard dt_ckpt_write_index; do
    n=$(grep -cE "^dtcast_status $f\(" $sources | awk -F: '{ s += $NF } END { print s + 0 }')
    [ "$n" -eq 1 ] && pass "defined_once.$f" || fail "defined_once.$f" "$n definitions"
done
n=$(grep -nE '(^|[^A-Za-z0-9_])fnmatch[[:space:]]*\(' $sources | wc -l)
[ "$n" -eq 1 ] && pass one_glob_matcher || fail one_glob_matcher "$n calls of fnmatch: $(grep -nE '(^|[^A-Za-z0-9_])fnmatch[[:space:]]*\(' $sources | cut -d: -f1,2 | tr '\n' ' ')"

[ "$failures" -eq 0 ]
