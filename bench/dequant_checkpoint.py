"""The numpy job `dtcast dequantize` is compared with (BENCHMARKS.md, "Issue 15: checkpoint
files"): a block-FP8 checkpoint folder (DeepSeek-V3 layout: X.weight F8_E4M3 + X.weight_scale_inv
F32 per 128 x 128 tile) into a bfloat16 one, as DeepSeek's fp8_cast_bf16.py does it on a CPU:
bfloat16_rne(float32(q) * s) per tile, every other tensor copied, the index rewritten, the
quantization_config removed from config.json, the other files copied.

    python3 bench/dequant_checkpoint.py IN_DIR OUT_DIR

numpy only (float8 decoded through a 256-entry table built from the bit fields), one band of 128
rows at a time from np.memmap'ed shards, so memory stays bounded. The output files are written in
the reference writer's tensor order (tests/safetensors_ref.py), so they are byte-identical to
dtcast's: `cmp` checks one against the other.
"""
import json
import os
import shutil
import struct
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests"))
import safetensors_ref as ref  # noqa: E402


def e4m3_table():
    c = np.arange(256)
    e, m, s = (c >> 3) & 15, c & 7, np.where(c & 0x80, -1.0, 1.0)
    v = np.where(e == 0, m / 8 * 2.0 ** -6, (1 + m / 8) * 2.0 ** (e - 7)) * s
    v[(c & 0x7F) == 0x7F] = np.nan
    return v.astype(np.float32)


E4M3 = e4m3_table()


def bf16_bits(f):
    u = f.view(np.uint32)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def header_of(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        h = json.loads(f.read(n))
    return h, 8 + n


def main(src, dst):
    os.makedirs(dst, exist_ok=True)
    with open(os.path.join(src, "model.safetensors.index.json")) as f:
        index = json.load(f)
    shards = sorted(set(index["weight_map"].values()))
    headers = {s: header_of(os.path.join(src, s)) for s in shards}
    maps = {s: np.memmap(os.path.join(src, s), dtype=np.uint8, mode="r") for s in shards}

    def raw(name):
        shard = index["weight_map"][name]
        h, start = headers[shard]
        b, e = h[name]["data_offsets"]
        return maps[shard][start + b:start + e], h[name]

    new_map, total = {}, 0
    for shard in shards:
        h, start = headers[shard]
        out = {}
        for name, t in h.items():
            if name == "__metadata__" or name.endswith("_scale_inv"):
                continue
            if t["dtype"] == "F8_E4M3" and name + "_scale_inv" in index["weight_map"]:
                out[name] = ("BF16", t["shape"])
            else:
                out[name] = (t["dtype"], t["shape"])
        order = sorted(out, key=lambda n: (ref.WRITE_ORDER.index(out[n][0]), n.encode()))
        header, at = {}, 0
        if "__metadata__" in h:
            header["__metadata__"] = h["__metadata__"]
        for name in order:
            size = ref.nbytes(*out[name])
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
                if out[name][0] != "BF16" or t["dtype"] == "BF16":
                    f.write(data.tobytes())
                    continue
                n, k = t["shape"]
                q = data.reshape(n, k)
                s = np.asarray(raw(name + "_scale_inv")[0]).view("<f4").reshape(-(-n // 128), -(-k // 128))
                for r0 in range(0, n, 128):
                    band = E4M3[q[r0:r0 + 128]]
                    band *= np.repeat(s[r0 // 128], 128)[:k]
                    f.write(bf16_bits(band).tobytes())
    index["weight_map"] = new_map
    index["metadata"]["total_size"] = total
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
