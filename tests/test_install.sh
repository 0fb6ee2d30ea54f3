#!/usr/bin/env bash
# Installs into a scratch prefix and builds a consumer through pkg-config and through CMake's
# find_package, as a user linking dtcast would. Usage: tests/test_install.sh BUILD
# DTCAST_WRAPPER (e.g. "valgrind -q --error-exitcode=99", as tests/run-valgrind sets it) runs the
# consumers and the installed CLI under a tool.
set -u
build=${1:-build}
WRAP=${DTCAST_WRAPPER:-}
cd "$(dirname "$0")/.." || exit 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix

pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }

if make -s BUILD="$build" PREFIX="$prefix" install >"$tmp/install.log" 2>&1 &&
    [ -f "$prefix/include/dtcast.h" ] && [ -x "$prefix/bin/dtcast" ] &&
    [ -f "$prefix/lib/libdtcast.a" ] && [ -e "$prefix/lib/libdtcast.so.1" ]; then
    pass install_layout
else
    fail install_layout "$(tail -n 5 "$tmp/install.log")"
fi

if command -v pkg-config >/dev/null 2>&1; then
    export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
    if cc tests/install/consumer.c $(pkg-config --cflags --libs dtcast) -Wl,-rpath,"$prefix/lib" \
        -o "$tmp/consumer_pc" 2>"$tmp/pc.log" && $WRAP "$tmp/consumer_pc" >/dev/null 2>>"$tmp/pc.log"; then
        pass pkg_config_consumer
    else
        fail pkg_config_consumer "$(head -n 5 "$tmp/pc.log")"
    fi
    if cc tests/install/consumer.c $(pkg-config --cflags dtcast) "$prefix/lib/libdtcast.a" \
        $(pkg-config --libs-only-other --static dtcast) -lm -pthread -o "$tmp/consumer_pc_static" \
        2>"$tmp/pcs.log" && $WRAP "$tmp/consumer_pc_static" >/dev/null 2>>"$tmp/pcs.log"; then
        pass pkg_config_static_consumer
    else
        fail pkg_config_static_consumer "$(head -n 5 "$tmp/pcs.log")"
    fi
else
    echo "SKIP pkg_config_consumer: pkg-config not installed"
fi

if command -v cmake >/dev/null 2>&1; then
    if cmake -S tests/install -B "$tmp/cmake" -DCMAKE_PREFIX_PATH="$prefix" >"$tmp/cmake.log" 2>&1 &&
        cmake --build "$tmp/cmake" >>"$tmp/cmake.log" 2>&1 &&
        $WRAP "$tmp/cmake/consumer_shared" >/dev/null 2>>"$tmp/cmake.log" &&
        $WRAP "$tmp/cmake/consumer_static" >/dev/null 2>>"$tmp/cmake.log"; then
        pass cmake_find_package_consumer
    else
        fail cmake_find_package_consumer "$(tail -n 5 "$tmp/cmake.log")"
    fi
else
    echo "SKIP cmake_find_package_consumer: cmake not installed"
fi
if $WRAP "$prefix/bin/dtcast" --version >/dev/null 2>"$tmp/cli.log"; then
    pass installed_cli_runs
else
    fail installed_cli_runs "dtcast --version failed: $(head -n 5 "$tmp/cli.log")"
fi
