"""Which side of a schedule-oracle difference computes the original's result?

    python benchmarks/schedule_oracle.py --corpus /work/corpus/classic --records R.jsonl
    python benchmarks/schedule_judge.py R.jsonl [--prims blockize,split]

For every call the oracle records as `different`, the original program, TVM's result and
ours (both as TVM prints them, read back by tirkit) run through tirkit's reference
interpreter on the same random inputs; each result either agrees with the original on every
buffer or does not. Programs the interpreter cannot run (symbolic shapes, GPU threads,
intrinsics) or read, and runs longer than `--timeout` seconds, are counted apart.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "language"))
sys.path.insert(0, HERE)

import tirkit  # noqa: E402
from schedule_oracle import first_func  # noqa: E402
from tirkit.codegen import interp  # noqa: E402


def _func(text):
    r = tirkit.parse(text)
    if any(d.severity == "error" for d in r.diagnostics) or not r.module.prim_funcs():
        return None, None
    return first_func(r.module), r.module


def _inputs(func, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for _, b in func.buffer_map:
        shape = tuple(int(d.value) for d in b.shape)     # symbolic: raises, counted apart
        if b.dtype.startswith(("float", "bfloat")):
            out.append(rng.standard_normal(shape).astype(b.dtype))
        else:
            out.append(rng.integers(-8, 8, shape).astype(b.dtype))
    return out


def _run(func, module, arrays):
    a = [x.copy() for x in arrays]
    interp.run_reference(func, a, module=module)
    return a


def _same(x, y):
    return all(np.allclose(p, q, rtol=1e-4, atol=1e-4, equal_nan=True) for p, q in zip(x, y))


class _TooLong(Exception):
    pass


def _alarm(signum, frame):
    raise _TooLong()


def judge(record) -> str:
    diff = record["diff"]
    tvm_text = diff.split("# --- TVM\n", 1)[1].split("# --- tirkit\n")[0]
    our_text = diff.split("# --- tirkit\n", 1)[1]
    f0, m0 = _func(open(record["program"], encoding="utf-8").read())
    ft, mt = _func(tvm_text)
    fo, mo = _func(our_text)
    if f0 is None or ft is None or fo is None:
        return "not read"
    try:
        a = _inputs(f0)
        r0, rt, ro = _run(f0, m0, a), _run(ft, mt, a), _run(fo, mo, a)
    except _TooLong:
        return "not run"
    except Exception:                   # noqa: BLE001 - outside what the interpreter runs
        return "not run"
    return (f"TVM {'agrees' if _same(r0, rt) else 'DIFFERS'}, "
            f"ours {'agrees' if _same(r0, ro) else 'DIFFERS'}")


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("records")
    ap.add_argument("--prims", default=None)
    ap.add_argument("--timeout", type=int, default=20, help="seconds per call")
    args = ap.parse_args(argv)
    signal.signal(signal.SIGALRM, _alarm)
    only = set(args.prims.split(",")) if args.prims else None
    table = collections.defaultdict(collections.Counter)
    for line in open(args.records, encoding="utf-8"):
        r = json.loads(line)
        if r["outcome"] != "different" or (only and r["prim"] not in only):
            continue
        signal.alarm(args.timeout)
        try:
            v = judge(r)
        except _TooLong:
            v = "not run"
        finally:
            signal.alarm(0)
        table[r["prim"]][v] += 1
        if "DIFFERS" in v:
            print(f"{r['prim']}: {v}: {os.path.basename(r['program'])}", flush=True)
    kinds = ["TVM agrees, ours agrees", "TVM DIFFERS, ours agrees", "TVM agrees, ours DIFFERS",
             "TVM DIFFERS, ours DIFFERS", "not run", "not read"]
    print("\n| primitive | " + " | ".join(kinds) + " |")
    print("| --- |" + " --- |" * len(kinds))
    for p, c in sorted(table.items()):
        print(f"| {p} | " + " | ".join(str(c[k]) for k in kinds) + " |")


if __name__ == "__main__":
    main()
