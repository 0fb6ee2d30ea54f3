#!/usr/bin/env python3
"""The file section of the benchmark (make bench BENCH_ARGS=--files): whole-file jobs of
`dtcast cast` against `cp` of the same input and the numpy streaming script of the same job
(bench/files_numpy.py), with wall time and peak RSS from /usr/bin/time -v.

    bench/files.py BUILD [--quick] [--sizes 1,4] [--st-size 1] [--dir DIR] [--keep]
                         [--repeat 3] [--tools cp,dtcast,numpy] [--filter SUBSTRING]
                         [--python /usr/bin/python3] [--impl auto] [--timeout 1800] [--json]

Jobs: for each size in --sizes (GiB), a float32 .npy of that size -> bfloat16 and ->
float8e4m3fn; and a multi-tensor safetensors checkpoint of --st-size GiB -> bfloat16.
--quick: 0.25 GiB for both. The inputs are generated once per run into --dir (default
BUILD/bench-files) and deleted at the end unless --keep (a kept input is reused).

Each command runs once untimed (warm-up: the input is in the page cache for every tool, as it
is right after it was generated), then --repeat times, the tools interleaved; each timed run
starts with the old outputs deleted and `sync` done, so no tool pays for another's write-back.
Outputs go to the page cache (no fsync), as cp leaves them. wall = median (seconds, measured
around /usr/bin/time), GB/s = input bytes / wall / 1e9, RSS = the largest "Maximum resident set
size" of the timed runs.

Targets (issue): dtcast at least as fast as the numpy script, >= 0.5x of cp, peak RSS <= 128
MiB. The outputs of dtcast and of the numpy script are compared byte for byte (.npy; header and
data separately) or tensor by tensor (.safetensors: names, dtypes, shapes and bytes)."""
import argparse
import json
import math
import os
import platform
import re
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

try:
    import numpy as np
except ImportError:  # pyenv's python3 may come first on PATH; Debian's has python3-numpy
    if os.path.exists("/usr/bin/python3") and os.path.realpath(sys.executable) != \
            os.path.realpath("/usr/bin/python3"):
        os.execv("/usr/bin/python3", ["/usr/bin/python3"] + sys.argv)
    sys.exit("bench/files.py needs numpy (apt-get install python3-numpy)")

HERE = os.path.dirname(os.path.abspath(__file__))
GIB = 1 << 30
MIB = 1 << 20
RSS_TARGET_MIB = 128
VS_NUMPY_TARGET = 1.0
VS_CP_TARGET = 0.5
TOOLS = ("cp", "dtcast", "numpy")
INPUT_VERSION = 1  # bump when the generated data changes: kept inputs are then regenerated


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("build")
    ap.add_argument("--quick", action="store_true", help="0.25 GiB inputs (about a minute)")
    ap.add_argument("--sizes", help="float32 .npy sizes in GiB, comma-separated (default 1,4)")
    ap.add_argument("--st-size", type=float, help="safetensors size in GiB (default 1; 0 = none)")
    ap.add_argument("--dir", help="scratch folder (default BUILD/bench-files)")
    ap.add_argument("--keep", action="store_true", help="keep (and reuse) the generated inputs")
    ap.add_argument("--repeat", type=int, default=3, help="timed runs per command (median)")
    ap.add_argument("--tools", default=",".join(TOOLS), help="subset of cp,dtcast,numpy")
    ap.add_argument("--filter", help="only jobs whose name contains this")
    ap.add_argument("--python", default="/usr/bin/python3",
                    help="interpreter of the numpy script (numpy; ml_dtypes if it has it)")
    ap.add_argument("--impl", default="auto", choices=["auto", "numpy", "ml_dtypes"],
                    help="the numpy script's encoder (auto: ml_dtypes when importable)")
    ap.add_argument("--timeout", type=float, default=1800, help="seconds per command")
    ap.add_argument("--json", action="store_true", help="one JSON document on stdout")
    a = ap.parse_args()
    if a.sizes:
        a.sizes = [float(s) for s in a.sizes.split(",") if s.strip()]
    else:
        a.sizes = [0.25] if a.quick else [1.0, 4.0]
    if a.st_size is None:
        a.st_size = 0.25 if a.quick else 1.0
    a.dir = os.path.abspath(a.dir or os.path.join(a.build, "bench-files"))
    a.tools = [t for t in a.tools.split(",") if t]
    bad = [t for t in a.tools if t not in TOOLS]
    if bad:
        ap.error("unknown tools: %s" % ",".join(bad))
    if a.repeat < 1:
        ap.error("--repeat must be >= 1")
    if not os.path.exists(a.python):
        a.python = shutil.which("python3") or sys.executable
    return a


def size_label(gib):
    return ("%g GiB" % gib) if gib >= 1 else ("%g MiB" % (gib * 1024))


# ---- inputs ---------------------------------------------------------------------------------

def npy_header(descr, shape):
    """numpy's format 1.0 header: np.lib.format's own writer."""
    import io
    buf = io.BytesIO()
    np.lib.format.write_array_header_1_0(
        buf, {"descr": descr, "fortran_order": False, "shape": tuple(shape)})
    return buf.getvalue()


# Edge cases placed at the start of every .npy input: zeros, NaN (quiet, signalling, negative),
# infinities, float8e4m3fn's largest value and overflow boundary (464 rounds to 448, above it
# NaN), its smallest normal and subnormals with ties, bfloat16 ties to even (odd and even), the
# smallest float32 subnormal and the largest float32.
EDGE_BITS = [0x00000000, 0x80000000, 0x7FC00000, 0xFFC00000, 0x7F800001, 0xFFBFFFFF,
             0x7F800000, 0xFF800000, 0x43E00000, 0x43E80000, 0x43E80001, 0xC3E80001,
             0x43F00000, 0x3C800000, 0x3B000000, 0x3A800000, 0x3B400000, 0xBAC00000,
             0x3F808000, 0x3F818000, 0xBF808000, 0x3F807FFF, 0x00000001, 0x7F7FFFFF,
             0x477FF000, 0x3C7FFFFF, 0x3C7C0000, 0x43DFFFFF]


def weights(rng, n):
    """n float32 weights: normal * 0.02, one in 10^4 an outlier of magnitude log-uniform in
    [1, 600] (so float8e4m3fn overflows: above 464 it gives NaN)."""
    x = rng.standard_normal(n, dtype=np.float32)
    x *= np.float32(0.02)
    k = max(1, n // 10000)
    at = rng.integers(0, n, k)
    mag = np.exp(rng.uniform(0.0, math.log(600.0), k)).astype(np.float32)
    x[at] = np.where(rng.integers(0, 2, k) == 1, mag, -mag)
    return x


def marker_ok(path, desc):
    try:
        with open(path + ".done") as f:
            return json.load(f) == desc and os.path.exists(path)
    except (OSError, ValueError):
        return False


def write_marker(path, desc):
    with open(path + ".done", "w") as f:
        json.dump(desc, f)


def make_npy(path, gib, seed):
    cols = 4096
    rows = max(1, int(gib * GIB) // 4 // cols)
    desc = {"version": INPUT_VERSION, "kind": "npy", "shape": [rows, cols], "seed": seed}
    if marker_ok(path, desc):
        log("  reusing %s" % path)
        return desc
    log("  generating %s: float32 %dx%d (%.2f GiB)" % (path, rows, cols, rows * cols * 4 / GIB))
    rng = np.random.default_rng(seed)
    n = rows * cols
    step = 16 << 20
    with open(path, "wb") as f:
        f.write(npy_header("<f4", (rows, cols)))
        for i in range(0, n, step):
            x = weights(rng, min(step, n - i))
            if i == 0:
                e = np.array(EDGE_BITS, np.uint32).view(np.float32)[:x.size]
                x[:e.size] = e
            x.tofile(f)
    write_marker(path, desc)
    return desc


def bf16_bits(x):
    b = x.view(np.uint32)
    return ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)


def st_layout(gib):
    """A decoder-style checkpoint of about gib GiB: embeddings, per-layer attention and MLP
    weights (F32), norms (F32, BF16 in every fourth layer), an F16 lm_head and final norm, I64
    position ids and BOOL causal masks. Returns [(name, dtype, shape)] in model order."""
    target = gib * GIB
    d = 1024 if target >= 512 * MIB else 512
    ffn, vocab, ctx = d * 11 // 4 // 64 * 64, 32000, 1024
    head = [("model.embed_tokens.weight", "F32", [vocab, d]),
            ("model.position_ids", "I64", [1, 4 * ctx])]
    tail = [("model.norm.weight", "F16", [d]), ("lm_head.weight", "F16", [vocab, d])]
    per_layer = (4 * d * d + 3 * d * ffn) * 4
    fixed = vocab * d * 6
    layers = max(1, int(round((target - fixed) / per_layer)))
    out = list(head)
    for i in range(layers):
        p = "model.layers.%d." % i
        norm = "BF16" if i % 4 == 3 else "F32"
        out += [(p + "input_layernorm.weight", norm, [d]),
                (p + "self_attn.q_proj.weight", "F32", [d, d]),
                (p + "self_attn.k_proj.weight", "F32", [d, d]),
                (p + "self_attn.v_proj.weight", "F32", [d, d]),
                (p + "self_attn.o_proj.weight", "F32", [d, d]),
                (p + "self_attn.rotary_emb.inv_freq", "F32", [64]),
                (p + "post_attention_layernorm.weight", norm, [d]),
                (p + "mlp.gate_proj.weight", "F32", [ffn, d]),
                (p + "mlp.up_proj.weight", "F32", [ffn, d]),
                (p + "mlp.down_proj.weight", "F32", [d, ffn])]
        if i % 4 == 0:
            out += [(p + "self_attn.bias", "BOOL", [1, 1, ctx, ctx]),
                    (p + "self_attn.masked_bias", "I64", [1])]
    return out + tail


ST_SIZES = {"F64": 8, "F32": 4, "F16": 2, "BF16": 2, "I64": 8, "I32": 4, "BOOL": 1, "U8": 1}


def st_tensor_chunks(rng, name, dtype, shape, step=8 << 20):
    """The bytes of one tensor, in pieces of at most step elements."""
    n = int(np.prod(shape, dtype=np.int64))
    if dtype == "I64":
        yield (np.arange(n, dtype=np.int64) % max(shape[-1], 1)).astype("<i8").tobytes()
        return
    if dtype == "BOOL":
        side = shape[-1]
        yield np.tril(np.ones((side, side), np.uint8)).tobytes() * (n // (side * side))
        return
    for i in range(0, n, step):
        m = min(step, n - i)
        x = weights(rng, m)
        if "norm" in name:
            x = np.float32(1.0) + x
        if "inv_freq" in name:
            x = (np.float32(1.0) / np.float32(10000.0) ** (np.arange(m, dtype=np.float32) / m))
        if dtype == "F32":
            yield x.tobytes()
        elif dtype == "F16":
            yield x.astype("<f2").tobytes()
        elif dtype == "BF16":
            yield bf16_bits(x).tobytes()


def make_safetensors(path, gib, seed):
    layout = st_layout(gib)
    counts = {}
    for _, dtype, _ in layout:
        counts[dtype] = counts.get(dtype, 0) + 1
    desc = {"version": INPUT_VERSION, "kind": "safetensors", "gib": gib, "seed": seed,
            "tensors": len(layout), "dtypes": counts}
    if marker_ok(path, desc):
        log("  reusing %s" % path)
        return desc
    # The data in decreasing alignment (as safetensors' own writer orders it), so that every
    # tensor starts at a multiple of its element size.
    order = sorted(layout, key=lambda t: -ST_SIZES[t[1]])
    header, at = {"__metadata__": {"format": "pt"}}, 0
    for name, dtype, shape in order:
        nbytes = int(np.prod(shape, dtype=np.int64)) * ST_SIZES[dtype]
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [at, at + nbytes]}
        at += nbytes
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    log("  generating %s: %d tensors, %.2f GiB" % (path, len(layout), at / GIB))
    rng = np.random.default_rng(seed)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text)
        for name, dtype, shape in order:
            for piece in st_tensor_chunks(rng, name, dtype, shape):
                f.write(piece)
    assert os.path.getsize(path) == 8 + len(text) + at
    write_marker(path, desc)
    return desc


# ---- running --------------------------------------------------------------------------------

def run_timed(cmd, timeout):
    """Runs cmd under /usr/bin/time -v. Returns a dict: ok, wall (our clock), time_v_wall,
    rss_kib, rc, err (stderr tail when it failed)."""
    with tempfile.NamedTemporaryFile("r", prefix="dtcast-time-", suffix=".txt") as tv, \
            tempfile.TemporaryFile("w+") as err:
        full = ["/usr/bin/time", "-v", "-o", tv.name] + cmd
        t0 = time.perf_counter()
        p = subprocess.Popen(full, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                             stderr=err, start_new_session=True)
        try:
            rc = p.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, 9)
            p.wait()
            return {"ok": False, "rc": None, "err": "timed out after %g s" % timeout}
        wall = time.perf_counter() - t0
        text = tv.read()
        err.seek(0)
        msg = err.read()
    r = {"ok": rc == 0, "rc": rc, "wall": wall}
    m = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", text)
    if m:
        secs = 0.0
        for part in m.group(1).split(":"):
            secs = secs * 60 + float(part)
        r["time_v_wall"] = secs
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    if m:
        r["rss_kib"] = int(m.group(1))
    if rc != 0:
        lines = [l for l in msg.strip().splitlines() if l.strip()]
        r["err"] = " / ".join(lines[-3:])[-400:] or "exit status %s" % rc
    return r


def dtcast_quiet_flag(exe):
    try:
        h = subprocess.run([exe, "cast", "--help"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired):
        return []
    return ["-q"] if re.search(r"(^|[\s,])-q\b", h.stdout + h.stderr) else []


def rm(path):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


def run_job(a, job, exe, quiet):
    """Warm-up, then --repeat interleaved timed runs of each tool. Returns rows by tool."""
    src, to, ext = job["input"], job["to"], job["ext"]
    outs = {t: os.path.join(a.dir, "out-%s%s" % (t, ext)) for t in a.tools}
    cmds = {"cp": ["cp", src, outs.get("cp", "")],
            "dtcast": [exe, "cast", "--to", to] + quiet + [src, outs.get("dtcast", "")],
            "numpy": [a.python, os.path.join(HERE, "files_numpy.py"), "--to", to,
                      "--impl", a.impl, src, outs.get("numpy", "")]}
    rows = {t: {"tool": t, "cmd": " ".join(cmds[t]), "runs": []} for t in a.tools}
    live = []
    for t in a.tools:
        rm(outs[t])
        if not a.json:
            log("  %s: %s (warm-up)" % (job["name"], t))
        r = run_timed(cmds[t], a.timeout)
        rm(outs[t])
        if r["ok"]:
            live.append(t)
        else:
            rows[t]["error"] = r["err"]
            log("  %s: %s FAILED: %s" % (job["name"], t, r["err"]))
    for k in range(a.repeat):
        order = live[k % len(live):] + live[:k % len(live)] if live else []
        for t in order:
            if t not in live:
                continue
            rm(outs[t])
            os.sync()
            r = run_timed(cmds[t], a.timeout)
            if not r["ok"]:
                rows[t]["error"] = r["err"]
                log("  %s: %s FAILED on run %d: %s" % (job["name"], t, k + 1, r["err"]))
                live.remove(t)
                rm(outs[t])
                continue
            rows[t]["runs"].append(r)
            if not a.json:
                log("  %s: %s run %d/%d: %.2f s, %.1f MiB" % (
                    job["name"], t, k + 1, a.repeat, r["wall"], r.get("rss_kib", 0) / 1024))
            if t == "cp" or k < a.repeat - 1:
                rm(outs[t])
    for t, row in rows.items():
        if row["runs"] and "error" not in row:
            row["wall"] = statistics.median(r["wall"] for r in row["runs"])
            row["gbs"] = job["bytes"] / row["wall"] / 1e9
            row["rss_mib"] = max(r.get("rss_kib", 0) for r in row["runs"]) / 1024
    verify = None
    if "dtcast" in rows and "numpy" in rows and "wall" in rows["dtcast"] \
            and "wall" in rows["numpy"]:
        try:
            if ext == ".npy":
                verify = compare_npy(src, outs["dtcast"], outs["numpy"], to)
            else:
                verify = compare_safetensors(outs["dtcast"], outs["numpy"])
        except Exception as e:  # a malformed output is a mismatch, not a crash
            verify = {"equal": False, "what": "cannot compare: %s: %s" % (type(e).__name__, e)}
    for t in a.tools:
        rm(outs[t])
    return rows, verify


# ---- verification ---------------------------------------------------------------------------

def npy_split(path):
    """(header bytes, data offset) of an .npy file."""
    with open(path, "rb") as f:
        head = f.read(12)
        if head[:6] != b"\x93NUMPY":
            raise ValueError("%s is not an .npy file" % os.path.basename(path))
        if head[6] == 1:
            off = 10 + struct.unpack("<H", head[8:10])[0]
        else:
            off = 12 + struct.unpack("<I", head[8:12])[0]
        f.seek(0)
        return f.read(off), off


def compare_npy(src, out_a, out_b, to):
    """dtcast's output (a) against numpy's (b): header, then data, byte for byte."""
    ha, oa = npy_split(out_a)
    hb, ob = npy_split(out_b)
    res = {"equal": True, "what": "identical (%s bytes)" % format(os.path.getsize(out_a), ",")}
    notes = []
    if ha != hb:
        res["equal"] = False
        notes.append("headers differ: dtcast %r, numpy %r" % (
            ha[10:].decode("latin1").strip(), hb[10:].decode("latin1").strip()))
    sa, sb = os.path.getsize(out_a) - oa, os.path.getsize(out_b) - ob
    if sa != sb:
        res["equal"] = False
        notes.append("data sizes differ: dtcast %d bytes, numpy %d" % (sa, sb))
    else:
        width = 2 if to == "bfloat16" else 1
        code = np.uint16 if width == 2 else np.uint8
        diff, examples, step = 0, [], 64 * MIB
        _, osrc = npy_split(src)
        with open(out_a, "rb") as fa, open(out_b, "rb") as fb:
            fa.seek(oa)
            fb.seek(ob)
            at = 0
            while True:
                ba, bb = fa.read(step), fb.read(step)
                if not ba:
                    break
                if ba != bb:
                    xa = np.frombuffer(ba, code)
                    xb = np.frombuffer(bb, code)
                    idx = np.nonzero(xa != xb)[0]
                    diff += idx.size
                    for i in idx[:max(0, 5 - len(examples))]:
                        e = at // width + int(i)
                        with open(src, "rb") as fs:
                            fs.seek(osrc + 4 * e)
                            bits = struct.unpack("<I", fs.read(4))[0]
                        examples.append("element %d: float32 0x%08X (%r) -> dtcast 0x%X, "
                                        "numpy 0x%X" % (e, bits, float(np.uint32(bits).view(
                                            np.float32)), int(xa[i]), int(xb[i])))
                at += len(ba)
        if diff:
            res["equal"] = False
            notes.append("%d of %d elements differ; %s" % (diff, sa // width,
                                                             "; ".join(examples)))
        elif not res["equal"]:
            notes.append("the data is identical")
    if notes:
        res["what"] = "MISMATCH: " + "; ".join(notes)
    return res


def st_read(path):
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        h = json.loads(f.read(n))
    h.pop("__metadata__", None)
    return h, 8 + n


def compare_safetensors(out_a, out_b):
    ha, ba = st_read(out_a)
    hb, bb = st_read(out_b)
    notes = []
    if set(ha) != set(hb):
        only_a, only_b = sorted(set(ha) - set(hb)), sorted(set(hb) - set(ha))
        notes.append("tensor names differ (only dtcast: %s; only numpy: %s)" % (
            ", ".join(only_a[:3]) or "-", ", ".join(only_b[:3]) or "-"))
    bad = []
    with open(out_a, "rb") as fa, open(out_b, "rb") as fb:
        for k in sorted(set(ha) & set(hb)):
            ta, tb = ha[k], hb[k]
            if ta["dtype"] != tb["dtype"] or ta["shape"] != tb["shape"]:
                bad.append("%s: dtcast %s %s, numpy %s %s" % (k, ta["dtype"], ta["shape"],
                                                             tb["dtype"], tb["shape"]))
                continue
            (a0, a1), (b0, b1) = ta["data_offsets"], tb["data_offsets"]
            if a1 - a0 != b1 - b0:
                bad.append("%s: %d bytes against %d" % (k, a1 - a0, b1 - b0))
                continue
            fa.seek(ba + a0)
            fb.seek(bb + b0)
            left = a1 - a0
            while left:
                m = min(left, 64 * MIB)
                if fa.read(m) != fb.read(m):
                    bad.append("%s (%s): data differs" % (k, ta["dtype"]))
                    break
                left -= m
    if bad:
        notes.append("%d tensors differ: %s" % (len(bad), "; ".join(bad[:4])))
    if notes:
        return {"equal": False, "what": "MISMATCH: " + "; ".join(notes)}
    return {"equal": True, "what": "same %d tensors (names, dtypes, shapes, bytes)" % len(ha)}


# ---- report ---------------------------------------------------------------------------------

def annotate(job):
    rows = job["rows"]
    d, n, c = rows.get("dtcast"), rows.get("numpy"), rows.get("cp")
    if not d:
        return
    if "wall" not in d:
        d["status"] = "FAIL"
        return
    checks = []
    if n and "wall" in n:
        d["vs_numpy"] = n["wall"] / d["wall"]
        checks.append(d["vs_numpy"] >= VS_NUMPY_TARGET)
    if c and "wall" in c:
        d["vs_cp"] = c["wall"] / d["wall"]
        checks.append(d["vs_cp"] >= VS_CP_TARGET)
    checks.append(d["rss_mib"] <= RSS_TARGET_MIB)
    if job.get("verify") and not job["verify"]["equal"]:
        checks.append(False)
    d["status"] = "PASS" if all(checks) else "MISS"


def fmt_table(jobs, a, notes):
    head = ["job", "tool", "wall s", "GB/s", "peak RSS MiB", "vs numpy", "vs cp", "status"]
    body = []
    for job in jobs:
        for t in a.tools:
            r = job["rows"].get(t)
            if r is None:
                continue
            if "wall" not in r:
                body.append([job["name"], t, "-", "-", "-", "", "", "FAIL"])
                continue
            vs_n = vs_c = ""
            rss = "%.1f" % r["rss_mib"]
            if t == "dtcast":
                if "vs_numpy" in r:
                    vs_n = "%.2fx %s>=%g" % (r["vs_numpy"], "PASS" if r["vs_numpy"] >=
                                             VS_NUMPY_TARGET else "MISS", VS_NUMPY_TARGET)
                if "vs_cp" in r:
                    vs_c = "%.2fx %s>=%g" % (r["vs_cp"], "PASS" if r["vs_cp"] >= VS_CP_TARGET
                                             else "MISS", VS_CP_TARGET)
                rss += " %s<=%d" % ("PASS" if r["rss_mib"] <= RSS_TARGET_MIB else "MISS",
                                    RSS_TARGET_MIB)
            st = r.get("status", "")
            if len(r["runs"]) < a.repeat:
                st += " (%d run%s)" % (len(r["runs"]), "" if len(r["runs"]) == 1 else "s")
            body.append([job["name"], t, "%.3f" % r["wall"], "%.2f" % r["gbs"], rss, vs_n,
                         vs_c, st])
    widths = [max(len(str(x[i])) for x in [head] + body) for i in range(len(head))]
    line = lambda cells: "| " + " | ".join(str(c).ljust(w) for c, w in zip(cells, widths)) + " |"
    out = [line(head), "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    out += [line(b) for b in body]
    out.append("")
    for job in jobs:
        for t, r in job["rows"].items():
            if "error" in r:
                out.append("FAIL %s, %s: %s" % (job["name"], t, r["error"]))
        v = job.get("verify")
        if v:
            mark = "ok" if v["equal"] else "!!!!!!!! MISMATCH"
            out.append("verify %s, dtcast vs numpy: %s (%s)" % (job["name"], mark, v["what"]))
    dt = [j["rows"]["dtcast"] for j in jobs if "dtcast" in j["rows"]]
    if dt:
        out.append("summary: dtcast %d/%d jobs pass (>= %gx numpy, >= %gx cp, RSS <= %d MiB, "
                   "output == numpy's)" % (sum(r.get("status") == "PASS" for r in dt), len(dt),
                                           VS_NUMPY_TARGET, VS_CP_TARGET, RSS_TARGET_MIB))
    out.append("median of %d timed runs after one warm-up, GB/s = input bytes / wall / 1e9, "
               "RSS = max over the timed runs" % a.repeat)
    out += ["note: " + n for n in notes]
    return "\n".join(out)


def free_bytes(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


def main():
    a = parse_args()
    exe = os.path.abspath(os.path.join(a.build, "dtcast"))
    if "dtcast" in a.tools and not os.access(exe, os.X_OK):
        sys.exit("%s is missing: run make first" % exe)
    if not os.path.exists("/usr/bin/time"):
        sys.exit("/usr/bin/time is missing (apt-get install time)")
    os.makedirs(a.dir, exist_ok=True)
    quiet = dtcast_quiet_flag(exe) if "dtcast" in a.tools else []
    impl = subprocess.run([a.python, os.path.join(HERE, "files_numpy.py"), "--which", "--to",
                           "bfloat16", "--impl", a.impl], capture_output=True, text=True)
    impl = impl.stdout.strip() or "unavailable (%s)" % impl.stderr.strip()[-200:]

    jobs = []
    for i, gib in enumerate(a.sizes):
        path = os.path.join(a.dir, "weights-%s.npy" % size_label(gib).replace(" ", ""))
        for to in ("bfloat16", "float8e4m3fn"):
            jobs.append({"name": "npy %s f32->%s" % (size_label(gib), to), "gib": gib,
                         "kind": "npy", "input": path, "to": to, "ext": ".npy", "seed": 1 + i})
    if a.st_size > 0:
        path = os.path.join(a.dir, "model-%s.safetensors" % size_label(a.st_size).replace(" ", ""))
        jobs.append({"name": "safetensors %s ->bfloat16" % size_label(a.st_size),
                     "gib": a.st_size, "kind": "safetensors", "input": path, "to": "bfloat16",
                     "ext": ".safetensors", "seed": 100})
    if a.filter:
        jobs = [j for j in jobs if a.filter in j["name"]]
    if not jobs:
        sys.exit("no job matches --filter %r" % a.filter)

    inputs = {j["input"]: j for j in jobs}
    need = sum(j["gib"] * GIB for p, j in inputs.items() if not os.path.exists(p))
    need += 2.5 * max(j["gib"] for j in jobs) * GIB  # cp's, dtcast's and numpy's outputs
    if free_bytes(a.dir) < need:
        sys.exit("%s has %.1f GiB free; these jobs need about %.1f GiB" % (
            a.dir, free_bytes(a.dir) / GIB, need / GIB))

    t_start = time.time()
    notes = ["numpy script: %s encoder (bench/files_numpy.py, %s, numpy %s)" % (
        impl, a.python, subprocess.run([a.python, "-c", "import numpy; print(numpy.__version__)"],
                                       capture_output=True, text=True).stdout.strip())]
    if "numpy" in a.tools:
        notes.append("numpy's peak RSS counts the pages of its np.load(mmap_mode='r') input that "
                     "it has touched (file-backed, reclaimable), so it grows with the file")
    if "dtcast" in a.tools:
        notes.append("dtcast: %s cast --to T%s IN OUT" % (exe, " " + " ".join(quiet) if quiet
                                                           else ""))
    if "cp" in a.tools:
        notes.append("cp: GNU coreutils cp, which copies with copy_file_range() (in the kernel, "
                     "through the page cache; a reflink where the file system has them)")
    descs = {}
    try:
        for path, j in inputs.items():
            if j["kind"] == "npy":
                descs[path] = make_npy(path, j["gib"], j["seed"])
            else:
                descs[path] = make_safetensors(path, j["gib"], j["seed"])
        for j in jobs:
            j["bytes"] = os.path.getsize(j["input"])
            j["input_desc"] = descs[j["input"]]
            j["rows"], j["verify"] = run_job(a, j, exe, quiet)
            annotate(j)
    finally:
        for name in os.listdir(a.dir):  # outputs left by an interrupted run
            if name.startswith("out-"):
                rm(os.path.join(a.dir, name))
        if not a.keep:
            for path in inputs:
                rm(path)
                rm(path + ".done")
            try:
                os.rmdir(a.dir)
            except OSError:
                pass
    st = [d for d in descs.values() if d["kind"] == "safetensors"]
    if st:
        notes.append("safetensors input: %d tensors (%s)" % (st[0]["tensors"], ", ".join(
            "%d %s" % (v, k) for k, v in sorted(st[0].get("dtypes", {}).items()))))
    notes.append("%.0f s in all, inputs in %s%s" % (time.time() - t_start, a.dir,
                                                    " (kept)" if a.keep else " (deleted)"))
    if a.json:
        doc = {"repeat": a.repeat, "tools": a.tools, "python": a.python, "numpy_impl": impl,
               "dtcast_flags": quiet, "machine": {"cpus": os.cpu_count(),
                                                 "kernel": platform.release()},
               "targets": {"vs_numpy": VS_NUMPY_TARGET, "vs_cp": VS_CP_TARGET,
                           "rss_mib": RSS_TARGET_MIB},
               "notes": notes, "jobs": jobs}
        json.dump(doc, sys.stdout, indent=1)
        print()
    else:
        print(fmt_table(jobs, a, notes))
    if any(j.get("verify") and not j["verify"]["equal"] for j in jobs):
        log("!!!!!!!! dtcast's output differs from the numpy script's: see the verify lines")


if __name__ == "__main__":
    main()
