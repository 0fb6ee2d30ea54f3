"""examples/dask_checkpoint.py on a local Dask cluster of two worker processes: one task per
shard, then the index, gives the same bytes as the one-step CLI conversion."""
import json
import os
import subprocess

import numpy as np
import pytest

distributed = pytest.importorskip("distributed")
safetensors_numpy = pytest.importorskip("safetensors.numpy")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")


def write_checkpoint(folder, nshards=4):
    """A small sharded checkpoint: float32/float16 weights, an int64 counter, __metadata__, and
    an index written by hand (shards listed out of order)."""
    os.makedirs(folder)
    rng = np.random.default_rng(14)
    weight_map = {}
    total = 0
    for k in reversed(range(nshards)):
        name = "model-%05d-of-%05d.safetensors" % (k + 1, nshards)
        tensors = {
            "layers.%d.weight" % k: rng.standard_normal((8, 4)).astype(np.float32),
            "layers.%d.bias" % k: rng.standard_normal(4).astype(np.float16),
            "layers.%d.step" % k: np.array([k], dtype=np.int64),
        }
        safetensors_numpy.save_file(tensors, os.path.join(folder, name),
                                    metadata={"format": "pt"})
        for n, t in tensors.items():
            weight_map[n] = name
            total += t.nbytes
    index = os.path.join(folder, "model.safetensors.index.json")
    with open(index, "w") as f:
        json.dump({"metadata": {"total_size": total}, "weight_map": weight_map}, f)
    return index


def read_folder(folder):
    out = {}
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name), "rb") as f:
            out[name] = f.read()
    return out


def test_dask_example_equals_one_step(tmp_path, monkeypatch):
    index = write_checkpoint(str(tmp_path / "src"))
    one = str(tmp_path / "one")
    subprocess.run([os.environ["DTCAST_CLI"], "cast", "-q", "--to", "bfloat16",
                    "--exclude", "*.bias", index, one], check=True)
    # the workers (spawned processes) import the example through the parent's sys.path
    monkeypatch.syspath_prepend(EXAMPLES)
    import dask_checkpoint

    dst = str(tmp_path / "dask")
    written = dask_checkpoint.main(str(tmp_path / "src"), dst, "bfloat16", n_workers=2,
                                   exclude="*.bias")
    want = read_folder(one)
    assert sorted(os.path.basename(p) for p in written) == sorted(want)
    got = read_folder(dst)
    assert sorted(got) == sorted(want)
    for name in want:
        assert got[name] == want[name], name
