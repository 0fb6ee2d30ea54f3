#!/usr/bin/env python3
"""Packed float6 (four elements in three bytes), checked from outside: the C API's float6_packed
option and dtcast_storage_size_opts, `dtcast cast --float6-packed` on raw files, and safetensors
F6_E2M3 / F6_E3M2 tensors, against a model of the bit stream written here with Python's integers
(docs/formats.md, "Memory layout": element i is bits 6i .. 6i+5 of the stream, counted from bit 0
of byte 0; ceil(6n/8) bytes, zero padding bits).

    python3 tests/test_float6_packed.py build/libdtcast.so      (the CLI is build/dtcast beside it)

Values come from an exact decoder of the float6 codes written here (float6 values are float32
values exactly); safetensors files are written by tests/safetensors_ref.py, a plain-Python writer.
"""
import ctypes as ct
import json
import os
import random
import struct
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, 'model'))
sys.path.insert(0, HERE)
import dtlib  # noqa: E402
import safetensors_ref as ref  # noqa: E402
from cli_util import check, failures, runner  # noqa: E402

LIB = sys.argv[1] if len(sys.argv) > 1 else 'build/libdtcast.so'
CLI = os.path.join(os.path.dirname(os.path.abspath(LIB)), 'dtcast')
TMP = tempfile.mkdtemp(prefix='dtcast-f6.')
F32, STRING = 1, 8
TYPES = {'float6e2m3fn': (27, 2, 3, 1, 'F6_E2M3'), 'float6e3m2fn': (28, 3, 2, 3, 'F6_E3M2')}
lib = dtlib.Lib(LIB)
L = lib.L
L.dtcast_storage_size_opts.argtypes = [ct.c_int, ct.c_size_t, ct.POINTER(dtlib.Options),
                                       ct.POINTER(ct.c_size_t), ct.POINTER(dtlib.Error)]
L.dtcast_format_element.argtypes = [ct.c_char_p, ct.c_size_t, ct.c_void_p, ct.c_int, ct.c_size_t,
                                    ct.POINTER(dtlib.Options), ct.POINTER(dtlib.Error)]
L.dtcast_parse_element.argtypes = [ct.c_void_p, ct.c_int, ct.c_size_t, ct.c_char_p,
                                   ct.POINTER(dtlib.Options), ct.POINTER(dtlib.Error)]


# ---- the model -------------------------------------------------------------------------------

def pack(codes):
    """The bit stream as one Python integer, element i at bit 6i, cut into ceil(6n/8) bytes."""
    stream = 0
    for i, c in enumerate(codes):
        stream |= (c & 63) << (6 * i)
    return stream.to_bytes((6 * len(codes) + 7) // 8, 'little')


def unpack(data, n):
    stream = int.from_bytes(data, 'little')
    return [(stream >> (6 * i)) & 63 for i in range(n)]


def value(name, code):
    """The float6 code's value (no Inf, no NaN in either format)."""
    _, eb, mb, bias, _ = TYPES[name]
    sign = -1.0 if code & 32 else 1.0
    e, m = (code >> mb) & ((1 << eb) - 1), code & ((1 << mb) - 1)
    if e == 0:
        return sign * m / (1 << mb) * 2.0 ** (1 - bias)
    return sign * (1 + m / (1 << mb)) * 2.0 ** (e - bias)


def f32_bytes(values):
    return struct.pack('<%df' % len(values), *values)


def opts(packed):
    o = lib.options()
    o.float6_packed = packed
    return o


def sequences():
    """Every code at every position of a group of four, and random runs of every tail length."""
    rng = random.Random(6)
    seqs = [[c for c in range(64) for _ in range(4)], list(range(64)) * 3 + [5],
            list(range(63, -1, -1))]
    seqs += [[rng.randrange(64) for _ in range(n)] for n in list(range(1, 14)) + [1001, 4099]]
    return seqs


# ---- the model against itself and the documented bytes ---------------------------------------

check(pack([1, 2, 3, 4]) == bytes([1 | 2 << 6, (2 >> 2 | 3 << 4) & 255, (3 >> 4 | 4 << 2) & 255]),
      'model: byte0 = e0 | e1<<6, byte1 = e1>>2 | e2<<4, byte2 = e2>>4 | e3<<2')
check(all(unpack(pack(s), len(s)) == s for s in sequences()), 'model: unpack(pack(x)) == x')

# ---- the C API -------------------------------------------------------------------------------

for name, (t, _, _, _, _) in TYPES.items():
    for n in (0, 1, 2, 3, 4, 5, 7, 8, 1000, 1001, 1002, 1003):
        size, err = ct.c_size_t(0), dtlib.Error()
        st = L.dtcast_storage_size_opts(t, n, ct.byref(opts(True)), ct.byref(size), ct.byref(err))
        ok = st == 0 and size.value == (6 * n + 7) // 8
        st = L.dtcast_storage_size_opts(t, n, ct.byref(opts(False)), ct.byref(size),
                                        ct.byref(err))
        ok = ok and st == 0 and size.value == n
        if not ok:
            break
    check(ok, 'storage_size_opts %s: ceil(6n/8) packed, n one per byte' % name,
          'n=%d: %d' % (n, size.value))

    bad = []
    for seq in sequences():
        n = len(seq)
        packed = pack(seq)
        vals = [value(name, c) for c in seq]
        # float32 -> packed float6: the bytes of the model, padding bits zero, nothing beyond
        st, out, msg = lib.convert(t, f32_bytes(vals), F32, n, len(packed) + 2, opts(True),
                                   fill=0xA5)
        if st != 0 or out != packed + b'\xa5\xa5':
            bad.append('float32 -> packed n=%d: %s' % (n, msg or out[:12].hex()))
        # packed float6 -> float32: the values
        st, out, msg = lib.convert(F32, packed, t, n, 4 * n, opts(True))
        if st != 0 or out != f32_bytes(vals):
            bad.append('packed -> float32 n=%d: %s' % (n, msg))
        # packed -> packed (the other float6 type): as through float32, one rounding each
        other = [o for o in TYPES if o != name][0]
        st, want, _ = lib.convert(TYPES[other][0], f32_bytes(vals), F32, n, len(packed),
                                  opts(True))
        st2, out, msg = lib.convert(TYPES[other][0], packed, t, n, len(packed), opts(True))
        if st or st2 or out != want:
            bad.append('packed %s -> packed %s n=%d: %s' % (name, other, n, msg))
        # one per byte is unchanged without the option
        st, out, msg = lib.convert(t, f32_bytes(vals), F32, n, n, opts(False))
        if st != 0 or out != bytes(seq):
            bad.append('float32 -> one per byte n=%d: %s' % (n, msg))
    check(not bad, 'convert %s packed (every code at every position, tails 1..13): == model'
          % name, '; '.join(bad[:3]))

    # single elements and strings, on a packed buffer
    seq = [c for c in range(64) for _ in range(4)][:203]
    buf = ct.create_string_buffer(pack(seq), (6 * len(seq) + 7) // 8)
    bad = []
    for i, c in enumerate(seq):
        text = ct.create_string_buffer(64)
        st = L.dtcast_format_element(text, 64, buf, t, i, ct.byref(opts(True)), None)
        if st != 0 or float(text.value) != value(name, c):
            bad.append('format %d: %s' % (i, text.value))
    target = ct.create_string_buffer(b'\xff' * len(buf.raw), len(buf.raw))
    for i, c in enumerate(seq):
        st = L.dtcast_parse_element(target, t, i, repr(value(name, c)).encode(),
                                    ct.byref(opts(True)), None)
        if st != 0:
            bad.append('parse %d' % i)
    want = bytearray(pack(seq))
    want[-1] |= 0xFF & ~((1 << (6 * len(seq) % 8)) - 1) if 6 * len(seq) % 8 else 0
    if target.raw != bytes(want):  # the padding bits of the last byte stay as they were (ones)
        bad.append('parse_element bytes %s, model %s' % (target.raw[-4:].hex(), want[-4:].hex()))
    st = L.dtcast_parse_element(target, t, 5, b'not a number', ct.byref(opts(True)), None)
    if st == 0 or target.raw != bytes(want):
        bad.append('a bad string changed the buffer or was accepted')
    strs = (ct.c_char_p * len(seq))(*[repr(value(name, c)).encode() for c in seq])
    st, out, msg = lib.convert(t, bytes(ct.cast(strs, ct.POINTER(ct.c_char * (8 * len(seq))))
                                         .contents), STRING, len(seq), len(buf.raw), opts(True))
    if st != 0 or out != pack(seq):
        bad.append('strings -> packed: %s' % msg)
    check(not bad, 'format_element / parse_element / strings %s packed' % name,
          '; '.join(bad[:3]))

# ---- the CLI: raw files ----------------------------------------------------------------------


run = runner(CLI, text=False, timeout=None)


def path(n):
    return os.path.join(TMP, n)


for name in TYPES:
    for n in (8, 7, 1001):
        seq = [(i * 37 + n) % 64 for i in range(n)]
        vals = [value(name, c) for c in seq]
        with open(path('in32.raw'), 'wb') as f:
            f.write(f32_bytes(vals))
        code, _, err = run('cast', '-q', '--from', 'float32', '--to', name, '--float6-packed',
                           path('in32.raw'), path('out.raw'))
        got = open(path('out.raw'), 'rb').read() if code == 0 else b''
        check(code == 0 and got == pack(seq), 'cli float32 -> %s --float6-packed n=%d' % (name, n),
              err or '%s, model %s' % (got[:9].hex(), pack(seq)[:9].hex()))
        shape = [] if n % 4 == 0 else ['--shape', str(n)]
        code, _, err = run('cast', '-q', '--from', name, '--float6-packed', *shape, '--to',
                           'float32', path('out.raw'), path('back32.raw'))
        got = open(path('back32.raw'), 'rb').read() if code == 0 else b''
        check(code == 0 and got == f32_bytes(vals),
              'cli %s --float6-packed -> float32 n=%d' % (name, n), err)
    # without --shape a packed file of B bytes holds the most elements it can: 4 for 3 bytes
    with open(path('three.raw'), 'wb') as f:
        f.write(pack([1, 2, 3, 4]))
    code, out, err = run('cast', '-q', '--from', name, '--float6-packed', '--to', 'float32',
                         path('three.raw'), '-')
    check(code == 0 and out == f32_bytes([value(name, c) for c in (1, 2, 3, 4)]),
          'cli %s --float6-packed 3 bytes -> 4 elements' % name, err)
    code, _, err = run('cast', '-q', '--from', name, '--float6-packed', '--shape', '5', '--to',
                       'float32', path('three.raw'), '-')
    check(code != 0 and 'bytes' in err, 'cli %s --float6-packed --shape 5 on 3 bytes refused'
          % name, err)
    # .npy keeps one element per byte (numpy and ml_dtypes have no packed float6)
    code, _, err = run('cast', '-q', '--from', 'float32', '--to', name, '--float6-packed',
                       path('in32.raw'), path('out.npy'))
    data = open(path('out.npy'), 'rb').read() if code == 0 else b''
    seq = [(i * 37 + 1001) % 64 for i in range(1001)]
    check(code == 0 and data.endswith(bytes(seq)) and b"'|u1'" in data,
          'cli %s .npy output stays one per byte' % name, err)

# ---- safetensors F6 --------------------------------------------------------------------------

for name, (_, _, _, _, dtype) in TYPES.items():
    seq = [(i * 11) % 64 for i in range(48)]
    ref.write(path('w.safetensors'), {'w': (dtype, [4, 12], pack(seq)),
                                      'b': ('F32', [4], f32_bytes([1.0, 2.0, 0.5, -3.0]))})
    code, _, err = run('cast', '-q', '--to', 'float32', path('w.safetensors'), path('o.safetensors'))
    ok = code == 0
    if ok:
        tensors, _ = ref.read(path('o.safetensors'))
        dt, shape, raw = tensors['w']
        ok = dt == 'F32' and shape == [4, 12] and raw == f32_bytes([value(name, c) for c in seq])
    check(ok, 'safetensors %s (written by safetensors_ref) -> F32' % dtype, err)
    code, _, err = run('cast', '-q', '--to', name, path('o.safetensors'), path('p.safetensors'))
    ok = code == 0
    if ok:
        tensors, _ = ref.read(path('p.safetensors'))
        ok = tensors['w'] == (dtype, [4, 12], pack(seq))
    check(ok, 'F32 -> safetensors %s: the bytes of the model' % dtype, err)
    # a tensor whose byte size is not ceil(6n/8): refused with the sizes named
    header = json.dumps({'w': {'dtype': dtype, 'shape': [8], 'data_offsets': [0, 8]}}).encode()
    header += b' ' * (-len(header) % 8)
    with open(path('bad.safetensors'), 'wb') as f:
        f.write(struct.pack('<Q', len(header)) + header + bytes(8))
    code, _, err = run('cast', '-q', '--to', 'float32', path('bad.safetensors'), path('x.npy'))
    check(code != 0 and 'hold 8 bytes' in err and 'need 6' in err,
          'safetensors %s with 8 bytes for 8 elements refused' % dtype, err)

print('%d failed' % failures() if failures() else 'all passed')
sys.exit(1 if failures() else 0)
