"""ggml's libggml-base.so (tests/ggml_oracle/build.sh) through ctypes: its quantizers, to_float
and GGUF reader, as the oracle of the ggml test vectors and of the hostile-file differential.

  lib = Ggml(path)
  lib.traits(code)            -> dict: type_name, blck_size, type_size, is_quantized, to_float
  lib.quantize(x, name)       -> uint8 (rows, row bytes): ggml_quantize_chunk (no imatrix), or the
                                 exported quantize_row_<type>_ref for Q8_1 and Q8_K, which
                                 ggml_quantize_chunk refuses
  lib.dequantize(data, name)  -> float32 (rows, row elements): the type traits' to_float, or the
                                 exported dequantize_row_<type> where the traits have none (Q8_K)
  lib.gguf_accepts(path, load=False) -> bool: gguf_init_from_file's verdict, with
                                 {no_alloc=true, ctx=NULL} (load=False: the header, as
                                 llama.cpp's loaders first read it) or {no_alloc=false, ctx=&c}
                                 (load=True: the data blob read too)
The calls release the GIL (ctypes.CDLL), so threads run them in parallel.
"""

import ctypes
import json
import os

import numpy as np

import ggml_cases as cases

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DEFAULT_DIR = os.path.join(REPO, "build", "ggml-oracle")


def default_path():
    return os.environ.get("GGML_ORACLE_LIB") or os.path.join(DEFAULT_DIR, "lib", "libggml-base.so")


def info(path):
    """build.sh's info.json beside the library's lib/ folder (version, commit, flags), if any"""
    p = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(path))), "info.json")
    if os.path.exists(p):
        with open(p) as f:
            return json.load(f)
    return {}


TO_FLOAT = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)


class TypeTraits(ctypes.Structure):
    # ggml.h's struct ggml_type_traits (ggml 0.25.3)
    _fields_ = [
        ("type_name", ctypes.c_char_p),
        ("blck_size", ctypes.c_int64),
        ("blck_size_interleave", ctypes.c_int64),
        ("type_size", ctypes.c_size_t),
        ("is_quantized", ctypes.c_bool),
        ("to_float", ctypes.c_void_p),
        ("from_float_ref", ctypes.c_void_p),
    ]


class GgufInitParams(ctypes.Structure):
    _fields_ = [("no_alloc", ctypes.c_bool), ("ctx", ctypes.POINTER(ctypes.c_void_p))]


class Ggml:
    def __init__(self, path=None):
        self.path = path or default_path()
        if not os.path.exists(self.path):
            raise FileNotFoundError(f"{self.path}: no ggml library (tests/ggml_oracle/build.sh)")
        L = self.lib = ctypes.CDLL(self.path)
        L.ggml_get_type_traits.restype = ctypes.POINTER(TypeTraits)
        L.ggml_get_type_traits.argtypes = [ctypes.c_int]
        L.ggml_quantize_init.argtypes = [ctypes.c_int]
        L.ggml_quantize_init.restype = None
        L.ggml_quantize_requires_imatrix.argtypes = [ctypes.c_int]
        L.ggml_quantize_requires_imatrix.restype = ctypes.c_bool
        L.ggml_quantize_chunk.argtypes = [ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                          ctypes.c_int64, ctypes.c_int64, ctypes.c_int64,
                                          ctypes.c_void_p]
        L.ggml_quantize_chunk.restype = ctypes.c_size_t
        L.ggml_row_size.argtypes = [ctypes.c_int, ctypes.c_int64]
        L.ggml_row_size.restype = ctypes.c_size_t
        L.gguf_init_from_file.argtypes = [ctypes.c_char_p, GgufInitParams]
        L.gguf_init_from_file.restype = ctypes.c_void_p
        L.gguf_free.argtypes = [ctypes.c_void_p]
        L.gguf_free.restype = None
        L.ggml_free.argtypes = [ctypes.c_void_p]
        L.ggml_free.restype = None
        for f in ("gguf_get_n_tensors",):
            getattr(L, f).argtypes = [ctypes.c_void_p]
            getattr(L, f).restype = ctypes.c_int64
        for f in ("gguf_get_alignment", "gguf_get_data_offset"):
            getattr(L, f).argtypes = [ctypes.c_void_p]
            getattr(L, f).restype = ctypes.c_size_t
        for f in ("gguf_get_tensor_offset", "gguf_get_tensor_size"):
            getattr(L, f).argtypes = [ctypes.c_void_p, ctypes.c_int64]
            getattr(L, f).restype = ctypes.c_size_t
        self._to_float = {}
        self._inited = set()
        self.check_traits()

    def traits(self, code):
        t = self.lib.ggml_get_type_traits(code).contents
        return {"type_name": (t.type_name or b"").decode(), "blck_size": t.blck_size,
                "type_size": t.type_size, "is_quantized": t.is_quantized,
                "to_float": t.to_float, "from_float_ref": t.from_float_ref}

    def check_traits(self):
        """the library's type table must be cases.TYPES' (else the struct layout or ggml changed)"""
        for name, code, block, size, _, _ in cases.TYPES:
            t = self.traits(code)
            got = (t["type_name"], t["blck_size"], t["type_size"])
            if got != (name, block, size):
                raise RuntimeError(f"ggml type {code}: traits {got}, "
                                   f"expected {(name, block, size)}")

    # -- quantize --
    def quantize(self, x, name):
        _, code, block, size, how, _ = cases.BY_NAME[name]
        x = np.ascontiguousarray(x, dtype=np.float32)
        rows, k = x.shape
        assert k % block == 0
        out = np.zeros((rows, k // block * size), np.uint8)
        if how == "chunk":
            if code not in self._inited:
                self.lib.ggml_quantize_init(code)
                self._inited.add(code)
            assert not self.lib.ggml_quantize_requires_imatrix(code)
            n = self.lib.ggml_quantize_chunk(code, x.ctypes.data, out.ctypes.data, 0, rows, k, None)
            assert n == out.size, (name, n, out.size)
        elif how and how.startswith("row:"):
            f = getattr(self.lib, how[4:])
            f.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
            f.restype = None
            f(x.ctypes.data, out.ctypes.data, x.size)
        else:
            raise ValueError(f"{name}: not quantized by the oracle")
        return out

    # -- dequantize --
    def to_float_fn(self, name):
        if name not in self._to_float:
            code = cases.BY_NAME[name][1]
            p = self.traits(code)["to_float"]
            if p:
                fn = TO_FLOAT(p)
            else:
                fn = getattr(self.lib, "dequantize_row_" + name)
                fn.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
                fn.restype = None
            self._to_float[name] = fn
        return self._to_float[name]

    def dequantize(self, data, name):
        _, code, block, size, _, _ = cases.BY_NAME[name]
        data = np.ascontiguousarray(data, dtype=np.uint8)
        if data.ndim == 1:
            data = data.reshape(1, -1)
        rows, nb = data.shape
        assert nb % size == 0
        out = np.empty((rows, nb // size * block), np.float32)
        self.to_float_fn(name)(data.ctypes.data, out.ctypes.data, out.size)
        return out

    # -- the GGUF reader --
    def gguf_accepts(self, path, load=False):
        if not load:
            ctx = self.lib.gguf_init_from_file(os.fsencode(path), GgufInitParams(True, None))
            if ctx:
                self.lib.gguf_free(ctx)
            return bool(ctx)
        c = ctypes.c_void_p()
        params = GgufInitParams(False, ctypes.pointer(c))
        ctx = self.lib.gguf_init_from_file(os.fsencode(path), params)
        if c.value:
            self.lib.ggml_free(c)
        if ctx:
            self.lib.gguf_free(ctx)
        return bool(ctx)

    def gguf_data_size(self, path):
        """(data offset, padded data size) of a file the header reader accepts, else None: what
        the loading read (load=True) allocates and reads"""
        ctx = self.lib.gguf_init_from_file(os.fsencode(path), GgufInitParams(True, None))
        if not ctx:
            return None
        try:
            a = self.lib.gguf_get_alignment(ctx)
            total = 0
            for i in range(self.lib.gguf_get_n_tensors(ctx)):
                n = self.lib.gguf_get_tensor_size(ctx, i)
                total += (n + a - 1) // a * a
            return self.lib.gguf_get_data_offset(ctx), total
        finally:
            self.lib.gguf_free(ctx)
