"""A synthetic GGUF model for bench/gguf_bench.sh: layers of Q8_0 and Q4_K weights and F32 norms,
about GIB GiB, written with gguf-py's GGUFWriter; and the bfloat16 safetensors checkpoint of the
same shapes (the input of the safetensors -> Q8_0 GGUF run).

    python bench/make_gguf_model.py OUT.gguf OUT.safetensors [--gib 2]

The blocks are real quantizations (dtcast.gguf.quantize of normal values, made once for one
tensor and repeated: the bench measures streaming, not the data)."""
import argparse
import numpy as np

import gguf
import ml_dtypes
import dtcast.gguf as G


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("gguf_out")
    ap.add_argument("st_out")
    ap.add_argument("--gib", type=float, default=2.0)
    a = ap.parse_args()
    rng = np.random.default_rng(0)
    rows, k = 4096, 4096
    x = rng.standard_normal((rows, k), dtype=np.float32)
    q8, q4 = G.quantize(x, "q8_0"), G.quantize(x[:512], "q4_K")
    q4 = np.tile(q4, (rows // 512, 1))
    per_layer = q8.nbytes + q4.nbytes + 4 * k
    layers = max(1, int(a.gib * 2 ** 30 // per_layer))
    w = gguf.GGUFWriter(a.gguf_out, "llama")
    w.add_uint32("llama.block_count", layers)
    for i in range(layers):
        w.add_tensor(f"blk.{i}.ffn_down.weight", q8, raw_dtype=gguf.GGMLQuantizationType.Q8_0)
        w.add_tensor(f"blk.{i}.attn_q.weight", q4, raw_dtype=gguf.GGMLQuantizationType.Q4_K)
        w.add_tensor(f"blk.{i}.attn_norm.weight", np.ones(k, np.float32))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    # the bfloat16 checkpoint: as many bytes, 4096 x 4096 tensors
    from safetensors.numpy import save_file
    xb = x.astype(ml_dtypes.bfloat16)
    n = max(1, int(a.gib * 2 ** 30 // xb.nbytes))
    save_file({f"model.layers.{i}.mlp.weight": xb for i in range(n)}, a.st_out)


if __name__ == "__main__":
    main()
