#!/usr/bin/env python3
"""ctypes binding of dtcast's public API (include/dtcast.h), for the conformance tests.

The structs below mirror the header field by field; layout_check() compiles a tiny C program
against the header (when a C compiler is present) and compares sizeof/offsetof with ctypes.
"""
import ctypes as ct
import os
import subprocess
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
INCLUDE = os.path.normpath(os.path.join(HERE, '..', '..', 'include'))

ROUND = {'default': 0, 'rne': 1, 'rna': 2, 'floor': 3, 'ceil': 4, 'trunc': 5, 'odd': 6,
         'stochastic': 7}
FOV = {'ieee': 0, 'saturate': 1, 'inf': 2}
IOV = {'wrap': 0, 'saturate': 1}
STATUS = ['OK', 'INVALID_ARGUMENT', 'UNKNOWN_TYPE', 'UNSUPPORTED', 'COMPLEX_TO_REAL',
          'SIZE_OVERFLOW', 'BAD_STRING', 'OUT_OF_MEMORY', 'BAD_SHAPE', 'PROMOTION', 'IO',
          'BAD_FILE']
OK = 0
ERR_COMPLEX_TO_REAL = 4


class Error(ct.Structure):
    _fields_ = [('status', ct.c_int), ('index', ct.c_size_t), ('message', ct.c_char * 512)]


class Options(ct.Structure):
    _fields_ = [('size', ct.c_size_t), ('round', ct.c_int), ('float_overflow', ct.c_int),
                ('int_overflow', ct.c_int), ('threads', ct.c_uint), ('string_style', ct.c_int),
                ('discard_imaginary', ct.c_bool), ('string_to_bool_numeric', ct.c_bool),
                ('float4_nan_as_max', ct.c_bool), ('via_float32', ct.c_bool),
                ('float6_packed', ct.c_bool), ('seed', ct.c_uint64),
                ('element_offset', ct.c_uint64)]


class Info(ct.Structure):
    _fields_ = [('type', ct.c_int), ('name', ct.c_char_p), ('kind', ct.c_int), ('bits', ct.c_int),
                ('exponent_bits', ct.c_int), ('mantissa_bits', ct.c_int), ('bias', ct.c_int),
                ('has_inf', ct.c_bool), ('has_nan', ct.c_bool), ('has_negative_zero', ct.c_bool),
                ('max', ct.c_double), ('lowest', ct.c_double), ('min_normal', ct.c_double),
                ('min_subnormal', ct.c_double), ('epsilon', ct.c_double),
                ('max_bits', ct.c_uint64), ('inf_bits', ct.c_uint64), ('nan_bits', ct.c_uint64),
                ('nan_count', ct.c_int), ('int_min', ct.c_int64), ('int_max', ct.c_uint64)]


def default_path():
    """build/libdtcast.so of the working directory, else of this repository."""
    if os.path.exists('build/libdtcast.so'):
        return 'build/libdtcast.so'
    return os.path.normpath(os.path.join(HERE, '..', '..', 'build', 'libdtcast.so'))


KIND = ['bool', 'unsigned', 'signed', 'float', 'complex', 'string']


class Lib:
    def __init__(self, path):
        self.path = path
        L = self.L = ct.CDLL(os.path.abspath(path))
        L.dtcast_options_init_sized.argtypes = [ct.POINTER(Options), ct.c_size_t]
        L.dtcast_options_init_sized.restype = None
        L.dtcast_convert.argtypes = [ct.c_void_p, ct.c_int, ct.c_void_p, ct.c_int, ct.c_size_t,
                                     ct.POINTER(Options), ct.POINTER(Error)]
        L.dtcast_convert.restype = ct.c_int
        L.dtcast_type_info.argtypes = [ct.c_int, ct.POINTER(Info), ct.POINTER(Error)]
        L.dtcast_type_info.restype = ct.c_int
        L.dtcast_type_name.argtypes = [ct.c_int]
        L.dtcast_type_name.restype = ct.c_char_p
        L.dtcast_type_bits.argtypes = [ct.c_int]
        L.dtcast_type_bits.restype = ct.c_int
        L.dtcast_storage_size.argtypes = [ct.c_int, ct.c_size_t, ct.POINTER(ct.c_size_t),
                                          ct.POINTER(Error)]
        L.dtcast_storage_size.restype = ct.c_int
        L.dtcast_type_list.argtypes = [ct.POINTER(ct.c_int), ct.c_size_t]
        L.dtcast_type_list.restype = ct.c_size_t
        L.dtcast_status_string.argtypes = [ct.c_int]
        L.dtcast_status_string.restype = ct.c_char_p

    def options(self, mode='default', fov='ieee', iov='wrap', discard_imaginary=0,
                nan_as_max=0, threads=1, seed=0, element_offset=0):
        o = Options()
        self.L.dtcast_options_init_sized(ct.byref(o), ct.sizeof(o))
        o.round = ROUND[mode]
        o.float_overflow = FOV[fov]
        o.int_overflow = IOV[iov]
        o.discard_imaginary = bool(discard_imaginary)
        o.float4_nan_as_max = bool(nan_as_max)
        o.threads = threads
        o.seed = seed
        o.element_offset = element_offset
        return o

    def convert(self, dst_type, src_bytes, src_type, count, out_size, opts=None, fill=0xA5):
        """Returns (status, output bytes, error message).  The output buffer is pre-filled with
        `fill` so that untouched / overwritten bytes show."""
        src = np.frombuffer(src_bytes, dtype=np.uint8).copy() if len(src_bytes) else \
            np.zeros(1, np.uint8)
        dst = np.full(max(out_size, 1), fill, dtype=np.uint8)
        err = Error()
        if opts is None:
            opts = self.options()
        st = self.L.dtcast_convert(dst.ctypes.data, dst_type, src.ctypes.data, src_type, count,
                                   ct.byref(opts), ct.byref(err))
        return st, dst[:out_size].tobytes(), err.message.decode(errors='replace')

    def type_info(self, t):
        info = Info()
        st = self.L.dtcast_type_info(t, ct.byref(info), None)
        return st, info

    def storage_size(self, t, n):
        b = ct.c_size_t()
        st = self.L.dtcast_storage_size(t, n, ct.byref(b), None)
        return st, b.value

    def type_list(self):
        arr = (ct.c_int * 256)()
        n = self.L.dtcast_type_list(arr, 256)
        return [arr[i] for i in range(min(n, 256))]


LAYOUT_C = r'''
#include <stdio.h>
#include <stddef.h>
#include "dtcast.h"
#define P(s, f) printf(#s "." #f " %zu\n", offsetof(s, f));
int main(void) {
  printf("dtcast_options %zu\n", sizeof(dtcast_options));
  printf("dtcast_error %zu\n", sizeof(dtcast_error));
  printf("dtcast_info %zu\n", sizeof(dtcast_info));
  P(dtcast_options, size)
  P(dtcast_options, round) P(dtcast_options, float_overflow) P(dtcast_options, int_overflow)
  P(dtcast_options, threads) P(dtcast_options, discard_imaginary) P(dtcast_options, string_style)
  P(dtcast_options, string_to_bool_numeric) P(dtcast_options, float4_nan_as_max)
  P(dtcast_options, via_float32) P(dtcast_options, float6_packed)
  P(dtcast_options, seed) P(dtcast_options, element_offset)
  P(dtcast_error, status) P(dtcast_error, index) P(dtcast_error, message)
  P(dtcast_info, type) P(dtcast_info, name) P(dtcast_info, kind) P(dtcast_info, bits)
  P(dtcast_info, exponent_bits) P(dtcast_info, mantissa_bits) P(dtcast_info, bias)
  P(dtcast_info, has_inf) P(dtcast_info, has_nan) P(dtcast_info, has_negative_zero)
  P(dtcast_info, max) P(dtcast_info, lowest) P(dtcast_info, min_normal)
  P(dtcast_info, min_subnormal) P(dtcast_info, epsilon) P(dtcast_info, max_bits)
  P(dtcast_info, inf_bits) P(dtcast_info, nan_bits) P(dtcast_info, nan_count)
  P(dtcast_info, int_min) P(dtcast_info, int_max)
  printf("enum %zu\n", sizeof(dtcast_type));
  return 0;
}
'''


def layout_check():
    """Returns (ok, message).  ok is None when no C compiler is available."""
    cc = os.environ.get('CC', 'cc')
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, 'l.c')
        exe = os.path.join(d, 'l')
        with open(src, 'w') as fh:
            fh.write(LAYOUT_C)
        try:
            subprocess.run([cc, '-std=c11', '-I', INCLUDE, src, '-o', exe], check=True,
                           capture_output=True)
        except (OSError, subprocess.CalledProcessError) as e:
            return None, 'no C compiler (%s)' % e
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    want = {}
    for line in out.splitlines():
        k, v = line.rsplit(' ', 1)
        want[k] = int(v)
    have = {'dtcast_options': ct.sizeof(Options), 'dtcast_error': ct.sizeof(Error),
            'dtcast_info': ct.sizeof(Info), 'enum': ct.sizeof(ct.c_int)}
    for cls, nm in ((Options, 'dtcast_options'), (Error, 'dtcast_error'), (Info, 'dtcast_info')):
        for f, _ in cls._fields_:
            have['%s.%s' % (nm, f)] = getattr(cls, f).offset
    for k, v in want.items():
        if have.get(k) != v:
            return False, '%s: C %d, ctypes %s' % (k, v, have.get(k))
    return True, 'ok'


if __name__ == '__main__':
    print(layout_check())
