#!/usr/bin/env python3
"""Writes examples/weights.npy: twelve float32 values that show what narrow types do.

Standard library only: the .npy bytes are written by hand (format version 1.0: magic, version,
header length, a Python-dict header padded with spaces to a multiple of 64 bytes, then the
little-endian data).

    0.1      not representable in any binary format
    -1.5     exact almost everywhere
    3.14159  rounds differently per mantissa width
    100      a tie for float8e4m3fn (96 or 104: even wins)
    448      float8e4m3fn's max
    500      beyond float8e4m3fn: NaN, or 448 when saturating
    -0.0     signed zero (fnuz types have none)
    1e-3     subnormal in float8e4m3fn
    7.0      beyond float4e2m1's max (6), exact in float8
    -8.5     a tie in float8e4m3fn, out of range for int4
    0.333    a repeating binary fraction
    65504    float16's max, beyond every float8 but e5m2
"""
import os
import struct

VALUES = [0.1, -1.5, 3.14159, 100.0, 448.0, 500.0, -0.0, 1e-3, 7.0, -8.5, 0.333, 65504.0]


def npy_bytes(values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    # magic (6) + version (2) + header length (2) + header + '\n', padded to 64 bytes.
    unpadded = 10 + len(header) + 1
    header += " " * (-unpadded % 64) + "\n"
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode("latin1")
            + struct.pack("<%df" % len(values), *values))


def main():
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "weights.npy")
    with open(path, "wb") as f:
        f.write(npy_bytes(VALUES))
    print("wrote %s (%d float32 values)" % (path, len(VALUES)))


if __name__ == "__main__":
    main()
