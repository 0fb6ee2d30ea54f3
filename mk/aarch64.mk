# aarch64 cross build, its tests run under qemu-user: proves on every CI run that the portable
# code builds and converts bit-exactly without x86 (no intrinsics, unsigned char, another ABI).
#
#   make cross-aarch64   build/aarch64: libdtcast, the CLI and every C test, built by
#                        aarch64-linux-gnu-gcc with the same rules and flags (C11, -O2, -Werror)
#   make test-aarch64    those C tests and the ONNX conformance suite under qemu-aarch64 (tests/run
#                        with TEST_EXEC), the long sweeps sampled by AARCH64_SCALE; a couple of
#                        minutes; ends with "N passed, N failed"
#
# Debian: apt-get install gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user

AARCH64_CC    ?= aarch64-linux-gnu-gcc
AARCH64_QEMU  ?= qemu-aarch64 -L /usr/aarch64-linux-gnu
# DTCAST_TEST_SCALE of test_kernels and test_text_fast (1: every 16-bit code, ~6 min more)
AARCH64_SCALE ?= 0.1

.PHONY: cross-aarch64 test-aarch64

cross-aarch64:
	@$(MAKE) --no-print-directory $(PAR) CC=$(AARCH64_CC) BUILD=build/aarch64 OPT="-O2 -g1" SAN= all tests

test-aarch64: cross-aarch64
	@TEST_EXEC="$(AARCH64_QEMU)" DTCAST_TEST_SCALE=$(AARCH64_SCALE) DTCAST_TEST_JOBS=$(TEST_JOBS) \
	    tests/run build/aarch64
