"""A synthetic block-FP8 checkpoint with DeepSeek-V3's tensor names and shapes, for the file-job
benchmark of `dtcast dequantize` (BENCHMARKS.md, "Issue 15: checkpoint files") and its tests.

    python3 bench/make_fp8_checkpoint.py OUT_DIR [--gib 2] [--experts-per-layer 4] [--seed 0]

Per layer N: model.layers.N.self_attn.kv_a_proj_with_mqa.weight F8_E4M3 [576, 7168] (its last tile
row 64 rows short), model.layers.N.mlp.experts.M.{gate,up}_proj.weight [2048, 7168] and
down_proj.weight [7168, 2048], each with its `weight_scale_inv` F32 [ceil(N/128), ceil(K/128)];
model.layers.N.input_layernorm.weight BF16 [7168]. Layers are added until the shards hold about
--gib GiB; shards of about 400 MiB, model.safetensors.index.json, config.json with DeepSeek's
quantization_config, tokenizer.json. The codes are random bytes (the two NaN codes replaced by 0),
the scales random in [2^-14, 2^-6]. numpy only; memory: one tensor at a time.
"""
import argparse
import json
import os
import struct

import numpy as np

HIDDEN, INTER, KV = 7168, 2048, 576
SHARD_BYTES = 400 << 20


def tensors_of_layer(n, experts):
    out = [("model.layers.%d.input_layernorm.weight" % n, "BF16", [HIDDEN])]
    pre = "model.layers.%d." % n
    mats = [(pre + "self_attn.kv_a_proj_with_mqa.weight", [KV, HIDDEN])]
    for m in range(experts):
        e = pre + "mlp.experts.%d." % m
        mats += [(e + "gate_proj.weight", [INTER, HIDDEN]), (e + "up_proj.weight", [INTER, HIDDEN]),
                 (e + "down_proj.weight", [HIDDEN, INTER])]
    for name, shape in mats:
        out.append((name, "F8_E4M3", shape))
        out.append((name + "_scale_inv", "F32", [-(-shape[0] // 128), -(-shape[1] // 128)]))
    return out


def nbytes(dtype, shape):
    return int(np.prod(shape)) * {"F8_E4M3": 1, "F32": 4, "BF16": 2}[dtype]


def data(rng, dtype, shape):
    count = int(np.prod(shape))
    if dtype == "F8_E4M3":
        b = rng.integers(0, 256, count, dtype=np.uint8)
        b[(b & 0x7F) == 0x7F] = 0
        return b.tobytes()
    if dtype == "F32":
        return (2.0 ** rng.uniform(-14, -6, count)).astype("<f4").tobytes()
    f = rng.standard_normal(count).astype("<f4")
    return (f.view("<u4") >> 16).astype("<u2").tobytes()  # truncated to bfloat16: fine here


def write_shard(path, entries, rng):
    header, at = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape in entries:
        n = nbytes(dtype, shape)
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + n]}
        at += n
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, dtype, shape in entries:
            f.write(data(rng, dtype, shape))
    return at


def make(out, gib=2.0, experts=4, seed=0, layers=None):
    rng = np.random.default_rng(seed)
    os.makedirs(out, exist_ok=True)
    want = int(gib * (1 << 30))
    shards, current, size, total, n = [], [], 0, 0, 0
    while (layers is None and total < want) or (layers is not None and n < layers):
        for t in tensors_of_layer(n, experts):
            b = nbytes(t[1], t[2])
            if current and size + b > SHARD_BYTES and not t[0].endswith("_scale_inv"):
                shards.append(current)
                current, size = [], 0
            current.append(t)
            size += b
            total += b
        n += 1
    if current:
        shards.append(current)
    names = ["model-%05d-of-%05d.safetensors" % (i + 1, len(shards)) for i in range(len(shards))]
    weight_map, total_size = {}, 0
    for name, entries in zip(names, shards):
        total_size += write_shard(os.path.join(out, name), entries, rng)
        for t in entries:
            weight_map[t[0]] = name
    index = {"metadata": {"total_size": total_size}, "weight_map": weight_map}
    with open(os.path.join(out, "model.safetensors.index.json"), "w") as f:
        f.write(json.dumps(index, indent=2, sort_keys=True) + "\n")
    config = {"architectures": ["DeepseekV3ForCausalLM"], "hidden_size": HIDDEN,
              "moe_intermediate_size": INTER, "num_hidden_layers": n, "torch_dtype": "bfloat16",
              "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3",
                                      "quant_method": "fp8", "weight_block_size": [128, 128]}}
    with open(os.path.join(out, "config.json"), "w") as f:
        f.write(json.dumps(config, indent=2, sort_keys=True) + "\n")
    with open(os.path.join(out, "tokenizer.json"), "w") as f:
        f.write('{"version": "1.0", "model": {"type": "BPE"}}\n')
    return total_size


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--gib", type=float, default=2.0)
    ap.add_argument("--experts-per-layer", type=int, default=4)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args()
    size = make(a.out, a.gib, a.experts_per_layer, a.seed)
    print("%s: %.2f GiB of tensors" % (a.out, size / (1 << 30)))
