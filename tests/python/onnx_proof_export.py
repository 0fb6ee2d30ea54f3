"""Exports the two real networks of the ONNX graph-mode proof (tests/python/onnx_proof.py) from
torch, once: tests/data/onnx/cnn.onnx and tests/data/onnx/transformer.onnx. The files are
committed; the tests read them and do not need torch.

    .venv/bin/python tests/python/onnx_proof_export.py [--out DIR]

Fixed seed, eval mode, float32, opset 17 (LayerNormalization's first opset). The dynamo exporter
(torch.onnx.export's default) needs onnxscript, which the test venv does not have; the
TorchScript exporter (dynamo=False) is used instead. Each model is checked after export:
onnx.checker.check_model(full_check=True), and onnxruntime's CPU session gives torch's outputs.
"""
import argparse
import os
import sys
import warnings

import numpy as np
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(os.path.dirname(HERE), "data", "onnx")
OPSET = 17


class SmallCNN(nn.Module):
    """Conv/BatchNorm/ReLU/MaxPool twice, then Linear/BatchNorm1d/ReLU/Linear: 1x3x8x8 -> 10.
    The exporter folds a BatchNorm that directly follows a Conv into the Conv's weights; the
    BatchNorm1d after the first Linear stays a BatchNormalization node."""

    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(16 * 2 * 2, 32), nn.BatchNorm1d(32),
                                  nn.ReLU(), nn.Linear(32, 10))

    def forward(self, x):
        return self.head(self.features(x))


class Block(nn.Module):
    """A pre-norm transformer block: x + MHA(LN(x)), then + MLP(LN(.)) with GELU; d=32, 4 heads,
    MLP 64. Hand-written attention (Q/K/V projections, scaled dot product, softmax), so the
    graph is plain MatMul/Reshape/Transpose/Softmax whatever the exporter's fusions."""

    def __init__(self, d=32, heads=4, hidden=64):
        super().__init__()
        self.heads, self.dh = heads, d // heads
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.qkv, self.proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc1, self.fc2 = nn.Linear(d, hidden), nn.Linear(hidden, d)
        self.act = nn.GELU()

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(d, dim=-1)
        q, k, v = (z.reshape(b, t, self.heads, self.dh).transpose(1, 2) for z in (q, k, v))
        att = torch.softmax(q @ k.transpose(-1, -2) / self.dh ** 0.5, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        x = x + self.proj(y)
        return x + self.fc2(self.act(self.fc1(self.ln2(x))))


def _randomize_norms(model, gen):
    """Non-trivial BatchNorm statistics and affine parameters (fresh ones are 0/1)."""
    for m in model.modules():
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d)):
            n = m.num_features
            m.running_mean.copy_(torch.randn(n, generator=gen) * 0.1)
            m.running_var.copy_(torch.rand(n, generator=gen) * 0.5 + 0.75)
        if isinstance(m, (nn.BatchNorm1d, nn.BatchNorm2d, nn.LayerNorm)):
            with torch.no_grad():
                m.weight.copy_(1 + 0.1 * torch.randn(m.weight.shape, generator=gen))
                m.bias.copy_(0.1 * torch.randn(m.bias.shape, generator=gen))


def export(name, model, example, path):
    import onnx
    import onnxruntime as ort

    model.eval()
    kwargs = dict(input_names=["x"], output_names=["y"], opset_version=OPSET,
                  dynamic_axes={"x": {0: "batch"}, "y": {0: "batch"}})
    try:
        torch.onnx.export(model, (example,), path, **kwargs)  # dynamo (needs onnxscript)
        how = "dynamo"
    except Exception as e:  # ModuleNotFoundError: onnxscript, or the exporter's own error
        print("%s: dynamo exporter unavailable (%s: %s); using dynamo=False"
              % (name, type(e).__name__, str(e).splitlines()[0]))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation warning
            torch.onnx.export(model, (example,), path, dynamo=False, **kwargs)
        how = "torchscript"
    m = onnx.load(path)
    onnx.checker.check_model(m, full_check=True)
    s = ort.InferenceSession(path, providers=["CPUExecutionProvider"])
    with torch.no_grad():
        want = model(example).numpy()
    got = s.run(None, {"x": example.numpy()})[0]
    assert np.allclose(got, want, rtol=1e-4, atol=1e-5), np.abs(got - want).max()
    ops = sorted({n.op_type for n in m.graph.node})
    print("%s: %s (%s exporter, opset %d, %d bytes, %d initializers): %s"
          % (name, os.path.relpath(path), how, m.opset_import[0].version, os.path.getsize(path),
             len(m.graph.initializer), " ".join(ops)))
    assert os.path.getsize(path) < 300_000


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=DATA)
    args = ap.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    torch.manual_seed(0)
    gen = torch.Generator().manual_seed(0)
    cnn = SmallCNN()
    _randomize_norms(cnn, gen)
    export("cnn", cnn, torch.randn(1, 3, 8, 8, generator=gen), os.path.join(args.out, "cnn.onnx"))
    block = Block()
    _randomize_norms(block, gen)
    export("transformer", block, torch.randn(1, 8, 32, generator=gen),
           os.path.join(args.out, "transformer.onnx"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
