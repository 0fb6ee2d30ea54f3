"""A sharded checkpoint converted in steps (docs/files.md, "Sharded checkpoints", "In steps").

    python3 tests/test_shards_cli.py build/libdtcast.so      (the CLI is build/dtcast)

`dtcast cast --shards LIST` converts some shards of a *.safetensors.index.json and writes no
index; `dtcast cast --index-only` writes the index once every shard is in the folder. Checks
that every shard converted in its own process (concurrently, in a shuffled order, named by file
name or by position) followed by --index-only gives a folder byte-identical to the one-step
conversion; that each step writes only what it should; and that mistakes (an unknown shard, a
position past the end, a missing or foreign shard, both flags) fail with one line on stderr
naming the flag and nothing written. The shards are written by tests/safetensors_ref.py.
Prints PASS/FAIL lines; exits nonzero on a failure.
"""
import json
import os
import random
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import safetensors_ref as ref  # noqa: E402
from cli_util import check, failures, runner  # noqa: E402

LIB = sys.argv[1] if len(sys.argv) > 1 else "build/libdtcast.so"
DTCAST = os.path.join(os.path.dirname(os.path.abspath(LIB)), "dtcast")
INDEX = "model.safetensors.index.json"


run = runner(DTCAST)


def folder(d):
    """{file name: bytes} of a folder (missing folder: {})."""
    if not os.path.isdir(d):
        return {}
    out = {}
    for name in sorted(os.listdir(d)):
        with open(os.path.join(d, name), "rb") as f:
            out[name] = f.read()
    return out


def difference(a, b):
    if sorted(a) != sorted(b):
        return "files %s vs %s" % (sorted(a), sorted(b))
    return "differ: %s" % [n for n in a if a[n] != b[n]]


def make_checkpoint(d, rng, nshards=5):
    """A checkpoint of nshards shards (float, int and bool tensors, __metadata__) and its index
    (extra metadata keys, a nested value, a top-level key beside weight_map). Returns the index
    path and the shard names in the index's first-seen order (not sorted: the index lists them
    out of order, so positions and first-seen order differ)."""
    os.makedirs(d)
    names = ["model-%05d-of-%05d.safetensors" % (i + 1, nshards) for i in range(nshards)]
    order = names[:]
    rng.shuffle(order)
    weight_map = {}
    total = 0
    for k, fname in enumerate(order):
        f32 = bytes(rng.getrandbits(8) for _ in range(4 * 6))
        tensors = {
            "layers.%d.weight" % k: ("F32", [2, 3], f32),
            "layers.%d.bias" % k: ("F16", [4], bytes(rng.getrandbits(8) for _ in range(8))),
            "layers.%d.norm" % k: ("BF16", [3], bytes(rng.getrandbits(8) for _ in range(6))),
            "layers.%d.steps" % k: ("I64", [1], bytes(rng.getrandbits(8) for _ in range(8))),
            "layers.%d.mask" % k: ("BOOL", [2], b"\x01\x00"),
        }
        ref.write(os.path.join(d, fname), tensors, {"format": "pt", "shard": str(k)})
        for n, t in tensors.items():
            weight_map[n] = fname
            total += len(t[2])
    index = {"metadata": {"total_size": total, "format": "pt", "producer": {"v": [1, 2.50]}},
             "weight_map": weight_map, "extra": True}
    path = os.path.join(d, INDEX)
    with open(path, "w") as f:
        json.dump(index, f, indent=4)
    return path, order


OPTIONS = ("--to", "float8e4m3fn", "--overflow", "saturate", "--exclude", "*.norm")


def test_steps_equal_one_step(d):
    rng = random.Random(14)
    index, order = make_checkpoint(os.path.join(d, "src"), rng)
    one = os.path.join(d, "one")
    rc, _, err = run("cast", "-q", *OPTIONS, index, one)
    if not check(rc == 0, "steps.one_step", "status %d: %s" % (rc, err.strip())):
        return
    positions = sorted(order)
    # every shard in its own process, all at once, in a shuffled order; half named by position
    steps = os.path.join(d, "steps")
    shuffled = order[:]
    rng.shuffle(shuffled)
    procs = []
    for k, name in enumerate(shuffled):
        item = str(positions.index(name)) if k % 2 else name
        procs.append(subprocess.Popen([DTCAST, "cast", "-q", *OPTIONS, "--shards", item, index,
                                       steps], stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    results = [(p.wait(timeout=120), p.stderr.read().decode()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    check(all(rc == 0 for rc, _ in results), "steps.concurrent_shards", results)
    got = folder(steps)
    check(sorted(got) == sorted(order), "steps.no_index_before_last_step", sorted(got))
    rc, _, err = run("cast", "--index-only", index, steps)
    check(rc == 0 and err == "", "steps.index_only", "status %d: %s" % (rc, err.strip()))
    want = folder(one)
    got = folder(steps)
    check(got == want, "steps.byte_identical", difference(got, want))

    # two shards in one process (a name and a position), the rest in another, --to given to
    # --index-only too
    steps2 = os.path.join(d, "steps2")
    first = "%s,%d" % (positions[3], 0)
    rest = ",".join(str(i) for i in (1, 2, 4))
    rc1, _, err1 = run("cast", *OPTIONS, "--shards", first, index, steps2)
    check(rc1 == 0 and sorted(folder(steps2)) == sorted([positions[3], positions[0]]),
          "steps.list_of_two", "status %d: %s, files %s" % (rc1, err1, sorted(folder(steps2))))
    rc2, _, err2 = run("cast", *OPTIONS, "--shards", rest, index, steps2)
    rc3, _, err3 = run("cast", "--to", "float8e4m3fn", "--index-only", index, steps2)
    check(rc2 == 0 and rc3 == 0 and folder(steps2) == want, "steps.byte_identical_2",
          "%d %d %s %s %s" % (rc2, rc3, err2, err3, difference(folder(steps2), want)))

    # a shard given twice is converted once
    steps3 = os.path.join(d, "steps3")
    rc, _, err = run("cast", *OPTIONS, "--shards", "%s,%d" % (positions[1], 1), index, steps3)
    check(rc == 0 and list(folder(steps3)) == [positions[1]] and
          folder(steps3)[positions[1]] == want[positions[1]], "steps.repeated_item",
          "status %d: %s" % (rc, err))
    return index, positions, want


def expect_fail(name, args, status, words, out_dir, files_before):
    rc, out, err = run("cast", *args)
    lines = err.strip().split("\n")
    ok = (rc == status and out == "" and len(lines) == 1 and lines[0].startswith("dtcast: ") and
          all(w in err for w in words) and folder(out_dir) == files_before)
    check(ok, name, "status %d, stderr %r, files %s" % (rc, err, sorted(folder(out_dir))))


def test_refusals(d, index, positions, want):
    out = os.path.join(d, "bad")
    os.makedirs(out)
    to = ("--to", "bfloat16")
    expect_fail("refuse.unknown_name", to + ("--shards", positions[0][1:], index, out), 1,
                ["--shards", "'%s' is not a shard" % positions[0][1:], "did you mean"], out, {})
    expect_fail("refuse.position_past_end", to + ("--shards", "0,5", index, out), 1,
                ["--shards", "position 5", "0 to 4"], out, {})
    expect_fail("refuse.empty_item", to + ("--shards", "0,,1", index, out), 2,
                ["--shards", "empty item"], out, {})
    expect_fail("refuse.empty_list", to + ("--shards=", index, out), 2,
                ["--shards", "empty list"], out, {})
    expect_fail("refuse.negative", to + ("--shards", "-1", index, out), 1,
                ["--shards", "'-1' is not a shard"], out, {})
    expect_fail("refuse.both_flags", to + ("--shards", "0", "--index-only", index, out), 2,
                ["--shards", "--index-only"], out, {})
    shard = os.path.join(os.path.dirname(index), positions[0])
    expect_fail("refuse.not_an_index", to + ("--shards", "0", shard, os.path.join(out, "x")), 2,
                ["--shards", "index.json"], out, {})
    expect_fail("refuse.index_only_not_an_index", ("--index-only", shard, out), 2,
                ["--index-only", "index.json"], out, {})
    expect_fail("refuse.no_to", ("--shards", "0", index, out), 2, ["missing --to"], out, {})
    # --index-only before every shard is there: names the missing one, writes nothing
    for name in positions[:4]:
        with open(os.path.join(out, name), "wb") as f:
            f.write(want[name])
    have = folder(out)
    expect_fail("refuse.index_only_missing_shard", ("--index-only", index, out), 1,
                ["--index-only", positions[4], "missing"], out, have)
    expect_fail("refuse.index_only_no_folder",
                ("--index-only", index, os.path.join(d, "nowhere")), 1,
                ["--index-only", "not a folder"], out, have)
    # a shard of another checkpoint (its tensors are not the ones the index puts there)
    with open(os.path.join(out, positions[4]), "wb") as f:
        f.write(want[positions[0]])
    have = folder(out)
    expect_fail("refuse.index_only_foreign_shard", ("--index-only", index, out), 1,
                ["--index-only", positions[4], "has no tensor"], out, have)
    # a truncated shard
    with open(os.path.join(out, positions[4]), "wb") as f:
        f.write(want[positions[4]][:20])
    have = folder(out)
    expect_fail("refuse.index_only_truncated_shard", ("--index-only", index, out), 1,
                [positions[4], "at byte"], out, have)
    # a shard that fails to convert: the other shards of the same step are not written either
    src = os.path.join(d, "broken")
    os.makedirs(src)
    for name in positions:
        with open(os.path.join(os.path.dirname(index), name), "rb") as f:
            data = f.read()
        with open(os.path.join(src, name), "wb") as f:
            f.write(data[:30] if name == positions[1] else data)
    with open(index, "rb") as f, open(os.path.join(src, INDEX), "wb") as g:
        g.write(f.read())
    out2 = os.path.join(d, "bad2")
    expect_fail("refuse.failed_step_writes_nothing",
                to + ("--shards", "0,1", os.path.join(src, INDEX), out2), 1, [positions[1]],
                out2, {})


def main():
    if not os.path.exists(DTCAST):
        check(False, "dtcast", "no CLI at " + DTCAST)
        return 1
    with tempfile.TemporaryDirectory() as d:
        got = test_steps_equal_one_step(d)
        if got:
            test_refusals(d, *got)
    return 1 if failures() else 0


if __name__ == "__main__":
    sys.exit(main())
