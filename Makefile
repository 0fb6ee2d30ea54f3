# dtcast — build, test, install.
#
#   make            build/libdtcast.a, build/libdtcast.so, build/dtcast
#   make demo       build, then convert the bundled example to five narrow types
#   make test       build, run every test (plain and under ASan+UBSan), print "N passed, N failed"
#   make install    PREFIX=/usr/local (DESTDIR honoured): header, libraries, CLI, pkg-config, CMake
#
# Variables: CC (gcc or clang), BUILD (output folder), SAN=1 (AddressSanitizer + UBSan build).

CC      ?= cc
BUILD   ?= build
PREFIX  ?= /usr/local
LIBDIR  ?= $(PREFIX)/lib
INCDIR  ?= $(PREFIX)/include
BINDIR  ?= $(PREFIX)/bin
PYTHON  ?= python3

VERSION := 1.0.0
SOMAJOR := 1

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wvla
CSTD    := -std=c11 -D_POSIX_C_SOURCE=200809L
OPT     ?= -O2 -g
CFLAGS  ?=
LDFLAGS ?=
ALL_CFLAGS := $(CSTD) $(OPT) $(WARN) -Iinclude -Isrc -Iprograms -fPIC -fvisibility=hidden -pthread $(CFLAGS)
LIBS    := -lm -pthread

ifeq ($(SAN),1)
  ALL_CFLAGS += -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
  LDFLAGS    += -fsanitize=address,undefined
endif

LIB_SRC  := $(sort $(wildcard src/*.c src/*/*.c))
LIB_OBJ  := $(LIB_SRC:%.c=$(BUILD)/obj/%.o)
# The file layer (programs/fileio) belongs to the programs, not to libdtcast: the CLI, the tests
# of the file formats and the fuzz harnesses link it.
FILEIO_SRC := $(sort $(wildcard programs/fileio/*.c))
FILEIO_OBJ := $(FILEIO_SRC:%.c=$(BUILD)/obj/%.o)
CLI_SRC  := $(sort $(wildcard programs/*.c))
CLI_OBJ  := $(CLI_SRC:%.c=$(BUILD)/obj/%.o) $(FILEIO_OBJ)
TEST_SRC := $(sort $(wildcard tests/test_*.c))
TEST_BIN := $(TEST_SRC:tests/%.c=$(BUILD)/tests/%)

BENCH_SRC := $(sort $(wildcard bench/*.c))
BENCH_OBJ := $(BENCH_SRC:%.c=$(BUILD)/obj/%.o)

.PHONY: all lib cli tests demo test test-plain install uninstall clean \
        bench check-long check-valgrind check-tsan fuzz
all: lib cli

lib: $(BUILD)/libdtcast.a $(BUILD)/libdtcast.so
cli: $(BUILD)/dtcast
tests: $(TEST_BIN)

# V=1 shows the full commands.
ifeq ($(V),1)
  Q :=
  say = @true
else
  Q := @
  say = @printf '  %-6s %s\n'
endif

.SECONDARY:

$(BUILD)/obj/%.o: %.c $(wildcard include/*.h src/*.h src/*/*.h programs/*.h programs/*/*.h tests/*.h)
	@mkdir -p $(dir $@)
	$(say) CC $@
	$(Q)$(CC) $(ALL_CFLAGS) -c $< -o $@

# The portable kernels (src/kernels/portable*.c) are plain C written for the auto-vectoriser:
# -O3 vectorises their loops (gcc's -O2 cost model skips most), -fno-trapping-math lets gcc
# if-convert their float selects (they never test floating-point exception flags).
PORTABLE_OPT ?= -O3 -fno-trapping-math
$(BUILD)/obj/src/kernels/portable.o $(BUILD)/obj/src/kernels/portable_%.o \
$(BUILD)/obj/src/kernels/compose.o: ALL_CFLAGS += $(PORTABLE_OPT)
# portable_f64.c converts in a rounding mode it sets: the compiler may not assume the default
$(BUILD)/obj/src/kernels/portable_f64.o: ALL_CFLAGS += -frounding-math

$(BUILD)/libdtcast.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	$(say) AR $@
	$(Q)rm -f $@ && ar rcs $@ $^

$(BUILD)/libdtcast.so: $(LIB_OBJ)
	$(say) LD $@
	$(Q)$(CC) -shared -Wl,-soname,libdtcast.so.$(SOMAJOR) $(LDFLAGS) -o $@ $^ $(LIBS)

$(BUILD)/dtcast: $(CLI_OBJ) $(BUILD)/libdtcast.a
	$(say) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJ) $(BUILD)/libdtcast.a $(LIBS)

$(BUILD)/tests/%: $(BUILD)/obj/tests/%.o $(FILEIO_OBJ) $(BUILD)/libdtcast.a
	@mkdir -p $(dir $@)
	$(say) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(FILEIO_OBJ) $(BUILD)/libdtcast.a $(LIBS)

demo: all
	@echo
	$(BUILD)/dtcast compare examples/weights.npy --to float8e4m3fn,float8e5m2,float4e2m1,bfloat16,int4

# The whole suite: the plain build, then the same C tests and conformance under ASan+UBSan.
test: all tests
	@$(MAKE) --no-print-directory BUILD=build/san SAN=1 OPT="-O1 -g" all tests
	@PYTHON=$(PYTHON) tests/run build build/san

test-plain: all tests
	@PYTHON=$(PYTHON) tests/run build

# Speed: throughput, ratio to memcpy and to numpy / torch (bench/run; --json for tools).
bench: all $(BUILD)/dtcast-bench
	@bench/run $(BUILD) $(BENCH_ARGS)

$(BUILD)/dtcast-bench: $(BENCH_OBJ) $(BUILD)/libdtcast.a
	$(say) LD $@
	$(Q)$(CC) $(LDFLAGS) -o $@ $(BENCH_OBJ) $(BUILD)/libdtcast.a $(LIBS)

# The long sweeps (every float32 value; 10^8 random values per fast path).
check-long: all tests
	@tests/long/run $(BUILD)

# The whole suite under valgrind memcheck, and the threaded paths under ThreadSanitizer.
check-valgrind: all tests
	@tests/run-valgrind $(BUILD)

check-tsan:
	@$(MAKE) --no-print-directory BUILD=build/tsan OPT="-O1 -g" CFLAGS="-fsanitize=thread" \
	    LDFLAGS="-fsanitize=thread" all tests
	@tests/run-tsan build/tsan

# Every fuzz harness for a bounded time (FUZZ_SECONDS each, default 60; clang + libFuzzer).
fuzz:
	@fuzz/run $(FUZZ_SECONDS)

include mk/aarch64.mk

install: all
	install -d $(DESTDIR)$(INCDIR) $(DESTDIR)$(LIBDIR)/pkgconfig $(DESTDIR)$(BINDIR) \
	           $(DESTDIR)$(LIBDIR)/cmake/dtcast
	install -m 644 include/dtcast.h $(DESTDIR)$(INCDIR)/
	install -m 644 $(BUILD)/libdtcast.a $(DESTDIR)$(LIBDIR)/
	install -m 755 $(BUILD)/libdtcast.so $(DESTDIR)$(LIBDIR)/libdtcast.so.$(VERSION)
	ln -sf libdtcast.so.$(VERSION) $(DESTDIR)$(LIBDIR)/libdtcast.so.$(SOMAJOR)
	ln -sf libdtcast.so.$(SOMAJOR) $(DESTDIR)$(LIBDIR)/libdtcast.so
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@LIBDIR@|$(LIBDIR)|g' -e 's|@INCDIR@|$(INCDIR)|g' \
	    -e 's|@VERSION@|$(VERSION)|g' packaging/dtcast.pc.in > $(DESTDIR)$(LIBDIR)/pkgconfig/dtcast.pc
	sed -e 's|@VERSION@|$(VERSION)|g' packaging/dtcastConfigVersion.cmake.in \
	    > $(DESTDIR)$(LIBDIR)/cmake/dtcast/dtcastConfigVersion.cmake
	install -m 644 packaging/dtcastConfig.cmake $(DESTDIR)$(LIBDIR)/cmake/dtcast/
	install -m 755 $(BUILD)/dtcast $(DESTDIR)$(BINDIR)/

uninstall:
	rm -f $(DESTDIR)$(INCDIR)/dtcast.h $(DESTDIR)$(LIBDIR)/libdtcast.* \
	      $(DESTDIR)$(LIBDIR)/pkgconfig/dtcast.pc $(DESTDIR)$(BINDIR)/dtcast
	rm -rf $(DESTDIR)$(LIBDIR)/cmake/dtcast

clean:
	rm -rf build
