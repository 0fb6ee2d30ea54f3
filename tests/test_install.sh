#!/usr/bin/env bash
# Installs into scratch prefixes and builds a consumer (tests/install) through pkg-config and
# through CMake's find_package, as a user linking dtcast would, in three layouts:
#   prefix   make install PREFIX=P                     (P/lib, P/include)
#   lib64    make install PREFIX=P LIBDIR=P/lib64 INCDIR=P/include/dtcast-1
#   staged   make install DESTDIR=S PREFIX=/opt/dtcast, the tree then used from S/opt/dtcast:
#            the CMake package is found where it lies, pkg-config through PKG_CONFIG_SYSROOT_DIR
# and checks the library's SONAME (libdtcast.so.1 for 1.x), the version check of the CMake
# package, the installed CLI, and dtcast as a CMake subproject (add_subdirectory, FetchContent).
#
#   tests/test_install.sh BUILD           make install from the Makefile's folder BUILD
#   tests/test_install.sh --cmake DIR     cmake --install of the CMake build folder DIR (the
#                                         prefix and staged layouts)
#
# DTCAST_WRAPPER (e.g. "valgrind -q --error-exitcode=99", as tests/run-valgrind sets it) runs the
# consumers and the installed CLI under a tool.
set -u
mode=make
if [ "${1:-}" = --cmake ]; then
    mode=cmake
    shift
fi
build=${1:-build}
WRAP=${DTCAST_WRAPPER:-}
cd "$(dirname "$0")/.." || exit 2
case $build in /*) ;; *) build=$(pwd)/$build ;; esac
tmp=$(mktemp -d "${TMPDIR:-/tmp}/dtcast-install.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT
# A make or cmake above this one (make test) must not hand its settings to the consumers' builds.
unset MAKEFLAGS MFLAGS MAKELEVEL CMAKE_PREFIX_PATH PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR

version=$(sed -n 's/^VERSION *:= *//p' Makefile)
somajor=$(sed -n 's/^SOMAJOR *:= *//p' Makefile)
failures=0
pass() { echo "PASS $1"; }
fail() {
    echo "FAIL $1: $2"
    failures=$((failures + 1))
}

# soname FILE: the DT_SONAME of a shared library; needed FILE: its DT_NEEDED entries.
soname() { objdump -p "$1" 2>/dev/null | awk '$1 == "SONAME" { print $2 }'; }
needed() { objdump -p "$1" 2>/dev/null | awk '$1 == "NEEDED" { print $2 }'; }

# consumers NAME ROOT LIBDIR [SYSROOT]: the pkg-config (shared and static) and CMake consumers
# against the tree at ROOT whose libraries are in LIBDIR; with SYSROOT, the .pc file names paths
# under / that lie under SYSROOT.
consumers() {
    local name=$1 root=$2 libdir=$3 sysroot=${4:-} log=$tmp/$1
    if command -v pkg-config >/dev/null 2>&1; then
        local pc=(env PKG_CONFIG_PATH="$libdir/pkgconfig" PKG_CONFIG_SYSROOT_DIR="$sysroot" pkg-config)
        if [ "$("${pc[@]}" --modversion dtcast 2>&1)" != "$version" ]; then
            fail "$name.pkg_config_version" "pkg-config --modversion dtcast: $("${pc[@]}" --modversion dtcast 2>&1 | head -n 2)"
        else
            pass "$name.pkg_config_version"
        fi
        # shellcheck disable=SC2046
        if cc tests/install/consumer.c $("${pc[@]}" --cflags --libs dtcast) -Wl,-rpath,"$libdir" \
            -o "$tmp/$name.pc" >"$log.pc.log" 2>&1 && $WRAP "$tmp/$name.pc" >/dev/null 2>>"$log.pc.log"; then
            if needed "$tmp/$name.pc" | grep -qx "libdtcast.so.$somajor"; then
                pass "$name.pkg_config_consumer"
            else
                fail "$name.pkg_config_consumer" "the consumer does not need libdtcast.so.$somajor: $(needed "$tmp/$name.pc" | tr '\n' ' ')"
            fi
        else
            fail "$name.pkg_config_consumer" "$(head -n 5 "$log.pc.log")"
        fi
        # shellcheck disable=SC2046
        if cc tests/install/consumer.c $("${pc[@]}" --cflags dtcast) "$libdir/libdtcast.a" \
            $("${pc[@]}" --libs-only-other --static dtcast) -lm -pthread -o "$tmp/$name.pcs" \
            >"$log.pcs.log" 2>&1 && $WRAP "$tmp/$name.pcs" >/dev/null 2>>"$log.pcs.log"; then
            pass "$name.pkg_config_static_consumer"
        else
            fail "$name.pkg_config_static_consumer" "$(head -n 5 "$log.pcs.log")"
        fi
    else
        echo "SKIP $name.pkg_config_consumer: pkg-config not installed"
    fi

    if command -v cmake >/dev/null 2>&1; then
        if cmake -S tests/install -B "$tmp/$name.cmake" -DCMAKE_PREFIX_PATH="$root" >"$log.cmake.log" 2>&1 &&
            cmake --build "$tmp/$name.cmake" >>"$log.cmake.log" 2>&1 &&
            $WRAP "$tmp/$name.cmake/consumer_shared" >/dev/null 2>>"$log.cmake.log" &&
            $WRAP "$tmp/$name.cmake/consumer_static" >/dev/null 2>>"$log.cmake.log"; then
            pass "$name.cmake_find_package_consumer"
        else
            fail "$name.cmake_find_package_consumer" "$(tail -n 5 "$log.cmake.log")"
        fi
    else
        echo "SKIP $name.cmake_find_package_consumer: cmake not installed"
    fi
}

# layout NAME ROOT LIBDIR INCDIR: the installed files.
layout() {
    local name=$1 root=$2 libdir=$3 incdir=$4 missing=() f
    for f in "$incdir/dtcast.h" "$root/bin/dtcast" "$libdir/libdtcast.a" "$libdir/libdtcast.so" \
        "$libdir/libdtcast.so.$somajor" "$libdir/libdtcast.so.$version" "$libdir/pkgconfig/dtcast.pc" \
        "$libdir/cmake/dtcast/dtcastConfig.cmake" "$libdir/cmake/dtcast/dtcastConfigVersion.cmake" \
        "$root/share/man/man1/dtcast.1"; do
        [ -e "$f" ] || missing+=("${f#"$root"/}")
    done
    if [ ${#missing[@]} -eq 0 ]; then
        pass "$name.install_layout"
    else
        fail "$name.install_layout" "missing: ${missing[*]}"
    fi
    local so
    so=$(soname "$libdir/libdtcast.so.$version")
    if [ "$so" = "libdtcast.so.$somajor" ]; then
        pass "$name.soname"
    else
        fail "$name.soname" "SONAME of libdtcast.so.$version is '$so', not libdtcast.so.$somajor"
    fi
}

if [ "$mode" = make ]; then
    p=$tmp/prefix
    if make -s BUILD="$build" PREFIX="$p" install >"$tmp/install.log" 2>&1; then
        layout prefix "$p" "$p/lib" "$p/include"
        consumers prefix "$p" "$p/lib"
    else
        fail prefix.install "$(tail -n 5 "$tmp/install.log")"
    fi

    p=$tmp/lib64
    if make -s BUILD="$build" PREFIX="$p" LIBDIR="$p/lib64" INCDIR="$p/include/dtcast-$somajor" install \
        >"$tmp/install64.log" 2>&1; then
        layout lib64 "$p" "$p/lib64" "$p/include/dtcast-$somajor"
        consumers lib64 "$p" "$p/lib64"
    else
        fail lib64.install "$(tail -n 5 "$tmp/install64.log")"
    fi

    s=$tmp/stage
    if make -s BUILD="$build" DESTDIR="$s" PREFIX=/opt/dtcast install >"$tmp/staged.log" 2>&1; then
        layout staged "$s/opt/dtcast" "$s/opt/dtcast/lib" "$s/opt/dtcast/include"
        if grep -qx 'prefix=/opt/dtcast' "$s/opt/dtcast/lib/pkgconfig/dtcast.pc"; then
            pass staged.pc_prefix
        else
            fail staged.pc_prefix "dtcast.pc: $(head -n 1 "$s/opt/dtcast/lib/pkgconfig/dtcast.pc")"
        fi
        consumers staged "$s/opt/dtcast" "$s/opt/dtcast/lib" "$s"
    else
        fail staged.install "$(tail -n 5 "$tmp/staged.log")"
    fi
    cli=$tmp/prefix/bin/dtcast
else
    p=$tmp/prefix
    if cmake --install "$build" --prefix "$p" >"$tmp/install.log" 2>&1; then
        libdir=$(dirname "$(find "$p" -name 'libdtcast.a' | head -n 1)")
        layout prefix "$p" "$libdir" "$p/include"
        consumers prefix "$p" "$libdir"
    else
        fail prefix.install "$(tail -n 5 "$tmp/install.log")"
    fi
    s=$tmp/stage
    if DESTDIR=$s cmake --install "$build" --prefix /opt/dtcast >"$tmp/staged.log" 2>&1; then
        libdir=$(dirname "$(find "$s" -name 'libdtcast.a' | head -n 1)")
        layout staged "$s/opt/dtcast" "$libdir" "$s/opt/dtcast/include"
        consumers staged "$s/opt/dtcast" "$libdir" "$s"
    else
        fail staged.install "$(tail -n 5 "$tmp/staged.log")"
    fi
    cli=$tmp/prefix/bin/dtcast
fi

# The version check of the CMake package: 1.0 is accepted, 2.0 (another major) is not.
if command -v cmake >/dev/null 2>&1 && [ -d "$tmp/prefix" ]; then
    mkdir -p "$tmp/want2"
    printf 'cmake_minimum_required(VERSION 3.13)\nproject(want2 C)\nfind_package(dtcast %s REQUIRED)\n' \
        "$((somajor + 1)).0" >"$tmp/want2/CMakeLists.txt"
    if cmake -S "$tmp/want2" -B "$tmp/want2/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" >"$tmp/want2.log" 2>&1; then
        fail cmake_version_check "find_package(dtcast $((somajor + 1)).0) accepted version $version"
    elif grep -q "dtcast" "$tmp/want2.log"; then
        pass cmake_version_check
    else
        fail cmake_version_check "$(tail -n 3 "$tmp/want2.log")"
    fi
fi

# dtcast as a CMake subproject (add_subdirectory, FetchContent): configured beside a consumer that
# sets its own flags; the consumer's compile line has dtcast's include folder and none of dtcast's
# flags, and no test of dtcast is registered. DTCAST_TEST_SUBPROJECT_BUILD=1 also builds the
# library there and runs the consumers (a whole build of the library: minutes).
subproject() {
    local name=$1 how=$2 d=$tmp/$1
    mkdir -p "$d"
    {
        printf 'cmake_minimum_required(VERSION 3.14)\nproject(%s C)\n' "$name"
        printf 'set(CMAKE_C_FLAGS "${CMAKE_C_FLAGS} -DCONSUMER_FLAG")\n'
        printf '%s\n' "$how"
        printf 'add_executable(consumer_shared "%s/tests/install/consumer.c")\n' "$(pwd)"
        printf 'target_link_libraries(consumer_shared PRIVATE dtcast::dtcast)\n'
        printf 'add_executable(consumer_static "%s/tests/install/consumer.c")\n' "$(pwd)"
        printf 'target_link_libraries(consumer_static PRIVATE dtcast::dtcast_static)\n'
        printf 'enable_testing()\n'
    } >"$d/CMakeLists.txt"
    if ! cmake -S "$d" -B "$d/b" -DCMAKE_EXPORT_COMPILE_COMMANDS=ON >"$d.log" 2>&1; then
        fail "cmake_$name" "$(tail -n 5 "$d.log")"
        return
    fi
    local line
    line=$(grep -o '"command": "[^"]*consumer.c' "$d/b/compile_commands.json" | head -n 1)
    if [ -z "$line" ]; then
        fail "cmake_$name" "no compile line of consumer.c in compile_commands.json"
    elif [[ "$line" != *"-I$(pwd)/include"* ]] || [[ "$line" != *-DCONSUMER_FLAG* ]]; then
        fail "cmake_$name" "consumer.c compiled without dtcast's include folder or its own flag: $line"
    elif [[ "$line" =~ -W|-std=|-fvisibility|_POSIX_C_SOURCE ]]; then
        fail "cmake_$name" "dtcast's flags leak to the consumer: $line"
    elif ! (cd "$d/b" && ctest -N 2>&1 | grep -q 'Total Tests: 0'); then
        fail "cmake_$name" "dtcast's tests are registered in the consumer's build"
    elif [ "${DTCAST_TEST_SUBPROJECT_BUILD:-0}" = 1 ] &&
        ! { cmake --build "$d/b" -j"$(nproc)" >>"$d.log" 2>&1 && $WRAP "$d/b/consumer_shared" >/dev/null &&
            $WRAP "$d/b/consumer_static" >/dev/null; }; then
        fail "cmake_$name" "build or run: $(tail -n 5 "$d.log")"
    else
        pass "cmake_$name"
    fi
}
if command -v cmake >/dev/null 2>&1; then
    subproject add_subdirectory "add_subdirectory(\"$(pwd)\" dtcast)"
    subproject fetchcontent "include(FetchContent)
FetchContent_Declare(dtcast SOURCE_DIR \"$(pwd)\")
FetchContent_MakeAvailable(dtcast)"
fi

if $WRAP "$cli" --version >/dev/null 2>"$tmp/cli.log"; then
    pass installed_cli_runs
else
    fail installed_cli_runs "dtcast --version failed: $(head -n 5 "$tmp/cli.log")"
fi
[ "$failures" -eq 0 ]
