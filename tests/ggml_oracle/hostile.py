#!/usr/bin/env python3
"""The GGUF reader's verdicts against ggml's (make check-long): damaged GGUF files, made by
mutating valid files that gguf-py's GGUFWriter writes, each read by

  * ggml:   gguf_init_from_file(path, {no_alloc=true, ctx=NULL}) (libggml-base.so,
            tests/ggml_oracle/build.sh): the header, as llama.cpp's loaders read it first; and
            with {no_alloc=false, ctx=&c}, which also reads the data blob (run where the blob is
            at most 64 MiB; beyond, the verdict follows from the file's size: the read fails)
  * dtcast: build/tests/test_gguf --dump path (exit 0: accepted; 1: refused with one line)

  hostile.py [--lib LIB] [--build BUILD] [--keep DIR] [--jobs N] [--seed S]

The mutations: every truncation of the header and some of the data; every header field set to
edge values of its width (0, 1, -1, 2^30, 2^31, 2^32, 2^63, 2^64-1, the value +-1, ...);
random byte changes; and rebuilt files with one defect: versions, counts, empty / duplicate /
non-UTF-8 / over-long keys and names, bool bytes, nested and over-long arrays and strings,
general.alignment's type and value (with and without the layout that follows it), n_dims, dims
(0, 2^63, overflowing products, rows that are not whole blocks), removed and unknown types,
offsets (shifted, misaligned, overlapping, swapped, past the end), the data (short, no last
padding, trailing bytes); then random combinations of those. Big-endian files too, which dtcast
reads (docs/gguf.md, "Byte order") and ggml refuses on a little-endian machine.

Verdicts are compared: where ggml accepts and dtcast refuses, dtcast's message must name one of
its documented stricter rules (STRICTER below, docs/gguf.md "What the reader refuses"); where
dtcast accepts and ggml refuses, it is a dtcast bug unless documented (big-endian files). Known
classes of disagreement are named (classify(): a key "general.alignment\0...", which ggml's
strcmp-based gguf_find_key takes for general.alignment) and fail until dtcast decides. Against
ggml's loading read, the files that end inside the padding after the last tensor are counted
apart (ggml's loading read needs that padding; its header read and llama.cpp's model loader do
not, nor does dtcast). Prints PASS/FAIL lines and the counts; the disagreeing files are kept in
DIR (default BUILD/ggml-oracle/hostile/) with a list.txt of verdicts and messages.
"""

import argparse
import collections
import concurrent.futures
import os
import random
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import ggml_cases as cases  # noqa: E402

# ggml's type table: code -> (block, bytes); the removed codes are absent
GGML_TYPES = {0: (1, 4), 1: (1, 2), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8),
              30: (1, 2)}
GGML_TYPES.update({t[1]: (t[2], t[3]) for t in cases.TYPES})

# dtcast's rules that ggml's header reader (no_alloc, ctx NULL) does not have: a refusal of a
# file ggml accepts must match one of these (docs/gguf.md, "What the reader refuses")
STRICTER = [
    (r"a bool is 0 or 1", "a bool byte other than 0 or 1 (ggml reads any non-zero byte as true)"),
    (r"key '.*' is not UTF-8", "a key that is not UTF-8 (ggml does not check)"),
    (r"a tensor with an empty name", "an empty tensor name (ggml allows it)"),
    (r"the name is not UTF-8", "a tensor name that is not UTF-8 (ggml does not check)"),
    (r"key '.*' holds a NUL byte", "a key holding a NUL byte (ggml compares keys with strcmp: "
     "'general.alignment\\0x' would be general.alignment to it)"),
    (r"the name holds a NUL byte", "a tensor name holding a NUL byte (ggml's ggml_set_name "
     "stops at it)"),
    (r"dimension \d+ is 0 \(each must be at least 1\)", "a dim of 0 (ggml allows empty tensors)"),
    (r"run past the end of the file", "tensor data past the end of the file (ggml's header read "
     "does not look at the data; its loading read refuses it)"),
    (r"blocks of \d+ bytes overflow 64 bits", "a byte count of 2^63 or more (ggml: 2^64)"),
    (r"the padded size overflows 64 bits", "a padded byte count past 2^64"),
]
# and the ones dtcast has beyond ggml's loading read (no_alloc=false)
STRICTER_LOAD = STRICTER[:7] + STRICTER[8:]


def explain(msg, rules):
    for pat, why in rules:
        if re.search(pat, msg):
            return why
    return None


# ---- the GGUF layout: parse (with every field's place) and write back --------------------------

VSIZE = {0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8}


class Parsed:
    pass


def parse(b):
    """A valid little- or big-endian file's structure, and its header fields as
    (offset, width, label) -- so that serialize(parse(b)) == b"""
    p = Parsed()
    big = struct.unpack_from("<I", b, 4)[0] & 0xFFFF == 0
    e = ">" if big else "<"
    p.e = e
    pos = 0
    fields = []

    def rd(fmt, label):
        nonlocal pos
        v = struct.unpack_from(e + fmt, b, pos)[0]
        fields.append((pos, struct.calcsize(fmt), label))
        pos += struct.calcsize(fmt)
        return v

    def rstr(label):
        nonlocal pos
        n = rd("Q", label + ".len")
        s = b[pos:pos + n]
        fields.append((pos, n, label + ".bytes"))
        pos += n
        return s

    pos = 4
    fields.append((0, 4, "magic"))
    p.version = rd("I", "version")
    nt = rd("Q", "n_tensors")
    nkv = rd("Q", "n_kv")
    p.kv = []
    p.alignment = 32
    for i in range(nkv):
        kv = {"key": rstr(f"kv{i}.key")}
        t = rd("I", f"kv{i}.type")
        kv["type"] = t
        start = pos
        if t == 9:
            kv["sub"] = rd("I", f"kv{i}.atype")
            kv["count"] = rd("Q", f"kv{i}.count")
            vstart = pos
            for j in range(kv["count"]):
                if kv["sub"] == 8:
                    rstr(f"kv{i}.s{j}")
                else:
                    fields.append((pos, VSIZE[kv["sub"]], f"kv{i}.e{j}"))
                    pos += VSIZE[kv["sub"]]
            kv["payload"] = b[vstart:pos]
        elif t == 8:
            rstr(f"kv{i}.str")
            kv["payload"] = b[start:pos]
        else:
            fields.append((pos, VSIZE[t], f"kv{i}.value"))
            pos += VSIZE[t]
            kv["payload"] = b[start:pos]
        if kv["key"] == b"general.alignment" and t == 4:
            p.alignment = struct.unpack(e + "I", kv["payload"])[0]
        p.kv.append(kv)
    p.tensors = []
    for i in range(nt):
        ti = {"name": rstr(f"t{i}.name")}
        nd = rd("I", f"t{i}.n_dims")
        ti["dims"] = [rd("Q", f"t{i}.dim{j}") for j in range(nd)]
        ti["type"] = rd("I", f"t{i}.type")
        ti["offset"] = rd("Q", f"t{i}.offset")
        p.tensors.append(ti)
    p.header_end = pos
    a = p.alignment
    p.data_start = (pos + a - 1) // a * a if nt else pos
    fields.append((pos, p.data_start - pos, "padding"))
    p.data = b[p.data_start:]
    for i, ti in enumerate(p.tensors):
        ti["bytes"] = b[p.data_start + ti["offset"]:p.data_start + ti["offset"] + nbytes(ti)]
    p.fields = fields
    return p


def nbytes(ti):
    blk, size = GGML_TYPES.get(ti["type"], (1, 1))
    n = 1
    for d in ti["dims"]:
        n *= d
    return n // blk * size


def serialize(p, nt=None, nkv=None, pad_align=None, relayout=False, data=None, pad_data=True):
    """The bytes of p; relayout: the offsets and the data laid out again for the alignment (the
    declared one, or pad_align), each tensor's bytes kept (cut or zero-filled to its size)"""
    e = p.e
    out = bytearray(b"GGUF")
    out += struct.pack(e + "IQQ", p.version, len(p.tensors) if nt is None else nt,
                       len(p.kv) if nkv is None else nkv)
    for kv in p.kv:
        out += struct.pack(e + "Q", len(kv["key"])) + kv["key"] + struct.pack(e + "I", kv["type"])
        if kv["type"] == 9:
            out += struct.pack(e + "IQ", kv["sub"], kv["count"])
        out += kv["payload"]
    a = pad_align or p.alignment or 1
    blob = bytearray()
    for ti in p.tensors:
        if relayout:
            ti["offset"] = len(blob)
            n = nbytes(ti)
            blob += (ti.get("bytes", b"") + bytes(n))[:n] if n < (1 << 24) else b""
            blob += bytes(-len(blob) % a)
    for ti in p.tensors:
        out += struct.pack(e + "Q", len(ti["name"])) + ti["name"]
        out += struct.pack(e + "I", len(ti["dims"]))
        for d in ti["dims"]:
            out += struct.pack(e + "Q", d & (2**64 - 1))
        out += struct.pack(e + "IQ", ti["type"] & 0xFFFFFFFF, ti["offset"] & (2**64 - 1))
    if p.tensors or relayout:
        out += bytes(-len(out) % a)
    out += (blob if relayout else p.data) if data is None else data
    if not pad_data and relayout and p.tensors:
        out = out[:len(out) - (-nbytes(p.tensors[-1]) % a)]
    return bytes(out)


def clone(p):
    q = Parsed()
    q.__dict__.update(p.__dict__)
    q.kv = [dict(k) for k in p.kv]
    q.tensors = [dict(t, dims=list(t["dims"])) for t in p.tensors]
    return q


# ---- the valid files ---------------------------------------------------------------------------

def base_files(tmp):
    """[(name, bytes)] of files GGUFWriter writes (and the reader must accept)"""
    from gguf import GGMLQuantizationType as Q, GGUFEndian, GGUFValueType as V, GGUFWriter

    rng = np.random.default_rng(7)
    meta = [("general.name", "hostile", V.STRING, None), ("t.u8", 200, V.UINT8, None),
            ("t.i8", -5, V.INT8, None), ("t.u16", 65535, V.UINT16, None),
            ("t.i16", -300, V.INT16, None), ("t.u32", 7, V.UINT32, None),
            ("t.i32", -7, V.INT32, None), ("t.f32", 0.5, V.FLOAT32, None),
            ("t.bool", True, V.BOOL, None), ("t.bool0", False, V.BOOL, None),
            ("t.u64", 2**40, V.UINT64, None), ("t.i64", -2**40, V.INT64, None),
            ("t.f64", 0.25, V.FLOAT64, None), ("t.str", "héllo", V.STRING, None),
            ("t.ai32", [1, -2, 3], V.ARRAY, V.INT32),
            ("t.astr", ["a", "", "bc"], V.ARRAY, V.STRING),
            ("t.abool", [True, False], V.ARRAY, V.BOOL), ("t.af32", [1.5], V.ARRAY, V.FLOAT32)]

    def q(qt, rows, cols):
        blk, size = GGML_TYPES[int(qt)]
        return rng.integers(0, 256, (rows, cols // blk * size), dtype=np.uint8), qt

    plain = [("w.f32", rng.standard_normal((3, 4)).astype(np.float32), None),
             ("w.f16", rng.standard_normal(8).astype(np.float16), None),
             ("w.i32", np.arange(2, dtype=np.int32), None)]
    quant = [("w.q8_0", *q(Q.Q8_0, 2, 32)), ("w.q4_K", *q(Q.Q4_K, 1, 256)),
             ("w.mxfp4", *q(Q.MXFP4, 1, 64))]
    quant2 = [("b.q2_K", *q(Q.Q2_K, 1, 256)), ("b.iq4_nl", *q(Q.IQ4_NL, 3, 32)),
              ("b.nvfp4", *q(Q.NVFP4, 1, 64)), ("b.q1_0", *q(Q.Q1_0, 1, 128)),
              ("b.tq2_0", *q(Q.TQ2_0, 1, 256)), ("b.iq1_m", *q(Q.IQ1_M, 1, 256)),
              ("b.q5_1", *q(Q.Q5_1, 2, 32))]
    specs = {
        "kv_tensors": (meta, plain + quant, None, GGUFEndian.LITTLE),
        "align64": (meta[:3], quant2, 64, GGUFEndian.LITTLE),
        "kv_only": (meta, [], None, GGUFEndian.LITTLE),
        "tensors_only": ([], plain[:1] + quant[:1], None, GGUFEndian.LITTLE),
        "align8_4d": (meta[:2],
                      [("w.4d", rng.standard_normal((2, 1, 3, 2)).astype(np.float32), None),
                       ("w.f16b", rng.standard_normal(5).astype(np.float16), None)],
                      8, GGUFEndian.LITTLE),
        "align1": (meta[13:16], plain[1:] + quant[:1], 1, GGUFEndian.LITTLE),
        "big_endian": (meta, plain + quant, None, GGUFEndian.BIG),
    }
    out = []
    for name, (md, tensors, align, endian) in specs.items():
        path = os.path.join(tmp, name + ".gguf")
        w = GGUFWriter(path, "llama", endianess=endian)
        if align is not None:
            w.add_custom_alignment(align)
        for key, val, t, sub in md:
            w.add_key_value(key, val, t, sub_type=sub)
        for tname, a, raw in tensors:
            w.add_tensor(tname, a, raw_dtype=raw)
        w.write_header_to_file()
        w.write_kv_data_to_file()
        w.write_tensors_to_file()
        w.close()
        with open(path, "rb") as f:
            out.append((name, f.read()))
    return out


# ---- the mutations -----------------------------------------------------------------------------

def edge_values(width, v):
    top = 8 * width
    vals = {0, 1, 2, 3, 4, 7, 8, 9, 12, 13, 31, 32, 42, 43, 63, 64, 255, 2**16 - 1, 2**30,
            2**30 + 1, 2**31 - 1, 2**31, 2**32 - 1, 2**32, 2**62, 2**63 - 1, 2**63, 2**64 - 1,
            v + 1, v - 1, v * 2, v + 32, v ^ (1 << (top - 1)), v + 2**32}
    return sorted(x for x in vals if 0 <= x < 2**top and x != v)


def put_int(b, off, width, v, e="<"):
    fmt = {1: "B", 2: "H", 4: "I", 8: "Q"}[width]
    b[off:off + width] = struct.pack(e + fmt, v)


def get_int(b, off, width, e="<"):
    fmt = {1: "B", 2: "H", 4: "I", 8: "Q"}[width]
    return struct.unpack_from(e + fmt, b, off)[0]


def mutations(name, b, rng):
    """[(label, bytes)] of the damaged files of one valid file"""
    p = parse(b)
    assert serialize(p) == b, f"{name}: the parser does not round-trip GGUFWriter's file"
    out = []
    add = lambda label, data: out.append((f"{name}:{label}", bytes(data)))  # noqa: E731
    big = p.e == ">"
    # 1. truncations: every length inside the header, then some in the data
    for n in range(0, min(len(b), p.data_start + 1)):
        add(f"truncate {n}", b[:n])
    for n in sorted(set(rng.randrange(p.data_start, len(b)) for _ in range(40)) | {len(b) - 1}):
        if n > p.data_start:
            add(f"truncate {n}", b[:n])
    # 2. every header field at edge values (strings' bytes: changed characters instead)
    for off, width, label in p.fields:
        if label in ("magic", "padding") or width == 0:
            continue
        if width in (1, 2, 4, 8) and not label.endswith(".bytes"):
            v = get_int(b, off, width, p.e)
            vals = edge_values(width, v)
            if big:  # fewer: the big-endian file is there for the byte order, not each value
                vals = rng.sample(vals, min(4, len(vals)))
            for x in vals:
                m = bytearray(b)
                put_int(m, off, width, x, p.e)
                add(f"{label}={x}", m)
        else:
            for x in (0xFF, 0x00, 0x80, 0xC0, ord("."), 0xED):
                m = bytearray(b)
                m[off + rng.randrange(width)] = x
                add(f"{label} byte={x:#x}", m)
    if big:
        for _ in range(100):
            m = bytearray(b)
            m[rng.randrange(4, p.header_end)] = rng.randrange(256)
            add("random byte", m)
        return out
    # magic and padding
    for bad in (b"GGUf", b"FUGG", b"\0\0\0\0", b"GGML"):
        add(f"magic={bad!r}", bad + b[4:])
    if p.data_start > p.header_end:
        m = bytearray(b)
        m[p.header_end] = 0xAB
        add("padding byte", m)  # neither reader checks padding
    # 3. random byte changes in the header (1 to 4 bytes)
    for _ in range(250):
        m = bytearray(b)
        for _ in range(rng.randint(1, 4)):
            m[rng.randrange(4, p.header_end)] = rng.randrange(256)
        add("random bytes", m)
    # 4. rebuilt files with one defect
    for label, q, kw in semantic(p, rng):
        add(label, serialize(q, **kw))
    # 5. random combinations
    sem = list(semantic(p, rng))
    for _ in range(150):
        picks = rng.sample(sem, 2)
        q = clone(p)
        kw = {}
        labels = []
        for label, qq, kwk in picks:
            # re-apply: semantic() gives whole modified copies; combine the kv and tensor lists
            labels.append(label)
            if qq.kv != p.kv:
                q.kv = [dict(k) for k in qq.kv]
            if qq.tensors != p.tensors:
                q.tensors = [dict(t, dims=list(t["dims"])) for t in qq.tensors]
            if qq.version != p.version:
                q.version = qq.version
            kw.update(kwk)
        add("combo " + " + ".join(labels), serialize(q, **kw))
    return out


def semantic(p, rng):
    """(label, modified copy, serialize() arguments): one defect each"""
    def C():
        return clone(p)
    for v in (0, 1, 2, 4, 0x00030000, 0x03000000, 0xFFFFFFFF):
        q = C()
        q.version = v
        yield f"version {v}", q, {}
    yield "n_tensors + 1", C(), {"nt": len(p.tensors) + 1}
    yield "n_kv + 1", C(), {"nkv": len(p.kv) + 1}
    if p.tensors:
        yield "n_tensors - 1", C(), {"nt": len(p.tensors) - 1}
    if p.kv:
        yield "n_kv - 1", C(), {"nkv": len(p.kv) - 1}
    yield "n_kv 2^60", C(), {"nkv": 2**60}
    yield "n_tensors 2^63", C(), {"nt": 2**63}
    # keys
    for i, kv in enumerate(p.kv):
        k = kv["key"]
        for label, key in (("empty", b""), ("non-UTF-8 0xff", k[:1] + b"\xff" + k[2:]),
                           ("overlong NUL", k + b"\xc0\x80"), ("surrogate", k + b"\xed\xa0\x80"),
                           ("cut UTF-8", kv["key"] + b"\xc3"), ("NUL inside", kv["key"] + b"\0x"),
                           ("64 KiB", b"k" * 65536)):
            q = C()
            q.kv[i]["key"] = key
            yield f"kv{i} key {label}", q, {}
        if i:
            q = C()
            q.kv[i]["key"] = p.kv[i - 1]["key"]
            yield f"kv{i} key duplicate", q, {}
        if kv["type"] == 7:
            for x in (2, 0xFF, 0x80):
                q = C()
                q.kv[i]["payload"] = bytes([x])
                yield f"kv{i} bool {x}", q, {}
        if kv["type"] == 9 and kv["sub"] == 7:
            q = C()
            q.kv[i]["payload"] = b"\x01\x03"
            yield f"kv{i} bool array 3", q, {}
        if kv["type"] == 8:
            q = C()
            q.kv[i]["payload"] = struct.pack("<Q", 2**30 + 1) + b"x"
            yield f"kv{i} string 2^30+1", q, {}
            q = C()
            q.kv[i]["payload"] = struct.pack("<Q", 2**30) + b"x"
            yield f"kv{i} string 2^30 (short)", q, {}
            q = C()
            q.kv[i]["payload"] = struct.pack("<Q", 3) + b"\xff\xfe\xfd"
            yield f"kv{i} string value non-UTF-8", q, {}
        if kv["type"] == 9:
            for cnt in (2**30 + 1, 2**30, 2**61, kv["count"] + 1):
                q = C()
                q.kv[i]["count"] = cnt
                yield f"kv{i} array count {cnt}", q, {}
            q = C()
            q.kv[i].update(sub=9, count=0, payload=b"")
            yield f"kv{i} array of arrays (empty)", q, {}
            q = C()
            q.kv[i].update(sub=9, count=1, payload=struct.pack("<IQ", 4, 1) + b"\1\0\0\0")
            yield f"kv{i} array of arrays", q, {}
            for st in (13, 255):
                q = C()
                q.kv[i].update(sub=st)
                yield f"kv{i} array type {st}", q, {}
        for t in (13, 2**31, 9):
            q = C()
            q.kv[i]["type"] = t
            if t == 9:
                q.kv[i]["sub"] = 4
                q.kv[i]["count"] = 0
            yield f"kv{i} type {t}", q, {}
    # general.alignment
    ai = next((i for i, k in enumerate(p.kv) if k["key"] == b"general.alignment"), None)
    for v in (0, 1, 2, 3, 4, 8, 16, 24, 31, 33, 48, 64, 128, 4096, 2**31, 2**32 - 1):
        for relay in (False, True):
            q = C()
            kvv = {"key": b"general.alignment", "type": 4, "payload": struct.pack("<I", v)}
            if ai is None:
                q.kv.append(kvv)
            else:
                q.kv[ai] = kvv
            q.alignment = v
            ok_pow2 = v and not v & (v - 1)
            if relay and not (ok_pow2 and v <= 4096):
                continue
            yield (f"alignment {v}{' laid out' if relay else ''}", q,
                   {"relayout": True} if relay else {"pad_align": p.alignment})
    for t, payload in ((5, struct.pack("<i", 32)), (0, b"\x20"), (10, struct.pack("<Q", 32)),
                       (6, struct.pack("<f", 32.0)), (8, struct.pack("<Q", 2) + b"32"),
                       (2, struct.pack("<H", 32))):
        q = C()
        kvv = {"key": b"general.alignment", "type": t, "payload": payload}
        if ai is None:
            q.kv.append(kvv)
        else:
            q.kv[ai] = kvv
        yield f"alignment of type {t}", q, {"pad_align": p.alignment}
    if ai is not None:
        q = C()
        q.kv.append(dict(p.kv[ai]))
        yield "alignment twice", q, {}
    q = C()
    kvv = {"key": b"general.alignment", "type": 9, "sub": 4, "count": 1,
           "payload": struct.pack("<I", p.alignment)}
    if ai is None:
        q.kv.append(kvv)
    else:
        q.kv[ai] = kvv
    yield "alignment as an array of one uint32", q, {}
    # a key with a NUL inside: ggml finds keys with strcmp (gguf_find_key), so to ggml
    # "general.alignment\0..." is general.alignment; the file laid out as if it were not
    for suffix in (b"\0", b"\0x"):
        for t, payload in ((4, struct.pack("<I", 64)), (4, struct.pack("<I", 8)),
                           (4, struct.pack("<I", 0)), (4, struct.pack("<I", 3)),
                           (0, b"\x40"), (8, struct.pack("<Q", 2) + b"64")):
            q = C()
            q.kv = [k for k in q.kv if k["key"] != b"general.alignment"]
            q.kv.append({"key": b"general.alignment" + suffix, "type": t, "payload": payload})
            q.alignment = 32
            v = struct.unpack("<I", payload)[0] if t == 4 else payload
            yield f"key 'general.alignment{suffix!r}' ({t}, {v!r}), laid out for 32", q, \
                {"relayout": True}
    # tensor infos
    for i, t in enumerate(p.tensors):
        for label, nm in (("empty", b""), ("63 bytes", b"n" * 63), ("64 bytes", b"n" * 64),
                          ("non-UTF-8", t["name"] + b"\xff"), ("overlong", b"\xc0\xae" + t["name"]),
                          ("NUL", t["name"] + b"\0")):
            q = C()
            q.tensors[i]["name"] = nm
            yield f"t{i} name {label}", q, {}
        if i:
            q = C()
            q.tensors[i]["name"] = p.tensors[i - 1]["name"]
            yield f"t{i} name duplicate", q, {}
        td = t["dims"]
        for dims in ([], [1], td + [1], td + [1] * (5 - len(td)), [0] + td[1:], td[:1] + [0],
                     [2**63] + td[1:], [2**63 - 1], [2**32, 2**32], [2**62, 4], [2**31] * 4,
                     [td[0] + 1] + td[1:], [td[0] * 2] + td[1:], [td[0] // 2] + td[1:]):
            if len(dims) > 4 and len(dims) != 5:
                continue
            for relay in (False, True):
                q = C()
                q.tensors[i]["dims"] = dims
                if relay:
                    blk = GGML_TYPES[t["type"]][0]
                    if (not dims or any(d <= 0 or d > 2**20 for d in dims) or dims[0] % blk
                            or len(dims) > 4):
                        continue
                yield f"t{i} dims {dims}{' laid out' if relay else ''}", q, {"relayout": relay}
        for ty in (4, 5, 31, 32, 33, 36, 37, 38, 43, 44, 2**31, 2**32 - 1, 0, 1, 8, 12, 41, 42, 9):
            if ty == t["type"]:
                continue
            for relay in (False, True):
                if relay and ty not in GGML_TYPES:
                    continue
                q = C()
                q.tensors[i]["type"] = ty
                yield f"t{i} type {ty}{' laid out' if relay else ''}", q, {"relayout": relay}
        a = p.alignment or 1
        for off in (t["offset"] + 1, t["offset"] - 1, t["offset"] + a, t["offset"] - a, 0,
                    2**63, 2**64 - 1, len(p.data), t["offset"] + 2 * a):
            if off < 0 or off == t["offset"]:
                continue
            q = C()
            q.tensors[i]["offset"] = off
            yield f"t{i} offset {off}", q, {}
    if len(p.tensors) >= 2:
        q = C()
        q.tensors[0]["offset"] = p.tensors[1]["offset"]
        q.tensors[1]["offset"] = p.tensors[0]["offset"]
        yield "offsets swapped", q, {}
        q = C()
        q.tensors[1]["offset"] = p.tensors[0]["offset"]
        yield "offsets overlap", q, {}
        q = C()
        q.tensors.reverse()
        yield "infos reversed, offsets kept", q, {}
        q = C()
        q.tensors.reverse()
        yield "infos reversed, laid out", q, {"relayout": True}
    # the data
    if p.tensors:
        yield "no padding after the last tensor", C(), {"relayout": True, "pad_data": False}
        yield "trailing bytes", C(), {"data": p.data + b"\x55" * 77}
        yield "data 1 byte short", C(), {"data": p.data[:-1]}
        yield "no data", C(), {"data": b""}
        last = p.tensors[-1]
        cut = last["offset"] + max(1, nbytes(last) // 2)
        yield "data ends inside the last tensor", C(), {"data": p.data[:cut]}
    yield "trailing garbage", C(), {"data": p.data + bytes(rng.randrange(256) for _ in range(33))}


# ---- verdicts ----------------------------------------------------------------------------------

WORKER = r"""
import os, sys
sys.path.insert(0, sys.argv[2])
import ggmllib
g = ggmllib.Ggml(sys.argv[1])
LIMIT = 64 << 20
for line in sys.stdin:
    path = line.rstrip("\n")
    a = g.gguf_accepts(path)
    end = -1
    if a:
        off, size = g.gguf_data_size(path)
        end = off + size
        # the loading read allocates and reads the padded data: beyond LIMIT, its verdict is
        # the file's size (the read fails), without the allocation
        b = g.gguf_accepts(path, load=True) if size <= LIMIT else end <= os.path.getsize(path)
    else:
        b = False
    sys.stdout.write(f"{int(a)} {int(b)} {end}\n")
    sys.stdout.flush()
"""


class GgmlWorker:
    """ggml's verdicts in a child process (ggml may abort on a hostile file: the child is then
    started again and the file counted as a crash)"""

    def __init__(self, lib):
        self.lib = lib
        self.p = None

    def start(self):
        self.p = subprocess.Popen([sys.executable, "-c", WORKER, self.lib, HERE],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, text=True)

    def verdict(self, path):
        if self.p is None:
            self.start()
        try:
            self.p.stdin.write(path + "\n")
            self.p.stdin.flush()
            line = self.p.stdout.readline()
        except BrokenPipeError:
            line = ""
        if not line:
            self.p.wait()
            self.p = None
            return "crash", "crash", -1
        a, b, end = line.split()
        return a == "1", b == "1", int(end)

    def close(self):
        if self.p:
            self.p.stdin.close()
            self.p.wait()


def dtcast_verdict(test_gguf, path):
    try:
        r = subprocess.run([test_gguf, "--dump", path], capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "timeout", ""
    if r.returncode < 0:
        return "crash", f"signal {-r.returncode}"
    if r.returncode not in (0, 1):
        return "crash", f"exit {r.returncode}: {r.stderr.decode('utf-8', 'replace').strip()}"
    return r.returncode == 0, r.stderr.decode("utf-8", "replace").strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lib", default=None)
    ap.add_argument("--build", default=os.path.join(REPO, "build"))
    ap.add_argument("--keep", default=None)
    ap.add_argument("--jobs", type=int, default=(os.cpu_count() or 2) + 1)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    import ggmllib
    lib = a.lib or ggmllib.default_path()
    test_gguf = os.path.join(a.build, "tests", "test_gguf")
    for f, what in ((lib, "tests/ggml_oracle/build.sh"), (test_gguf, "make tests")):
        if not os.path.exists(f):
            print(f"FAIL hostile: {f} is missing ({what})")
            return 1
    keep = a.keep or os.path.join(a.build, "ggml-oracle", "hostile")
    rng = random.Random(a.seed)
    tmp = tempfile.mkdtemp(prefix="gguf-hostile-")
    try:
        # a copy of the reader: one program for every file, even if the build relinks it meanwhile
        for attempt in range(20):
            try:
                shutil.copy2(test_gguf, os.path.join(tmp, "test_gguf"))
                subprocess.run([os.path.join(tmp, "test_gguf"), "--dump", os.devnull],
                               capture_output=True, timeout=60)
                break
            except OSError:
                time.sleep(1)
        else:
            print(f"FAIL hostile: cannot run a copy of {test_gguf}")
            return 1
        test_gguf = os.path.join(tmp, "test_gguf")
        files = []
        for name, b in base_files(tmp):
            files.append((f"{name}:valid", b))
            files.extend(mutations(name, b, rng))
        paths = []
        for i, (label, data) in enumerate(files):
            path = os.path.join(tmp, f"{i:06d}.gguf")
            with open(path, "wb") as f:
                f.write(data)
            paths.append(path)
        worker = GgmlWorker(lib)
        gv = [worker.verdict(p) for p in paths]
        worker.close()
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            dv = list(ex.map(lambda p: dtcast_verdict(test_gguf, p), paths))
        return report(files, paths, gv, dv, keep)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


NUL_ALIGNMENT = ("a key 'general.alignment' followed by a NUL (and maybe more bytes): ggml finds "
                 "keys with strcmp (gguf_find_key), so to ggml it is general.alignment (its type "
                 "and value checked and used); to dtcast it is another key")
END_IN_PADDING = ("the file ends inside the padding after the last tensor: ggml's loading read "
                  "(no_alloc=false) reads the padded data size; its header read, llama.cpp's model "
                  "loader (offs + nbytes <= file size) and dtcast do not need that padding")


def classify(data):
    """the named class of a known disagreement, or None"""
    i = data.find(b"general.alignment\0")
    if i >= 8 and struct.unpack_from("<Q", data, i - 8)[0] > 17:
        return NUL_ALIGNMENT
    return None


def report(files, paths, gv, dv, keep):
    counts = collections.Counter()
    why = collections.Counter()
    why_load = collections.Counter()
    bugs = collections.OrderedDict()   # class -> [(label, path, note)]: the readers disagree
    unexplained = []                   # ggml accepts, dtcast refuses by no documented rule
    load_info = collections.Counter()
    crashes = []
    for (label, data), path, (ga, gl, gend), (da, msg) in zip(files, paths, gv, dv):
        big = (data[:4] == b"GGUF" and len(data) >= 8
               and struct.unpack_from("<I", data, 4)[0] & 0xFFFF == 0)
        if da in ("crash", "timeout"):
            crashes.append((label, path, f"dtcast {da}: {msg}"))
            continue
        if ga == "crash":
            crashes.append((label, path, "ggml crashed (aborted)"))
            continue
        if label.endswith(":valid") and not da:
            unexplained.append((label, path, f"dtcast refuses a valid GGUFWriter file: {msg}"))
        counts["files"] += 1
        verb = {True: "accepts", False: "refuses"}
        counts[f"ggml {verb[bool(ga)]}, dtcast {verb[bool(da)]}"] += 1
        known = classify(data)
        # 1. ggml's header read {no_alloc=true, ctx=NULL}
        if ga and not da:
            w = explain(msg, STRICTER)
            if w:
                why[w] += 1
            elif known:
                bugs.setdefault(known, []).append(
                    (label, path, "ggml accepts, dtcast refuses: " + msg))
            else:
                unexplained.append((label, path, msg))
        elif da and not ga:
            if big:
                counts["big-endian"] += 1
            else:
                bugs.setdefault(known or "other", []).append(
                    (label, path, "ggml's header read refuses it"))
        # 2. ggml's loading read {no_alloc=false, ctx=&c}
        if ga and gl and not da:
            w = explain(msg, STRICTER_LOAD)
            if w:
                why_load[w] += 1
            elif not known:
                unexplained.append((label, path, "(vs ggml's loading read) " + msg))
        elif da and ga and not gl:
            if known:
                bugs.setdefault(known, []).append((label, path, "ggml's loading read refuses it"))
            elif gend > len(data):
                load_info[END_IN_PADDING] += 1
            else:
                bugs.setdefault("other (loading read)", []).append(
                    (label, path, "ggml's loading read refuses it (the header read accepts)"))
    os.makedirs(keep, exist_ok=True)
    for f in os.listdir(keep):
        os.remove(os.path.join(keep, f))
    with open(os.path.join(keep, "list.txt"), "w") as lst:
        items = [(f"BUG {k}", v) for k, v in bugs.items()]
        items += [("UNEXPLAINED dtcast refuses, ggml accepts", unexplained), ("CRASH", crashes)]
        for kind, its in items:
            for label, path, note in its:
                shutil.copy(path, os.path.join(keep, os.path.basename(path)))
                lst.write(f"{kind}\t{os.path.basename(path)}\t{label}\t{note}\n")
    n = counts["files"]
    print(f"hostile GGUF files: {len(files)}, {n} read by both readers (ggml: gguf_init_from_file "
          f"{{no_alloc=true, ctx=NULL}}; disagreements kept in {keep})")
    for k in ("ggml accepts, dtcast accepts", "ggml refuses, dtcast refuses",
              "ggml accepts, dtcast refuses", "ggml refuses, dtcast accepts"):
        print(f"  {k}: {counts[k]}")
    print(f"    of which big-endian files, which dtcast reads (documented): {counts['big-endian']}")
    print("  ggml accepts, dtcast refuses, by dtcast's documented stricter rules:")
    for k, v in why.most_common():
        print(f"    {v:6d}  {k}")
    print("  against ggml's loading read {no_alloc=false, ctx=&c} (it reads the data too):")
    for k, v in why_load.most_common():
        print(f"    {v:6d}  ggml accepts, dtcast refuses: {k}")
    for k, v in load_info.most_common():
        print(f"    {v:6d}  dtcast accepts, ggml refuses: {k}")
    ok = True
    if crashes:
        ok = False
        print(f"FAIL hostile crashes: {len(crashes)} files crash a reader; first: "
              f"{crashes[0][0]} ({crashes[0][2]})")
    else:
        print(f"PASS hostile crashes: neither reader crashes on {len(files)} files")
    if bugs:
        ok = False
        for k, v in bugs.items():
            print(f"FAIL hostile disagreement: {len(v)} files: {k}; e.g. {v[0][0]} "
                  f"({os.path.basename(v[0][1])}: {v[0][2]})")
    else:
        print("PASS hostile dtcast-accepts: dtcast reads no file ggml refuses (big-endian files "
              "aside, documented)")
    if unexplained:
        ok = False
        print(f"FAIL hostile dtcast-refuses: {len(unexplained)} refusals no documented rule "
              f"explains; first: {unexplained[0][0]}: {unexplained[0][2]}")
    else:
        print(f"PASS hostile dtcast-refuses: each of dtcast's {sum(why.values())} refusals of "
              "files ggml accepts is one of its documented stricter rules")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
