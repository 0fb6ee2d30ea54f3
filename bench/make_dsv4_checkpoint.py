"""A synthetic checkpoint with DeepSeek-V4-Flash's layout (tensor names, dtypes, block scales), for
the file-job benchmark of `dtcast dequantize` on it (bench/dsv4_bench.sh) and its tests.

    python3 bench/make_dsv4_checkpoint.py OUT_DIR [--gib 2] [--seed 0] [--layers L] [--experts E]

The layout (dim 4096, moe_inter_dim 2048, as in V4-Flash; fewer heads, layers and experts):
  embed.weight, head.weight BF16 [VOCAB, 4096], norm.weight BF16 [4096]
  per layer L:
    layers.L.attn_norm.weight, layers.L.ffn_norm.weight      BF16 [4096]
    layers.L.attn.q_norm.weight BF16 [1024], layers.L.attn.kv_norm.weight BF16 [576]
    layers.L.attn.wq_a.weight [1024, 4096], wq_b [8192, 1024], wkv [576, 4096] (its last tile row
      64 rows short), wo [4096, 8192]                        F8_E4M3, each with
      its .scale                                              F8_E8M0 [ceil(N/128), ceil(K/128)]
    layers.L.ffn.gate.weight BF16 [E, 4096], layers.L.ffn.gate.bias F32 [E]
    layers.L.ffn.shared_experts.w1/w3.weight [2048, 4096], w2 [4096, 2048]  F8_E4M3 + .scale
    layers.L.ffn.experts.E.w1/w3.weight I8 [2048, 2048] + .scale F8_E8M0 [2048, 128]
    layers.L.ffn.experts.E.w2.weight    I8 [4096, 1024] + .scale F8_E8M0 [4096, 64]
      (float4 e2m1 codes two per byte, low nibble first; one scale per 32 inputs along the row)
By default the number of layers gives about 12 % of --gib to the dense tensors and the experts per
layer fill the rest (about 88 %). Shards of about 1 GiB (model-0000i-of-0000n.safetensors),
model.safetensors.index.json, config.json (expert_dtype fp4, DeepSeek's fp8 quantization_config
with scale_fmt ue8m0). The codes are random bytes (the F8_E4M3 NaN codes 0x7F/0xFF replaced by
0), the E8M0 scale bytes random in [110, 130], BF16 values random normals. numpy only; the
safetensors files are written here (header, then the tensors one at a time in header order), so
at most one tensor is in memory.
"""
import argparse
import json
import os
import struct

import numpy as np

DIM, MOE_INTER, Q_LORA, KV, HEADS_X_HEAD, VOCAB = 4096, 2048, 1024, 576, 8192, 2048
SHARD_BYTES = 1 << 30
SIZE = {"F8_E4M3": 1, "F8_E8M0": 1, "I8": 1, "BF16": 2, "F32": 4}


def cdiv(a, b):
    return -(-a // b)


def nbytes(dtype, shape):
    return int(np.prod(shape)) * SIZE[dtype]


def fp8(name, n, k):
    return [(name, "F8_E4M3", [n, k]), (name[:-len("weight")] + "scale", "F8_E8M0",
                                         [cdiv(n, 128), cdiv(k, 128)])]


def fp4(name, n, k):
    """k: the inputs (float4 elements) per row; the I8 tensor holds k / 2 bytes per row."""
    return [(name, "I8", [n, k // 2]), (name[:-len("weight")] + "scale", "F8_E8M0", [n, k // 32])]


def tensors_of_layer(n, experts):
    p = "layers.%d." % n
    out = [(p + "attn_norm.weight", "BF16", [DIM])]
    out += fp8(p + "attn.wq_a.weight", Q_LORA, DIM)
    out += [(p + "attn.q_norm.weight", "BF16", [Q_LORA])]
    out += fp8(p + "attn.wq_b.weight", HEADS_X_HEAD, Q_LORA)
    out += fp8(p + "attn.wkv.weight", KV, DIM)
    out += [(p + "attn.kv_norm.weight", "BF16", [KV])]
    out += fp8(p + "attn.wo.weight", DIM, HEADS_X_HEAD)
    out += [(p + "ffn_norm.weight", "BF16", [DIM]),
            (p + "ffn.gate.weight", "BF16", [experts, DIM]), (p + "ffn.gate.bias", "F32", [experts])]
    for e in range(experts):
        x = p + "ffn.experts.%d." % e
        out += fp4(x + "w1.weight", MOE_INTER, DIM) + fp4(x + "w2.weight", DIM, MOE_INTER)
        out += fp4(x + "w3.weight", MOE_INTER, DIM)
    x = p + "ffn.shared_experts."
    out += fp8(x + "w1.weight", MOE_INTER, DIM) + fp8(x + "w2.weight", DIM, MOE_INTER)
    out += fp8(x + "w3.weight", MOE_INTER, DIM)
    return out


def plan(gib, layers=None, experts=None):
    """(layers, experts per layer) for about gib GiB with about 88 % of it in the routed experts."""
    want = gib * (1 << 30)
    fixed = 2 * nbytes("BF16", [VOCAB, DIM]) + nbytes("BF16", [DIM])
    expert = sum(nbytes(t[1], t[2]) for t in tensors_of_layer(0, 1) if ".experts." in t[0])
    dense = sum(nbytes(t[1], t[2]) for t in tensors_of_layer(0, 0))
    if layers is None:
        layers = max(1, round((0.12 * want - fixed) / dense))
    if experts is None:
        experts = max(1, round((want - fixed - layers * dense) / (layers * expert)))
    return layers, experts


def fill(rng, dtype, shape):
    count = int(np.prod(shape))
    if dtype == "F8_E4M3":
        b = np.frombuffer(rng.bytes(count), np.uint8).copy()
        b[(b & 0x7F) == 0x7F] = 0
        return b
    if dtype == "I8":
        return np.frombuffer(rng.bytes(count), np.uint8)
    if dtype == "F8_E8M0":
        return rng.integers(110, 131, count, dtype=np.uint8)
    if dtype == "F32":
        return rng.standard_normal(count).astype("<f4")
    f = rng.standard_normal(count).astype("<f4")
    return (f.view("<u4") >> 16).astype("<u2")  # truncated to bfloat16: fine here


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
            f.write(fill(rng, dtype, shape).tobytes())
    return at


def make(out, gib=2.0, seed=0, layers=None, experts=None):
    layers, experts = plan(gib, layers, experts)
    rng = np.random.default_rng(seed)
    os.makedirs(out, exist_ok=True)
    everything = [("embed.weight", "BF16", [VOCAB, DIM])]
    for n in range(layers):
        everything += tensors_of_layer(n, experts)
    everything += [("norm.weight", "BF16", [DIM]), ("head.weight", "BF16", [VOCAB, DIM])]
    shards, current, size = [], [], 0
    for t in everything:
        b = nbytes(t[1], t[2])
        # a weight's scale stays in the weight's shard
        if current and size + b > SHARD_BYTES and not t[0].endswith(".scale"):
            shards.append(current)
            current, size = [], 0
        current.append(t)
        size += b
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
    config = {"architectures": ["DeepseekV4ForCausalLM"], "model_type": "deepseek_v4",
              "hidden_size": DIM, "moe_intermediate_size": MOE_INTER, "q_lora_rank": Q_LORA,
              "num_hidden_layers": layers, "n_routed_experts": experts, "n_shared_experts": 1,
              "num_experts_per_tok": 6, "vocab_size": VOCAB, "torch_dtype": "bfloat16",
              "expert_dtype": "fp4",
              "quantization_config": {"activation_scheme": "dynamic", "fmt": "e4m3",
                                      "quant_method": "fp8", "scale_fmt": "ue8m0",
                                      "weight_block_size": [128, 128]}}
    with open(os.path.join(out, "config.json"), "w") as f:
        f.write(json.dumps(config, indent=2, sort_keys=True) + "\n")
    expert_bytes = sum(nbytes(t[1], t[2]) for t in everything if ".experts." in t[0])
    return total_size, expert_bytes, layers, experts, len(shards)


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out")
    ap.add_argument("--gib", type=float, default=2.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--layers", type=int, help="layers (default: from --gib)")
    ap.add_argument("--experts", type=int, help="routed experts per layer (default: from --gib)")
    a = ap.parse_args()
    size, ex, layers, experts, shards = make(a.out, a.gib, a.seed, a.layers, a.experts)
    print("%s: %.2f GiB of tensors in %d shards, %d layers x %d experts, %.1f %% of the bytes in "
          "the routed experts" % (a.out, size / (1 << 30), shards, layers, experts, 100 * ex / size))
