"""Constants benchmark: laziness of `.params` files, param-dict I/O against TVM, and a 100k-element
constant as our external file against TVM's printed metadata form.

    PYTHONPATH=language python benchmarks/bench_constants.py [--out benchmarks/results/constants.md]

1. Laziness: `tirkit.check` of a script whose `.params` file holds 1 GiB (four 256 MiB float32
   tensors) against the same script over a 1 KiB file (same names, 64 values each); each run
   in a fresh process, time and resident-memory growth of the check alone.
2. Writing and loading 100 MB of constants (four 25 MB float32 tensors): ours (`params.save`,
   `open_index` + arrays) against `tvm.runtime.save_param_dict` / `load_param_dict`.
3. A 100k-element float32 constant: script size and parse time, ours (script + `.params`) against
   TVM's `script(show_meta=True)` text parsed by `tvm.script.from_source`.
Every temporary file lives in a temporary folder that is deleted at the end.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "language"))

import host  # noqa: E402  (benchmarks/host.py: where this ran)
from tirkit.script import params as P  # noqa: E402

NAMES = ["w0", "w1", "w2", "w3"]

SCRIPT = '''from tvm.script import tir as T
from tirkit.script import params
P = params.load("{file}")


@T.prim_func
def f(A: T.Buffer((64,), "float32")):
{consts}    for i in range(64):
        A[i] = A[i] * T.float32(2)
'''


def script_for(file, n):
    consts = "".join(f'    {k} = T.allocate_const(P["{k}"], "float32", [{n}])\n' for k in NAMES)
    return SCRIPT.format(file=file, consts=consts)


def median(xs):
    return statistics.median(xs)


# ---- 1. laziness ----------------------------------------------------------------------------
def write_big(path, n):
    """Four float32 tensors of n values each, written by parts (real data, not a sparse file)."""
    import struct
    names = b"".join(struct.pack("<Q", len(k)) + k.encode() for k in NAMES)
    chunk = np.arange(1 << 22, dtype=np.float32)          # 16 MiB
    with open(path, "wb") as fh:
        fh.write(struct.pack("<QQQ", P.MAGIC, 0, len(NAMES)) + names
                 + struct.pack("<Q", len(NAMES)))
        for _ in NAMES:
            fh.write(struct.pack("<QQiiiBBH", P.TENSOR_MAGIC, 0, 1, 0, 1, 2, 32, 1)
                     + struct.pack("<qq", n, 4 * n))
            left = n
            while left:
                k = min(left, chunk.size)
                fh.write(chunk[:k].tobytes())
                left -= k


CHILD = r'''
import json, sys, time
sys.path.insert(0, sys.argv[1])
import tirkit
def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
warm = open(sys.argv[4]).read()
tirkit.check(warm, sys.argv[5])            # grammar, imports, caches of the code itself
text = open(sys.argv[2]).read()
r0 = rss()
t0 = time.perf_counter()
diags = tirkit.check(text, sys.argv[2])
t1 = time.perf_counter()
r1 = rss()
print(json.dumps({"s": t1 - t0, "rss": r1 - r0, "errors": [d.code for d in diags]}))
'''


def laziness(tmp, runs):
    big_n = (1 << 30) // 16                      # 4 x 256 MiB = 1 GiB
    small_n = 64                                  # 4 x 256 B = 1 KiB
    t0 = time.perf_counter()
    write_big(os.path.join(tmp, "big.params"), big_n)
    write_s = time.perf_counter() - t0
    write_big(os.path.join(tmp, "small.params"), small_n)
    files = {}
    for name, n in (("big", big_n), ("small", small_n)):
        path = os.path.join(tmp, f"{name}.py")
        with open(path, "w") as fh:
            fh.write(script_for(f"{name}.params", n))
        files[name] = path
    warm = os.path.join(tmp, "warm.py")
    with open(warm, "w") as fh:
        fh.write(script_for("none.params", 8).replace('P["', 'Q["'))
    res = {"big": [], "small": []}
    for _ in range(runs):
        for name in ("small", "big"):          # interleaved, so drift hits both alike
            out = subprocess.run([sys.executable, "-c", CHILD, os.path.join(ROOT, "language"),
                                  files[name], "", warm, warm], capture_output=True, text=True,
                                 check=True)
            r = json.loads(out.stdout.strip().splitlines()[-1])
            assert r["errors"] == [], r
            res[name].append(r)
    sizes = {k: os.path.getsize(os.path.join(tmp, f"{k}.params")) for k in res}
    for k in res:
        os.unlink(os.path.join(tmp, f"{k}.params"))
    return {
        "sizes": sizes, "write_s": write_s,
        "time": {k: median([r["s"] for r in v]) for k, v in res.items()},
        "rss": {k: median([r["rss"] for r in v]) for k, v in res.items()},
        "rss_max": {k: max(r["rss"] for r in v) for k, v in res.items()},
        "runs": runs,
    }


# ---- 2. 100 MB write / load -----------------------------------------------------------------
def io_100mb(tmp, runs):
    rng = np.random.default_rng(0)
    arrays = {k: rng.standard_normal(25_000_000 // 4).astype(np.float32) for k in NAMES}
    total = sum(a.nbytes for a in arrays.values())
    ours, theirs = os.path.join(tmp, "ours.params"), os.path.join(tmp, "tvm.params")
    out = {"bytes": total, "ours": {}, "tvm": {}}
    w, lazy, full = [], [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        P.save(ours, arrays)
        w.append(time.perf_counter() - t0)
        P._index_cache.clear()
        t0 = time.perf_counter()
        index = P.open_index(ours)
        lazy.append(time.perf_counter() - t0)
        got = {e.name: np.array(e.load()) for e in index}
        full.append(time.perf_counter() - t0)
        assert all(got[k].tobytes() == arrays[k].tobytes() for k in arrays)
        del got, index
        P._index_cache.clear()
    out["ours"] = {"write": median(w), "open": median(lazy), "load": median(full)}
    try:
        import tvm
        from tvm import runtime
    except ImportError:
        out["tvm"] = None
        return out
    w, full = [], []
    for _ in range(runs):
        t0 = time.perf_counter()
        data = runtime.save_param_dict({k: runtime.tensor(v) for k, v in arrays.items()})
        with open(theirs, "wb") as fh:
            fh.write(bytes(data))
        w.append(time.perf_counter() - t0)
        del data
        t0 = time.perf_counter()
        with open(theirs, "rb") as fh:
            loaded = runtime.load_param_dict(fh.read())
        got = {k: v.numpy() for k, v in loaded.items()}
        full.append(time.perf_counter() - t0)
        assert all(got[k].tobytes() == arrays[k].tobytes() for k in arrays)
        del got, loaded
    out["tvm"] = {"write": median(w), "load": median(full), "version": tvm.__version__}
    with open(ours, "rb") as a, open(theirs, "rb") as b:
        out["identical"] = a.read() == b.read()
    os.unlink(ours)
    os.unlink(theirs)
    return out


# ---- 3. a 100k-element constant -----------------------------------------------------------------
def constant_100k(tmp, runs):
    import tirkit
    from tirkit.script import parse as parse_mod
    n = 100_000
    arr = np.random.default_rng(1).standard_normal(n).astype(np.float32)
    pfile = os.path.join(tmp, "c.params")
    P.save(pfile, {"w": arr})
    text = ('from tvm.script import tir as T\nfrom tirkit.script import params\n'
            'P = params.load("c.params")\n\n\n@T.prim_func\ndef f(A: T.Buffer((64,), "float32")):\n'
            f'    w = T.allocate_const(P["w"], "float32", [{n}])\n'
            '    for i in range(64):\n        A[i] = A[i] * T.float32(2)\n')
    spath = os.path.join(tmp, "c.py")
    lazy, full = [], []
    for _ in range(runs):
        parse_mod._parse_cache.clear()
        parse_mod._kernel_cache.clear()
        P._index_cache.clear()
        t0 = time.perf_counter()
        r = tirkit.parse(text, spath)
        lazy.append(time.perf_counter() - t0)
        vals = np.array(r.module.constants["w"].array())      # a copy: every byte read
        assert vals.tobytes() == arr.tobytes() and not r.diagnostics
        full.append(time.perf_counter() - t0)
    out = {"ours": {"script": len(text.encode()), "params": os.path.getsize(pfile),
                    "parse": median(lazy), "parse_load": median(full)}}
    try:
        import tvm
        from tvm import relax
    except ImportError:
        out["tvm"] = None
        return out
    bb = relax.BlockBuilder()
    x = relax.Var("x", relax.TensorType((n,), "float32"))
    with bb.function("main", [x]):
        y = bb.emit(relax.op.add(x, relax.const(arr)))
        bb.emit_func_output(y)
    ttext = bb.get().script(show_meta=True)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        m = tvm.script.from_source(ttext)
        times.append(time.perf_counter() - t0)
    const = m["main"].body.blocks[0].bindings[0].value.args[1]
    assert const.value.numpy().tobytes() == arr.tobytes()
    out["tvm"] = {"script": len(ttext.encode()), "parse": median(times)}
    return out


# ---- report ---------------------------------------------------------------------------------
def mb(x):
    return f"{x / 1e6:.1f} MB"


def ms(x):
    return f"{x * 1e3:.1f} ms"


def report(lz, io, c100k) -> str:
    L = ["# Constants benchmark", "",
         *host.header({"TVM `save/load_param_dict`, `tvm.script.from_source`":
                       "in-process calls that run serially (no TVM thread pool involved)"}),
         "Medians; both sides of each comparison measured in the same run.", ""]
    if lz:
        d = lz["time"]["big"] - lz["time"]["small"]
        L += ["## Laziness: `tirkit.check` over a 1 GiB `.params` file", "",
              f"Fresh process per run ({lz['runs']} runs each, interleaved); the check alone is "
              "timed, after a warm-up check of another script. Target: within 20 ms of the 1 KiB "
              "case and under 50 MB of added resident memory.", "",
              "| .params file | size | check time | RSS added (median / max) |",
              "| --- | --- | --- | --- |"]
        for k, label in (("small", "1 KiB"), ("big", "1 GiB")):
            L.append(f"| {label} | {lz['sizes'][k]:,} B | {ms(lz['time'][k])} | "
                     f"{mb(lz['rss'][k])} / {mb(lz['rss_max'][k])} |")
        ratio = lz["time"]["big"] / lz["time"]["small"]
        L += ["", f"Difference: {d * 1e3:+.1f} ms (ratio {ratio:.2f}); "
              f"writing the 1 GiB file took {lz['write_s']:.2f} s.", ""]
    if io:
        o, t = io["ours"], io["tvm"]
        L += [f"## Writing and loading {mb(io['bytes'])} of constants", "",
              "Four 25 MB float32 tensors. Ours: `params.save` (temporary file + rename); load = "
              "`open_index` + a copy of every array. TVM: `runtime.tensor` + `save_param_dict` + "
              "writing the bytes; load = reading the file + `load_param_dict` + `.numpy()`.", "",
              "| | write | load | open only (lazy) |", "| --- | --- | --- | --- |",
              f"| tirkit | {ms(o['write'])} | {ms(o['load'])} | {ms(o['open'])} |"]
        if t:
            L += [f"| TVM {t['version']} | {ms(t['write'])} | {ms(t['load'])} | — |", "",
                  f"Ratio TVM / tirkit: write {t['write'] / o['write']:.2f}x, "
                  f"load {t['load'] / o['load']:.2f}x. Files byte-identical: {io['identical']}."]
        L.append("")
    if c100k:
        o, t = c100k["ours"], c100k["tvm"]
        L += ["## A 100k-element float32 constant in a script", "",
              "Ours: the script refers to `P[\"w\"]` in a `.params` file; parse with every cache "
              "cleared, then (last column) with a copy of the values made. TVM: a Relax function "
              "holding "
              "`relax.const` printed with `script(show_meta=True)` (the tensor as a base64 JSON "
              "blob), parsed by `tvm.script.from_source`.", "",
              "| | script text | data file | parse | parse + values |",
              "| --- | --- | --- | --- | --- |",
              f"| tirkit | {o['script']:,} B | {o['params']:,} B | {ms(o['parse'])} | "
              f"{ms(o['parse_load'])} |"]
        if t:
            L += [f"| TVM metadata | {t['script']:,} B | — | {ms(t['parse'])} | "
                  f"{ms(t['parse'])} |",
                  "", f"Script text {t['script'] / o['script']:.0f}x smaller "
                  f"({t['script'] / (o['script'] + o['params']):.2f}x smaller counting the data "
                  f"file); parse with the values read {t['parse'] / o['parse_load']:.1f}x faster."]
        L.append("")
    return "\n".join(L)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "results", "constants.md"))
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--skip-gib", action="store_true", help="leave out the 1 GiB laziness test")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="tirkit-bench-") as tmp:
        lz = None if args.skip_gib else laziness(tmp, args.runs)
        io = io_100mb(tmp, args.runs)
        c = constant_100k(tmp, args.runs)
    text = report(lz, io, c)
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w") as fh:
        fh.write(text)
    print(text)


if __name__ == "__main__":
    main()
