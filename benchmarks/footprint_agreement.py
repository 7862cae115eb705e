"""Does the shared-memory rule size each GPU buffer as lowering allocates it?

For every kernel of the TVM corpus (classic and tirx spellings) with `shared` (and
`local`/`warp`) buffers allocated in blocks, the rule's footprint (analysis.footprint.footprint, threadIdx/vthread relaxed: what
thread/shared-memory-limit sums) is compared with the shape the CUDA lowering allocates for
the buffer (the pipeline run up to region compaction, before flattening).

    .venv/bin/python benchmarks/footprint_agreement.py [--corpus DIR ...]

writes benchmarks/results/footprint.md: counts per corpus and scope, every disagreement
(with the reason where it was read by hand) and the functions lowering refuses.
"""
from __future__ import annotations

import argparse
import collections
import glob
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, os.path.dirname(__file__))

import tirkit  # noqa: E402
from tirkit.analysis import accesses, footprint  # noqa: E402
from tirkit.codegen.cuda.lower import CUDA_PIPELINE  # noqa: E402
from tirkit.codegen.passes.control import check_control_flow  # noqa: E402
from tirkit.diagnostics import TirkitError  # noqa: E402
from tirkit.ir import expr as E  # noqa: E402
from tirkit.ir import stmt as S  # noqa: E402
from tirkit.ir.visit import walk  # noqa: E402
from tirkit.verify._common import relax_thread  # noqa: E402

SCOPES = ("shared", "local", "warp")


def _relax_for(scope):
    """The loops the rule relaxes a buffer of `scope` over: thread indices for shared
    memory; none for a thread's own local/warp buffer."""
    return relax_thread if scope.startswith("shared") else (lambda lp: False)


def allocated(func):
    """{buffer name: [shape (ints, None where symbolic)]} of the GPU-scoped allocations
    lowering makes, or the diagnostic code with which lowering refuses the function."""
    body = func.body
    try:
        check_control_flow(func)
        for name, step in CUDA_PIPELINE:
            if name == "flatten_buffers":
                break
            body = step(body)
    except TirkitError as e:
        return e.diagnostics[0].code
    out = {}

    def fn(x):
        if isinstance(x, S.DeclBuffer):
            b = x.buffer
            if (b.scope or "").startswith(SCOPES):
                shape = [s.value if isinstance(s, E.IntImm) else None for s in b.shape]
                out.setdefault(b.name, []).append(shape)
    walk(body, fn)
    return out


def _n(shape):
    n = 1
    for s in shape:
        if s is None:
            return None
        n *= s
    return n


# Disagreements read by hand: (file stem, buffer) -> why.  Only `local` buffers, which no
# rule sizes: lowering places them with the CPU compaction (iterations touching separate
# elements only), below the thread bindings that enclose all their uses.
EXPLAINED = {
    ("test_tir_schedule_tensorize__decode_i4s_to_int32_to_f16__1", "B_decode_local"):
        "written and never read; lowering keeps it above the serial loop between threadIdx.y "
        "and threadIdx.x, relaxing threadIdx.x",
    ("test_tir_schedule_tensorize__tensorized_decode_i4s_to_int32_to_f16__1", "B_decode_local"):
        "a T.match_buffer view of it is passed by address to an extern function: lowering "
        "keeps the declared shape, the analysis compacts it as TVM does",
    ("test_tir_schedule_tensorize__tensorized_decode_i4s_to_int32_to_f16__1", "B_local"):
        "the same (a view passed by address)",
}


def measure(corpus):
    files = sorted(glob.glob(os.path.join(corpus, "*.py")))
    counts = collections.Counter()
    rows, refused = [], []
    for path in files:
        try:
            result = tirkit.parse(open(path).read(), path)
        except Exception:
            continue
        if any(d.severity == "error" for d in result.diagnostics):
            continue
        for fname, func in result.module.prim_funcs():
            try:
                fa = accesses(func)
            except Exception:
                continue
            bufs = [b for b, _ in fa.allocs if (b.scope or "").startswith(SCOPES)]
            if not bufs:
                continue
            low = allocated(func)
            for b in bufs:
                scope = b.scope.split(".")[0]
                rule = footprint(fa, b, _relax_for(b.scope))
                if isinstance(low, str):
                    counts[scope, "not lowered"] += 1
                    refused.append((scope, os.path.basename(path), fname, b.name, low))
                    continue
                got = low.get(b.name)
                if not got or len(got) != 1:
                    counts[scope, "not found once in the lowered code"] += 1
                    continue
                counts[scope, "buffers"] += 1
                if _n(rule) == _n(got[0]):
                    counts[scope, "agree"] += 1
                else:
                    counts[scope, "disagree"] += 1
                    rows.append((scope, os.path.basename(path), fname, b.name, rule, got[0]))
    return len(files), counts, rows, refused


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", nargs="+", default=["/work/corpus/classic", "/work/corpus/tirx"])
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "footprint.md"))
    args = ap.parse_args(argv)
    t0 = time.time()
    results = [(c, *measure(c)) for c in args.corpus]
    write(args.out, results, time.time() - t0)
    for corpus, _, counts, _, _ in results:
        for k, v in sorted(counts.items()):
            print(os.path.basename(corpus), k, v)
    return 0


def _x(shape):
    return "x".join(str(e) for e in shape)


def write(out, results, seconds):
    lines = ["# Footprint agreement: the shared-memory rule against lowering", "",
             "`.venv/bin/python benchmarks/footprint_agreement.py` "
             f"({seconds:.0f} s).  For each GPU-scoped buffer allocated in a block: the "
             "extents the rule counts (`analysis.footprint.footprint`, threadIdx/vthread "
             "relaxed for shared buffers) and the shape the CUDA lowering allocates (its "
             "pipeline up to region compaction).  The rule sizes shared buffers only; local "
             "and warp buffers are listed for completeness.", "",
             "| corpus | files | scope | buffers compared | agree | disagree | not lowered | "
             "not found once |", "|---|---:|---|---:|---:|---:|---:|---:|"]
    for corpus, nfiles, counts, _, _ in results:
        for scope in sorted({k[0] for k in counts}):
            lines.append(f"| {os.path.basename(corpus)} | {nfiles} | {scope} | "
                         f"{counts[scope, 'buffers']} | {counts[scope, 'agree']} | "
                         f"{counts[scope, 'disagree']} | {counts[scope, 'not lowered']} | "
                         f"{counts[scope, 'not found once in the lowered code']} |")
    rows = [(os.path.basename(c), *r) for c, _, _, rs, _ in results for r in rs]
    lines += ["", "## Disagreements", ""]
    if not rows:
        lines.append("None.")
    else:
        lines += ["| corpus | scope | file | function | buffer | rule | lowering | why |",
                  "|---|---|---|---|---|---|---|---|"]
        for c, scope, f, fn, b, r, g in rows:
            why = EXPLAINED.get((f[:-3], b), "not reviewed")
            lines.append(f"| {c} | {scope} | {f} | {fn} | {b} | {_x(r)} | {_x(g)} | {why} |")
    refused = [(os.path.basename(c), *r) for c, _, _, _, rs in results for r in rs]
    lines += ["", "## Not lowered (no allocation to compare)", ""]
    if not refused:
        lines.append("None.")
    else:
        lines += ["| corpus | scope | file | function | buffer | lowering's diagnostic |",
                  "|---|---|---|---|---|---|"]
        lines += [f"| {c} | {s} | {f} | {fn} | {b} | `{code}` |"
                  for c, s, f, fn, b, code in refused]
    Path(out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
