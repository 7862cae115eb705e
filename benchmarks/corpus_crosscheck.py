"""Cross-check two validation rules against TVM 0.27's own analyses on the corpus.

    python benchmarks/corpus_crosscheck.py [--corpus /work/corpus]

For every TVM-parsable program (tirx folder: the same programs as classic, current spelling)
that tirkit flags with

- `thread/shared-memory-limit`: the compacted shape we give each `shared` buffer is compared
  with the shape TVM allocates after `LowerInitBlock`, `PlanAndUpdateBufferAllocationLocation`,
  `ConvertBlocksToOpaque` and `CompactBufferAllocation`;
- `bounds/out-of-bounds`: TVM's `s_tir.analysis.OOBChecker` must report an access out of
  bounds too.

Prints one line per program and a summary; exits 1 when a check disagrees.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "language"))
sys.path.insert(0, HERE)

import tirkit  # noqa: E402
from tirkit.analysis import regions as R  # noqa: E402
from tirkit.verify._common import relax_thread  # noqa: E402
from schedule_oracle import first_func, tvm_module  # noqa: E402

_SHARED = re.compile(r"(\w+) = T\.(?:sblock_)?alloc_buffer\(\(([^)]*)\), [^\n]*scope=\"shared")


def shared_shapes(module):
    """(ours, TVM's): {buffer name: compacted shape} of the shared buffers."""
    import tvm
    from tvm import s_tir
    fa = R.accesses(first_func(module), {})
    ours = {b.name: tuple(R.footprint(fa, b, relax_thread))
            for b, _ in fa.allocs if b.scope.startswith("shared")}
    passes = tvm.transform.Sequential([
        s_tir.transform.LowerInitBlock(), s_tir.transform.PlanAndUpdateBufferAllocationLocation(),
        s_tir.transform.ConvertBlocksToOpaque(), s_tir.transform.CompactBufferAllocation()])
    text = passes(tvm_module(module)).script()
    theirs = {n: tuple(int(x) for x in re.findall(r"\d+", shape))
              for n, shape in _SHARED.findall(text)}
    return ours, theirs


def tvm_finds_oob(module) -> bool:
    from tvm import s_tir
    try:
        s_tir.analysis.OOBChecker()(tvm_module(module))
    except Exception as e:  # noqa: BLE001 - TVM reports an out-of-bounds access by raising
        return "Out of bounds memory access" in str(e)
    return False


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=os.environ.get("TIRKIT_CORPUS", "/work/corpus"))
    args = ap.parse_args(argv)
    folder = os.path.join(args.corpus, "tirx")
    man = json.load(open(os.path.join(folder, "manifest.json")))
    agree = disagree = 0
    for e in man.get("entries", []):
        f = e.get("file") or e.get("path")
        if not f or not e.get("tvm_parses"):
            continue
        path = os.path.join(folder, f)
        text = open(path, encoding="utf-8").read()
        codes = {d.code for d in tirkit.check(text, path) if d.severity == "error"}
        wanted = codes & {"thread/shared-memory-limit", "bounds/out-of-bounds"}
        if not wanted:
            continue
        module = tirkit.parse(text, path).module
        if len(module.prim_funcs()) != 1:
            continue
        if "thread/shared-memory-limit" in wanted:
            ours, theirs = shared_shapes(module)
            ok = all(theirs.get(k) == v for k, v in ours.items())
            print(f"{'same' if ok else 'DIFFERENT'} shared shapes  {f}  {ours}"
                  + ("" if ok else f" TVM {theirs}"))
            agree += ok
            disagree += not ok
        if "bounds/out-of-bounds" in wanted:
            ok = tvm_finds_oob(module)
            print(f"{'TVM agrees' if ok else 'TVM SEES NONE'}  out of bounds  {f}")
            agree += ok
            disagree += not ok
    print(f"\n{agree} checks agree with TVM, {disagree} disagree")
    return 1 if disagree else 0


if __name__ == "__main__":
    sys.exit(main())
