# dtcast — build, test, install. (CMakeLists.txt builds the same library with CMake.)
#
#   make            build/libdtcast.a, build/libdtcast.so, build/dtcast
#   make demo       build, then convert the bundled example to five narrow types
#   make test       build, run every test (plain and under ASan+UBSan), print "N passed, N failed";
#                   both builds and the tests run in parallel (TEST_JOBS, default: the CPUs + 1)
#   make check-long the long sweeps and test_random.py at full size (10^6 values per pair)
#   make check-wheel `pip wheel .`, then the package's API tests with the lowest and the newest
#                   numpy / ml_dtypes it admits, each in a new virtual environment
#   make check-upstream the newest onnx, onnxruntime, ml_dtypes, numpy, torch (unpinned): ONNX's node
#                   tests regenerated, the differentials, one line per difference class
#   make install    PREFIX=/usr/local (DESTDIR honoured; LIBDIR, INCDIR, BINDIR, CMAKEDIR): header,
#                   libraries (libdtcast.so.VERSION, SONAME libdtcast.so.SOMAJOR), CLI,
#                   pkg-config, CMake package
#
# Variables: CC (gcc or clang), BUILD (output folder), SAN=1 (AddressSanitizer + UBSan build).

CC      ?= cc
BUILD   ?= build
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
BINDIR  ?= $(PREFIX)/bin
PYTHON  ?= python3

VERSION := 1.1.0
SOMAJOR := 1

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L
# No fused multiply-adds the source does not ask for: every a * b + c rounds twice, as written
# (gcc's ISO C default; clang fuses within an expression unless told). ggml's block quantizers
# (src/ggml/) reproduce ggml's bytes only so, and every kernel is checked against a reference
# that rounds as written.
CSTD    += -ffp-contract=off
# -g1: line tables (backtraces, perf, sanitizer reports) at half the compile time of -g, whose
# full debug info of the inlined intrinsics doubles the build; OPT="-O2 -g" for a debugger
OPT     ?= -O2 -g1
CFLAGS  ?=
LDFLAGS ?=
ALL_CFLAGS := $(CSTD) $(OPT) $(WARN) -Iinclude -Isrc -I. -fPIC -fvisibility=hidden -pthread $(CFLAGS)
LIBS    := -lm -pthread

ifeq ($(SAN),1)
  SAN_CFLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  LDFLAGS    += -fsanitize=address,undefined
  # The kernels' six rounding modes as one body taking the mode at run time, instead of six
  # with the mode folded in (src/kernels/kernels_tmpl.h; kernels_avx2_cvt.c, portable_narrow.c):
  # the same lines run on the same memory under the sanitizers, and the plain build checks the
  # folded bodies bit for bit. make test: about 60 CPU s less (kernels_avx2w.c 21 -> 6 s,
  # kernels_avx2_cvt.c 20 -> 3 s, portable_narrow.c 11 -> 3 s).
  ALL_CFLAGS += -DDT_KERNEL_RUNTIME_MODES
  # The tree's programs start in half the time (19 ms instead of 36 under ASan: the CLI tests
  # run them hundreds of times): the sanitizer runtimes linked in, no position-independent
  # executable to relocate. gcc's flags (clang links its runtimes statically already).
  ifeq ($(findstring clang,$(CC)),)
    EXE_LDFLAGS := -no-pie -static-libasan -static-libubsan
  endif
endif

LIB_SRC  := $(sort $(wildcard src/*.c src/*/*.c))
# The kernels that take longest to compile first, so that a parallel build does not end on one
# (plain build: portable_narrow 24 s, kernels_avx512 15 s, kernels_avx2 13 s; sanitizer build:
# kernels_avx2_table 23 s, kernels_avx2_int 14 s)
LIB_SLOW := $(wildcard $(addprefix src/kernels/,portable_narrow.c kernels_avx2_table.c \
              kernels_avx512.c kernels_avx2.c kernels_avx2_int.c portable_int_float.c \
              portable_fint.c kernels_avx2w.c kernels_avx2_cvt.c kernels_avx512w.c))
LIB_OBJ  := $(patsubst %.c,$(BUILD)/obj/%.o,$(LIB_SLOW) $(filter-out $(LIB_SLOW),$(LIB_SRC)))
# The file layer (files/): a library of its own, libdtcast_files, beside libdtcast (which does
# no file I/O). The CLI, the Python module, the tests and the fuzz harnesses link it.
FILES_SRC := $(sort $(wildcard files/*.c))
FILES_OBJ := $(FILES_SRC:%.c=$(BUILD)/obj/%.o)
FILES_LIB := $(BUILD)/libdtcast_files.a
CLI_SRC  := $(sort $(wildcard programs/*.c))
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o)
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

# The fuzz harnesses with fuzz/replay.c as their main (no libFuzzer): make test builds them in
# both trees and replays their seeds, so that none stops compiling unseen (make fuzz runs them).
FUZZ_SRC := $(sort $(wildcard fuzz/fuzz_*.c))
FUZZ_BIN := $(FUZZ_SRC:fuzz/%.c=$(BUILD)/fuzz-replay/%)
CLI_LIB_OBJ := $(filter-out $(BUILD)/obj/programs/dtcast.o,$(CLI_OBJ))

BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/obj/%.o)

.PHONY: all lib cli tests demo test test-plain test-builds test-build-plain test-build-san \
        test-venv python-module check-wheel check-upstream \
        install uninstall clean bench check-long check-valgrind check-tsan fuzz
all: lib cli

lib: $(BUILD)/libdtcast.a $(BUILD)/libdtcast.so
cli: $(BUILD)/dtcast
tests: $(TEST_BIN) $(FUZZ_BIN)

# V=1 shows the full commands.
ifeq ($(V),1)
  Q :=
  say = @true
else
  Q := @
  say = @printf '  %-6s %s\n'
endif

.SECONDARY:

# -MMD -MP: each object's header dependencies, written beside it as a .d file (included below).
$(BUILD)/obj/%.o: %.c
	@mkdir -p $(dir $@)
	$(say) CC $@
	$(Q)$(CC) $(ALL_CFLAGS) $(SAN_CFLAGS) -MMD -MP -c $< -o $@

# The portable kernels (src/kernels/portable*.c) are plain C written for the auto-vectoriser (and
# src/ggml/api.c's per-chunk loops: the non-finite scan, the rounding to odd):
# -O3 vectorises their loops (gcc's -O2 cost model skips most), -fno-trapping-math lets gcc
# if-convert their float selects (they never test floating-point exception flags).
PORTABLE_OPT ?= -O3 -fno-trapping-math
$(BUILD)/obj/src/kernels/portable.o $(BUILD)/obj/src/kernels/portable_%.o \
$(BUILD)/obj/src/kernels/compose.o $(BUILD)/obj/files/value_scan.o \
$(BUILD)/obj/src/ggml/api.o: ALL_CFLAGS += $(PORTABLE_OPT)
# The sanitizer tree compiles them at its own -O1: the instrumented code checks the same C, and
# -O3's vectoriser only costs that build time there (make test: 20 CPU s)
ifeq ($(SAN),1)
  PORTABLE_OPT := -fno-trapping-math
endif
# portable_f64.c converts in a rounding mode it sets: the compiler may not assume the default
$(BUILD)/obj/src/kernels/portable_f64.o: ALL_CFLAGS += -frounding-math
# The sanitizer build's x86 kernel files (thousands of always-inlined template functions): -Og,
# the same ASan and UBSan checks (instrumentation does not depend on the level) in a tenth less
# of that build's compile time, its tests as fast (make test: 195 -> 178 CPU s)
ifeq ($(SAN),1)
$(BUILD)/obj/src/kernels/kernels_avx%.o: ALL_CFLAGS += -Og
# The sanitizer build's vector-intrinsic files (every x86 kernel file, the fused quantization
# loops): ASan and UBSan as everywhere, without ASan's use-after-scope poisoning of each block's
# locals. Their locals are vector temporaries whose address never leaves the block (nothing
# for that check to find), and poisoning the thousands of inlined intrinsics' scopes was a
# third of that build's compile time (make test: about 45 CPU s).
SIMD_OBJ := $(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard src/kernels/*avx*.c src/quant/*avx*.c \
                                                      src/ggml/*avx*.c))
$(SIMD_OBJ): SAN_CFLAGS += -fno-sanitize-address-use-after-scope
# The AVX-512 kernel files on a machine without AVX-512 (F, DQ, BW, VL, VBMI: what
# src/kernels/cpu.c asks for): their code never runs here (the registry skips their entries, the
# tests say SKIP), so instrumenting it checks nothing. They are compiled as in the plain build
# (make test on an AVX2 machine: about 20 CPU s less); on a machine that runs them they are
# instrumented like every other file.
HOST_FLAGS  := $(shell grep -m1 '^flags' /proc/cpuinfo 2>/dev/null)
AVX512_NEED := avx512f avx512dq avx512bw avx512vl avx512vbmi
HOST_AVX512 := $(if $(filter-out $(HOST_FLAGS),$(AVX512_NEED)),0,1)
ifneq ($(HOST_AVX512),1)
$(patsubst %.c,$(BUILD)/obj/%.o,$(wildcard src/kernels/*avx512*.c src/ggml/*avx512*.c)): SAN_CFLAGS :=
endif
endif

-include $(patsubst %.o,%.d,$(LIB_OBJ) $(FILES_OBJ) $(CLI_OBJ) $(BENCH_OBJ) $(TEST_SRC:%.c=$(BUILD)/obj/%.o) \
           $(FUZZ_SRC:%.c=$(BUILD)/obj/%.o))

$(BUILD)/libdtcast.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(say) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/libdtcast.so: $(LIB_OBJ)
	$(say) LD $@
	$(Q)$(CC) -shared -Wl,-soname,libdtcast.so.$(SOMAJOR) $(LDFLAGS) -o $@ $^ $(LIBS)

$(FILES_LIB): $(FILES_OBJ)
	@mkdir -p $(dir $@)
	$(say) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/dtcast: $(CLI_OBJ) $(FILES_LIB) $(BUILD)/libdtcast.a
	$(say) LD $@
	$(Q)$(CC) $(LDFLAGS) $(EXE_LDFLAGS) -o $@ $(CLI_OBJ) $(FILES_LIB) $(BUILD)/libdtcast.a $(LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(FILES_LIB) $(BUILD)/libdtcast.a
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) $(LDFLAGS) $(EXE_LDFLAGS) -o $@ $< $(FILES_LIB) $(BUILD)/libdtcast.a $(LIBS)

$(BUILD)/fuzz-replay/%: $(BUILD)/obj/fuzz/%.o $(BUILD)/obj/fuzz/replay.o $(CLI_LIB_OBJ) $(FILES_LIB) \
                        $(BUILD)/libdtcast.a
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) $(LDFLAGS) $(EXE_LDFLAGS) -o $@ $< $(BUILD)/obj/fuzz/replay.o $(CLI_LIB_OBJ) $(FILES_LIB) \
	    $(BUILD)/libdtcast.a $(LIBS)

demo: all
	@echo
	$(BUILD)/dtcast compare examples/weights.npy --to float8e4m3fn,float8e5m2,float4e2m1,bfloat16,int4

# The whole suite: the plain build and the ASan+UBSan build (SAN_BUILD) side by side, then every
# test, TEST_JOBS at a time (tests/run); the long sweeps are make check-long.
# One job more than the CPUs: the jobs wait on page faults and files often enough that the
# extra one fills the gaps (make test on 2 vCPUs: 6 min 33 / 6 min 38 s with 2 jobs, 6 min 24 s
# with 3, the same tree)
TEST_JOBS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 2) + 1 )))
SAN_BUILD ?= $(BUILD)/san
# -g1 (line tables) is what the sanitizers' reports need, at half the compile time of -g
SAN_OPT   ?= -O1 -g1
# -jTEST_JOBS, unless make already runs in parallel (make -jN test)
PAR = $(if $(filter -j%,$(MAKEFLAGS)),,-j$(TEST_JOBS))

test: test-builds
	@$(MAKE) --no-print-directory python-module
	@PYTHON=$(PYTHON) PYVENV=$(PYVENV) DTCAST_TEST_JOBS=$(TEST_JOBS) tests/run $(BUILD) $(SAN_BUILD)

test-plain:
	@$(MAKE) --no-print-directory $(PAR) test-venv all tests
	@$(MAKE) --no-print-directory python-module
	@PYTHON=$(PYTHON) PYVENV=$(PYVENV) DTCAST_TEST_JOBS=$(TEST_JOBS) tests/run $(BUILD)

# The virtual environment first: its pip install runs beside the compiles (started last, it
# ran alone on one core after them: make test 20 s longer).
test-builds:
	@$(MAKE) --no-print-directory $(PAR) test-venv test-build-plain test-build-san
# The virtual environment of the Python package's tests (tests/python/requirements.txt), made
# once and reused while the requirements stay the same.
test-venv:
	@tests/python/venv $(PYVENV)

# The Python package as make test uses it: python/dtcast's files (linked, not copied), the
# extension module built from this build's objects with its flags, and the CLI in _bin, as
# `pip install .` lays them out.
PYVENV  ?= .venv
PYMOD   := $(BUILD)/python/dtcast
python-module: $(PYMOD)/_core.abi3.so
	@ln -sf $(addprefix $(CURDIR)/,$(wildcard python/dtcast/*.py python/dtcast/*.pyi python/dtcast/py.typed)) $(PYMOD)/
	@ln -sf $(CURDIR)/$(BUILD)/dtcast $(PYMOD)/_bin/dtcast
PYEXT_SRC := $(wildcard python/ext/*.c)
$(PYMOD)/_core.abi3.so: $(PYEXT_SRC) $(wildcard python/ext/*.h) $(FILES_LIB) $(BUILD)/libdtcast.a $(BUILD)/dtcast
	@mkdir -p $(PYMOD)/_bin
	$(say) PY $@
	$(Q)$(CC) $(ALL_CFLAGS) -I"$$($(PYVENV)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["include"])')" \
	    -shared $(LDFLAGS) -o $@ $(PYEXT_SRC) $(FILES_LIB) $(BUILD)/libdtcast.a $(LIBS)
test-build-plain:
	@$(MAKE) --no-print-directory all tests
test-build-san:
	@$(MAKE) --no-print-directory BUILD=$(SAN_BUILD) SAN=1 OPT="$(SAN_OPT)" all tests

# The package as `pip install .` builds it, in a new virtual environment (tests/python/test_wheel.sh).
check-wheel:
	@tests/python/test_wheel.sh

# The newest releases of onnx, onnxruntime, ml_dtypes, numpy (and torch) in an unpinned virtual
# environment of its own: ONNX's node tests regenerated by onnx's generator, and the ml_dtypes and
# torch differentials, one line per difference class (tests/upstream/run; needs PyPI).
check-upstream:
	@$(MAKE) --no-print-directory $(PAR) all test-venv
	@$(MAKE) --no-print-directory python-module
	@tests/upstream/run $(BUILD)

# files/onnx_schemas.inc (files/onnx_schema.h's table) anew from the test venv's pinned onnx.defs.
.PHONY: onnx-schemas
onnx-schemas: test-venv
	$(PYVENV)/bin/python files/onnx_schemas.py -o files/onnx_schemas.inc

# files/onnx_kernels.inc (the runtimes' kernels: --runtime) anew from the venv's pinned onnxruntime.
.PHONY: onnx-kernels
onnx-kernels: test-venv
	$(PYVENV)/bin/python files/onnx_kernels.py -o files/onnx_kernels.inc

# Speed: throughput, ratio to memcpy and to numpy / torch (bench/run; --json for tools).
bench: all $(BUILD)/dtcast-bench
	@bench/run $(BUILD) $(BENCH_ARGS)

$(BUILD)/dtcast-bench: $(BENCH_OBJ) $(BUILD)/libdtcast.a
	$(say) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $(BENCH_OBJ) $(BUILD)/libdtcast.a $(LIBS)

# The long sweeps (every float32 value; 10^8 random values per fast path; test_random.py at
# 10^6 values per pair).
check-long:
	@$(MAKE) --no-print-directory $(PAR) all tests test-venv
	@$(MAKE) --no-print-directory python-module
	@PYTHON=$(PYTHON) PYVENV=$(PYVENV) tests/long/run $(BUILD)

# The whole suite under valgrind memcheck, and the threaded paths under ThreadSanitizer.
check-valgrind: all tests
	@tests/run-valgrind $(BUILD)

check-tsan:
	@$(MAKE) --no-print-directory $(PAR) BUILD=build/tsan OPT="-O1 -g" CFLAGS="-fsanitize=thread" \
	    LDFLAGS="-fsanitize=thread" all tests
	@tests/run-tsan build/tsan

# Every fuzz harness for a bounded time (FUZZ_SECONDS each, default 60; clang + libFuzzer).
fuzz:
	@fuzz/run $(FUZZ_SECONDS)

include mk/aarch64.mk

# The CMake package: CMAKEDIR, which finds the library and the header by their paths relative to
# it (the installed tree may move as a whole). Under a prefix, CMake looks for packages in
# lib/cmake/, lib/<arch>/cmake/ and share/cmake/ on every system, in lib64/cmake/ only on some
# (not Debian): with CMAKEDIR elsewhere, PREFIX/share/cmake/dtcast holds a package that forwards
# to it, so that CMAKE_PREFIX_PATH=PREFIX finds it for any LIBDIR.
CMAKEDIR ?= $(LIBDIR)/cmake/dtcast
MANDIR  ?= $(PREFIX)/share/man
CMAKE_FORWARD = $(if $(filter $(PREFIX)/lib/cmake/dtcast $(PREFIX)/lib/%/cmake/dtcast \
                  $(PREFIX)/share/cmake/dtcast,$(CMAKEDIR)),,$(PREFIX)/share/cmake/dtcast)
# relpath FROM,TO: the path of TO relative to the folder FROM (TO when it cannot be computed)
relpath = $(or $(shell realpath -m -s --relative-to='$(1)' '$(2)' 2>/dev/null),$(2))
SIZEOF_VOID_P = $(shell echo __SIZEOF_POINTER__ | $(CC) -E -P - 2>/dev/null | tail -n 1)
# The @-names of packaging/*.in (CMakeLists.txt fills in the same for cmake --install).
PKG_SUBST = -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCDIR@|$(INCDIR)|g' \
            -e 's|@VERSION@|$(VERSION)|g' -e 's|@SOMAJOR@|$(SOMAJOR)|g' \
            -e 's|@LIBDIR_FROM_CMAKEDIR@|$(call relpath,$(CMAKEDIR),$(LIBDIR))|g' \
            -e 's|@INCDIR_FROM_CMAKEDIR@|$(call relpath,$(CMAKEDIR),$(INCDIR))|g' \
            -e 's|@SIZEOF_VOID_P@|$(SIZEOF_VOID_P)|g'

install: all
	install -d $(DESTDIR)$(INCDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(BINDIR) $(DESTDIR)$(CMAKEDIR) \
	    $(DESTDIR)$(MANDIR)/man1
	install -m 644 docs/dtcast.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 644 include/dtcast.h $(DESTDIR)$(INCDIR)/
	install -m 644 $(BUILD)/libdtcast.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(BUILD)/libdtcast.so $(DESTDIR)$(LIBDIR)/libdtcast.so.$(VERSION)
	ln -sf libdtcast.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libdtcast.so.$(SOMAJOR)
	ln -sf libdtcast.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libdtcast.so
	sed $(PKG_SUBST) packaging/dtcast.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/dtcast.pc
	sed $(PKG_SUBST) packaging/dtcastConfig.cmake.in > $(DESTDIR)$(CMAKEDIR)/dtcastConfig.cmake
	sed $(PKG_SUBST) packaging/dtcastConfigVersion.cmake.in > $(DESTDIR)$(CMAKEDIR)/dtcastConfigVersion.cmake
ifneq ($(CMAKE_FORWARD),)
	install -d $(DESTDIR)$(CMAKE_FORWARD)
	for f in dtcastConfig dtcastConfigVersion; do \
	    sed -e 's|@FORWARD_TO@|$(call relpath,$(CMAKE_FORWARD),$(CMAKEDIR))/'$$f'.cmake|g' \
	        packaging/dtcastForward.cmake.in > $(DESTDIR)$(CMAKE_FORWARD)/$$f.cmake || exit 1; \
	done
endif
	install -m 755 $(BUILD)/dtcast $(DESTDIR)$(BINDIR)/

uninstall:
	rm -f $(DESTDIR)$(INCDIR)/dtcast.h $(DESTDIR)$(LIBDIR)/libdtcast.* \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/dtcast.pc $(DESTDIR)$(BINDIR)/dtcast \
	      $(DESTDIR)$(MANDIR)/man1/dtcast.1
	rm -rf $(DESTDIR)$(CMAKEDIR) $(if $(CMAKE_FORWARD),$(DESTDIR)$(CMAKE_FORWARD))

clean:
	rm -rf build
