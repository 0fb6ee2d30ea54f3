"""The numpy job `dtcast dequantize` is compared with on a DeepSeek-V4 checkpoint (bench/dsv4_bench.sh):
a folder in V4's layout (bench/make_dsv4_checkpoint.py) into a bfloat16 one, as a careful user
writes it for a CPU:
  - X.weight F8_E4M3 [N, K] + X.scale F8_E8M0 [ceil(N/128), ceil(K/128)]: one band of 128 rows at
    a time, fp8 decoded by a 256-entry float32 table, times 2^(e-127) of its tile;
  - X.weight I8 [N, K/2] (float4 e2m1 codes, two per byte, low nibble first) + X.scale F8_E8M0
    [N, K/32]: a block of rows at a time, each byte decoded by a 256 x 2 float32 table (its two
    elements; the nibble 8 read as +0, as DeepSeek's FP4_TABLE does), each run of 32 times
    2^(e-127);
  - the products (exact in float32) rounded once to bfloat16 by the bit trick, round to nearest
    even; every other tensor copied byte for byte, the index rewritten (the scales gone, total_size),
    quantization_config removed from config.json, the folder's other files copied.

    python3 bench/dequant_dsv4.py IN_DIR OUT_DIR

numpy only; the shards are np.memmap'ed, so memory stays bounded by one block of rows. The output
shards have the input's names and the reference writer's tensor order (tests/safetensors_ref.py:
by dtype, then by name; compact JSON header padded with spaces to a multiple of 8), as dtcast
writes them, so `cmp` checks one against the other.
"""
import json
import os
import shutil
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import safetensors_ref as ref  # noqa: E402

ROWS = 1 << 20  # elements per fp4 block of rows (4 MiB of float32)
COPY = 64 << 20  # bytes per write when copying a tensor


def e4m3_table():
    c = np.arange(256)
    e, m, s = (c >> 3) & 15, c & 7, np.where(c & 0x80, -1.0, 1.0)
    v = np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e - 7)) * s
    v = np.where((c & 0x7F) == 0x7F, np.copysign(np.nan, s), v)  # 0x7F +NaN, 0xFF -NaN
    return v.astype(np.float32)


def e2m1_pairs():
    """byte -> its two float4 e2m1 values (low nibble first), float32 [256, 2]. The nibble 8 (-0 in
    e2m1) is +0, as DeepSeek's own table reads it (inference/convert.py: FP4_TABLE[8] = 0.0) and
    dtcast does."""
    mag = np.array([0, 0.5, 1, 1.5, 2, 3, 4, 6], np.float32)
    nib = np.concatenate([mag, -mag])
    nib[8] = 0.0
    b = np.arange(256)
    return np.stack([nib[b & 15], nib[b >> 4]], axis=1).astype(np.float32)


def e8m0_table():
    v = np.ldexp(np.float32(1), np.arange(255) - 127).astype(np.float32)  # exact powers of two
    return np.append(v, np.float32(np.nan))  # 0xFF: NaN


E4M3, E2M1, E8M0 = e4m3_table(), e2m1_pairs(), e8m0_table()


def bf16_bits(f):
    """float32 -> bfloat16 bits, round to nearest even (the NaNs here are quiet, low bits 0)."""
    u = f.view(np.uint32)
    u += 0x7FFF + ((u >> 16) & 1)
    return (u >> 16).astype(np.uint16)


def header_of(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
    return h, 8 + n


def scale_name(name):
    return name[:-len("weight")] + "scale"


def main(src, dst):
    np.seterr(over="ignore", invalid="ignore")  # 6 * 2^127 is inf, NaN scales NaN, as in dtcast
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(src, "model.safetensors.index.json")) as f:
        index = json.load(f)
    wmap = index["weight_map"]
    shards = sorted(set(wmap.values()))
    headers = {s: header_of(os.path.join(src, s)) for s in shards}
    maps = {s: np.memmap(os.path.join(src, s), dtype=np.uint8, mode="r") for s in shards}

    def raw(name):
        shard = wmap[name]
        h, start = headers[shard]
        b, e = h[name]["data_offsets"]
        return maps[shard][start + b:start + e], h[name]

    def kind(name, t):
        """'fp8', 'fp4', 'scale' or None (copied) for tensor name of header entry t."""
        if name.endswith(".scale") and t["dtype"] == "F8_E8M0" and name[:-5] + "weight" in wmap:
            return "scale"
        if name.endswith(".weight") and scale_name(name) in wmap:
            s = raw(scale_name(name))[1]
            if s["dtype"] == "F8_E8M0":
                return {"F8_E4M3": "fp8", "I8": "fp4"}.get(t["dtype"])
        return None

    def write_fp8(f, q, s):
        n, k = q.shape
        for r0 in range(0, n, 128):
            band = E4M3[q[r0:r0 + 128]]
            band *= np.repeat(E8M0[s[r0 // 128]], 128)[:k]
            f.write(bf16_bits(band).data)

    def write_fp4(f, q, s):
        n, half = q.shape
        rows = max(1, ROWS // (2 * half))
        for r0 in range(0, n, rows):
            v = E2M1[q[r0:r0 + rows]].reshape(-1, s.shape[1], 32)  # [rows, K/32, 32]
            v *= E8M0[s[r0:r0 + rows]][:, :, None]
            f.write(bf16_bits(v).data)

    new_map, total = {}, 0
    for shard in shards:
        h, start = headers[shard]
        out = {}
        for name, t in h.items():
            if name == "__metadata__":
                continue
            k = kind(name, t)
            if k == "scale":
                continue
            shape = list(t["shape"])
            if k == "fp4":
                shape[-1] *= 2
            out[name] = ("BF16" if k else t["dtype"], shape, k)
        order = sorted(out, key=lambda n: (ref.WRITE_ORDER.index(out[n][0]), n.encode()))
        header, at = {}, 0
        if "__metadata__" in h:
            header["__metadata__"] = h["__metadata__"]
        for name in order:
            size = ref.nbytes(out[name][0], out[name][1])
            header[name] = {"dtype": out[name][0], "shape": out[name][1], "data_offsets": [at, at + size]}
            at += size
            new_map[name] = shard
        total += at
        text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode()
        text += b" " * (-len(text) % 8)
        with open(os.path.join(dst, shard), "wb") as f:
            f.write(struct.pack("<Q", len(text)) + text)
            for name in order:
                data, t = raw(name)
                k = out[name][2]
                if k is None:
                    for i in range(0, len(data), COPY):
                        f.write(data[i:i + COPY].data)
                    continue
                sdata, st = raw(scale_name(name))
                s = np.asarray(sdata).reshape(st["shape"])
                q = data.reshape(t["shape"])
                (write_fp8 if k == "fp8" else write_fp4)(f, q, s)
    index["weight_map"] = new_map
    index.setdefault("metadata", {})["total_size"] = total
    with open(os.path.join(dst, "model.safetensors.index.json"), "w") as f:
        f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")
    for name in os.listdir(src):
        if name.endswith(".safetensors") or name == "model.safetensors.index.json":
            continue
        if name == "config.json":
            with open(os.path.join(src, name)) as f:
                cfg = json.load(f)
            cfg.pop("quantization_config", None)
            with open(os.path.join(dst, name), "w") as f:
                f.write(json.dumps(cfg, indent=2, sort_keys=True) + "\n")
        else:
            shutil.copyfile(os.path.join(src, name), os.path.join(dst, name))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
