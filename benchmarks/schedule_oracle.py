"""Oracle comparison of the schedule primitives with Apache TVM 0.27 (`tvm.s_tir.Schedule`).

For every program (the shipped valid examples and, when given, the TVM test-suite corpus of
`benchmarks/corpus_extract.py`) that both tirkit and TVM parse and that has one TIR
function, the same calls are made in both: for each block (at most --blocks), split the
outermost loop, fuse the two outermost, swap the two innermost, parallel / bind the
outermost (to blockIdx.x; with `--bind-axis threadIdx.x` bind the innermost to it),
vectorize / unroll the innermost, compute_at under the first loop of its first
consumer, reverse_compute_at under the first loop of its first producer, compute_inline,
reverse_compute_inline, cache_read / cache_write of buffer 0, decompose_reduction at the
outermost loop, blockize of the innermost loop, rfactor of the innermost reduction loop
(factor axis 0), reindex of read buffer 0, pad_einsum to multiples of 32.

Both start from the same IR: tirkit's tirx printing of the program, parsed by TVM. tirkit's
result is printed in tirx spelling and parsed by TVM; the two are compared with
`tvm.ir.structural_equal`. A call that both refuse counts as agreement.

    python benchmarks/schedule_oracle.py [--corpus /work/corpus/classic] [--limit N]
        [--out benchmarks/results/schedule.md] [--prims split,fuse] [--jobs 2]
        [--records FILE.jsonl] [--files FILE] [--diffs DIR] [--bind-axis threadIdx.x]

`--records` writes one JSON line per call that is not `equal` or refused by both (program,
call, outcome, detail); `--files` runs only the programs listed in a file (one path per line,
e.g. taken from a records file), to iterate on the calls that differ.
"""
from __future__ import annotations

import argparse
import collections
import glob
import json
import os
import re
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "language"))

import host  # noqa: E402  (benchmarks/host.py: where this ran)
import tirkit  # noqa: E402
from tirkit.schedule import Schedule, ScheduleError  # noqa: E402

PRIMS = ["split", "fuse", "reorder", "parallel", "vectorize", "unroll", "bind", "compute_at",
         "reverse_compute_at", "compute_inline", "reverse_compute_inline", "cache_read",
         "cache_write", "decompose_reduction", "blockize", "rfactor", "reindex", "pad_einsum"]


def tvm_text(mod) -> str:
    text = tirkit.to_script(mod, spelling="tirx")
    text = "\n".join(line for line in text.splitlines()
                     if not line.startswith("from tvm.script import"))
    # TVM 0.27 spells a block's own allocation `T.sblock_alloc_buffer`
    return re.sub(r"= T\.alloc_buffer\(", "= T.sblock_alloc_buffer(", text)


def tvm_module(mod):
    """tirkit's module as TVM reads its tirx print: an IRModule (a lone function as "main")."""
    import tvm
    parsed = tvm.script.from_source(tvm_text(mod))
    return parsed if isinstance(parsed, tvm.IRModule) else tvm.IRModule({"main": parsed})


def tvm_parse(mod):
    from tvm import s_tir
    return s_tir.Schedule(tvm_module(mod)).mod


def first_func(module):
    """The first PrimFunc of a tirkit module."""
    f = module.prim_funcs()[0]
    return f[1] if isinstance(f, tuple) else f


def specs_for(sch: Schedule, max_blocks, bind_axis="blockIdx.x"):
    """Calls as data: ('prim', block name, args) with loops as ('loop', block, index);
    `bind` binds the outermost loop to a blockIdx axis, the innermost to a threadIdx one."""
    out = []
    names = [i.block.name_hint for i in sch.index(sch._default).order
             if i.scope is not None]
    for name in names[:max_blocks]:
        b = sch.get_block(name)
        info = sch.block_info(b)
        loops = info.loops
        L = lambda k: ("loop", name, k)  # noqa: E731
        if loops:
            ext = loops[0].extent
            if hasattr(ext, "value") and ext.value > 1:
                d = next((x for x in (8, 4, 2) if ext.value % x == 0 and ext.value > x), 4)
                out.append(("split", name, [L(0), [None, d]]))
            out.append(("parallel", name, [L(0)]))
            out.append(("bind", name, [L(0) if bind_axis.startswith("blockIdx")
                                       else L(len(loops) - 1), bind_axis]))
            out.append(("vectorize", name, [L(len(loops) - 1)]))
            out.append(("unroll", name, [L(len(loops) - 1)]))
            out.append(("blockize", name, [L(len(loops) - 1)]))
        if len(loops) >= 2:
            out.append(("fuse", name, [L(0), L(1)]))
            out.append(("reorder", name, [L(len(loops) - 1), L(len(loops) - 2)]))
        cons = sch.get_consumers(b)
        if cons and sch.block_info(cons[0]).loops:
            out.append(("compute_at", name, [("block", name), ("loop", cons[0].name, 0)]))
        prods = sch.get_producers(b)
        if prods and sch.block_info(prods[0]).loops:
            out.append(("reverse_compute_at", name,
                        [("block", name), ("loop", prods[0].name, 0)]))
        out.append(("compute_inline", name, [("block", name)]))
        out.append(("reverse_compute_inline", name, [("block", name)]))
        out.append(("cache_read", name, [("block", name), 0, "shared"]))
        out.append(("cache_write", name, [("block", name), 0, "local"]))
        if info.block.init is not None and loops:
            out.append(("decompose_reduction", name, [("block", name), L(0)]))
            red = [k for k, lp in enumerate(loops)
                   if any(iv.kind == "R" and _uses(v, lp.loop_var) for iv, v in
                          zip(info.block.iter_vars, info.realize.iter_values))]
            if red:
                out.append(("rfactor", name, [L(red[-1]), 0]))
        out.append(("reindex", name, [("block", name), ("read", 0)]))
        out.append(("pad_einsum", name, [("block", name), [32] * len(info.block.iter_vars)]))
    return out


def _uses(e, var):
    from tirkit.ir.visit import uses_var
    return uses_var(e, var)


def resolve(arg, get_block, get_loops):
    if isinstance(arg, tuple) and arg and arg[0] == "block":
        return get_block(arg[1])
    if isinstance(arg, tuple) and arg and arg[0] == "loop":
        return get_loops(get_block(arg[1]))[arg[2]]
    return arg


def run_ours(mod, spec):
    sch = Schedule(mod)
    prim, _, args = spec
    args = [resolve(a, sch.get_block, sch.get_loops) for a in args]
    getattr(sch, prim)(*args)
    return sch.mod


def run_tvm(tmod, spec):
    from tvm import s_tir
    sch = s_tir.Schedule(tmod)
    prim, _, args = spec
    args = [resolve(a, sch.get_sblock, sch.get_loops) for a in args]
    getattr(sch, prim)(*args)
    return sch.mod


def load_programs(corpus, limit):
    progs = []
    for p in sorted(glob.glob(os.path.join(ROOT, "..", "shared", "examples", "valid", "*.py"))
                    + sorted(glob.glob("/work/shared/examples/valid/*.py"))):
        progs.append(p)
    progs = list(dict.fromkeys(os.path.realpath(p) for p in progs))
    if corpus:
        man = json.load(open(os.path.join(corpus, "manifest.json")))
        files = [e for e in man.get("entries", [])]
        chosen = []
        for e in files:
            f = e.get("file") or e.get("path")
            if f and "tir_schedule" in f and e.get("tvm_parses"):
                chosen.append(os.path.join(corpus, f))
        if not chosen:
            chosen = sorted(glob.glob(os.path.join(corpus, "test_tir_schedule_*.py")))
        progs += chosen
    return progs[:limit] if limit else progs


def _equal(a, b) -> bool:
    try:
        import tvm
        tvm.ir.assert_structural_equal(a, b)
        return True
    except ValueError:
        return False
    except Exception:
        import tvm_ffi
        return bool(tvm_ffi.structural_equal(a, b))


def _well_formed(mod) -> bool:
    from tvm import s_tir
    try:
        return bool(s_tir.analysis.verify_well_formed(mod, False))
    except Exception:                   # noqa: BLE001 - the checker itself failed
        return False


def run_program(path, blocks, only, bind_axis="blockIdx.x"):
    """(used, records) for one program; a record is (prim, outcome, detail, diff text)."""
    text = open(path, encoding="utf-8").read()
    r = tirkit.parse(text, path)
    if any(d.severity == "error" for d in r.diagnostics) or len(r.module.prim_funcs()) != 1 \
            or len(r.module.functions) != 1:
        return False, []
    try:
        tmod = tvm_parse(r.module)
    except Exception:
        return False, []
    try:
        specs = specs_for(Schedule(r.module), blocks, bind_axis)
    except Exception:                   # a program our queries cannot read: skipped
        return True, []
    records = []
    input_ok = _well_formed(tmod)       # judge TVM's results only where its input passes
    for spec in specs:
        prim = spec[0]
        if only and prim not in only:
            continue
        tvm_err = ours_err = None
        crash = False
        try:
            want = run_tvm(tmod, spec)
        except Exception as e:          # TVM refused
            tvm_err = str(e).strip().splitlines()[-1][:160] if str(e).strip() else repr(e)
        try:
            got = run_ours(r.module, spec)
        except ScheduleError as e:
            ours_err = e.kind
        except Exception as e:          # a crash of ours: count and keep going
            ours_err = f"CRASH {type(e).__name__}: {e}"
            crash = True
        if crash:
            records.append((prim, "crash", ours_err, None))
        if not tvm_err and input_ok and not _well_formed(want):
            # TVM accepted the call but made a program its own checker rejects (e.g. a
            # reader left loading a buffer nothing allocates): no correct result equals it
            records.append((prim, "tvm_ill_formed", ours_err or "", None))
            continue
        if tvm_err and ours_err:
            records.append((prim, "both_refuse", "", None))
        elif tvm_err:
            records.append((prim, "only_tvm_refuses", tvm_err, None))
        elif ours_err:
            records.append((prim, "only_ours_refuses", ours_err, None))
        else:
            try:
                mine = tvm_parse(got)
            except Exception as e:
                records.append((prim, "ours_unparsable", str(e).splitlines()[-1][:160], None))
                continue
            if _equal(mine, want):
                records.append((prim, "equal", "", None))
            else:
                records.append((prim, "different", "", f"# {path}\n# {spec}\n# --- TVM\n"
                                f"{want.script()}\n# --- tirkit\n{mine.script()}\n"))
    return True, records


def _isolated(path, blocks, only, bind_axis):
    """run_program in a forked child, so that a crash inside TVM costs one program."""
    import multiprocessing as mp
    ctx = mp.get_context("fork")
    recv, send = ctx.Pipe(duplex=False)

    def child():
        try:
            send.send(run_program(path, blocks, only, bind_axis))
        except BaseException as e:      # noqa: BLE001 - reported to the parent
            send.send(("error", repr(e)))
        finally:
            send.close()
    p = ctx.Process(target=child)
    p.start()
    send.close()
    try:
        out = recv.recv()
    except EOFError:
        out = None
    p.join()
    if out is None or (isinstance(out, tuple) and out and out[0] == "error"):
        return None
    return out


def _run_all(programs, blocks, only, jobs, bind_axis):
    """(path, result) for each program, `jobs` programs at a time, in order."""
    if jobs <= 1:
        for path in programs:
            yield path, _isolated(path, blocks, only, bind_axis)
        return
    from concurrent.futures import ThreadPoolExecutor
    with ThreadPoolExecutor(jobs) as pool:     # each task forks its own child process
        yield from zip(programs, pool.map(lambda p: _isolated(p, blocks, only, bind_axis),
                                          programs))


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default=None)
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--blocks", type=int, default=3)
    ap.add_argument("--out", default=os.path.join(ROOT, "benchmarks", "results", "schedule.md"))
    ap.add_argument("--diffs", default=None, help="write differing pairs to this folder")
    ap.add_argument("--prims", default=None, help="comma-separated primitives (default: all)")
    ap.add_argument("--jobs", type=int, default=1, help="programs run at once")
    ap.add_argument("--records", default=None, help="write non-equal calls as JSON lines")
    ap.add_argument("--files", default=None, help="run only the programs listed in this file")
    ap.add_argument("--bind-axis", default="blockIdx.x",
                    help="bind's axis: blockIdx.* binds the outermost loop, threadIdx.* the "
                    "innermost")
    args = ap.parse_args(argv)
    only = set(args.prims.split(",")) if args.prims else None
    stats = {p: collections.Counter() for p in PRIMS}
    examples = collections.defaultdict(list)
    programs = load_programs(args.corpus, args.limit)
    if args.files:
        wanted = {os.path.realpath(line.strip()) for line in open(args.files) if line.strip()}
        programs = [p for p in programs if os.path.realpath(p) in wanted]
    used = 0
    lost = []
    rec_fh = open(args.records, "w") if args.records else None
    import tvm  # noqa: F401 - loaded once here, inherited by every forked child
    from tvm import s_tir  # noqa: F401
    t0 = time.perf_counter()
    for path, res in _run_all(programs, args.blocks, only, args.jobs, args.bind_axis):
        if res is None:
            lost.append(path)
            continue
        ok, records = res
        used += bool(ok)
        for prim, outcome, detail, diff in records:
            st = stats[prim]
            if outcome == "crash":
                st["crash"] += 1
                continue
            st["calls"] += 1
            st[outcome] += 1
            if outcome not in ("both_refuse", "only_tvm_refuses", "tvm_ill_formed"):
                st["tvm_ok"] += 1
            if outcome not in ("equal", "both_refuse"):
                examples[(prim, outcome)].append((path, None, detail))
                if rec_fh:
                    rec_fh.write(json.dumps({"program": path, "prim": prim, "outcome": outcome,
                                             "detail": detail, "diff": diff}) + "\n")
            if outcome == "different" and args.diffs:
                os.makedirs(args.diffs, exist_ok=True)
                with open(os.path.join(args.diffs, f"{prim}_{st['different']}.txt"), "w") as fh:
                    fh.write(diff)
    secs = time.perf_counter() - t0
    if rec_fh:
        rec_fh.close()
    write_report(args.out, stats, examples, used, len(programs), secs, args.corpus, lost)
    print(open(args.out).read())


def write_report(out, stats, examples, used, total, secs, corpus, lost=()):
    lines = ["# Schedule primitives against TVM 0.27", "",
             *host.header({"TVM 0.27": "in a forked child per program; the primitives run "
                           "serially (TVM's thread pool is not used)"}),
             f"Programs: {used} used of {total} read (shipped valid examples"
             f"{' and the tir-schedule tests of ' + corpus if corpus else ''}; one TIR function,"
             f" parsed by both). Run time {secs:.0f} s.", "",
             "`equal` counts calls where TVM accepts the call and our result, printed in tirx "
             "spelling and parsed by TVM, is `tvm.ir.structural_equal` to TVM's; `share` is "
             "equal / TVM-accepted. `TVM ill-formed` are calls TVM accepts but whose result "
             "TVM's own `verify_well_formed` rejects: they are left out of `TVM accepts` and "
             "`share` (`share of all` counts them as misses). `refuse (both)` are calls both "
             "refuse.", "",
             "| primitive | calls | TVM accepts | equal | share | share of all | different | "
             "only we refuse | only TVM refuses | TVM ill-formed | refuse (both) | crash |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for p in PRIMS:
        s = stats[p]
        ok = s["tvm_ok"]
        share = f"{100 * s['equal'] / ok:.0f}%" if ok else "-"
        everything = ok + s["tvm_ill_formed"]
        share_all = f"{100 * s['equal'] / everything:.0f}%" if everything else "-"
        lines.append(f"| {p} | {s['calls']} | {ok} | {s['equal']} | {share} | {share_all} | "
                     f"{s['different'] + s['ours_unparsable']} | {s['only_ours_refuses']} | "
                     f"{s['only_tvm_refuses']} | {s['tvm_ill_formed']} | {s['both_refuse']} | "
                     f"{s['crash']} |")
    if lost:
        lines += ["", f"{len(lost)} program(s) crashed TVM itself (a segfault in its parser or "
                  "a primitive) and are left out: " +
                  ", ".join(f"`{os.path.basename(p)}`" for p in lost[:5])]
    lines += ["", "## Disagreements (first three of each kind)", ""]
    for (p, kind), items in sorted(examples.items()):
        lines.append(f"- **{p}**, {kind}: {len(items)}")
        for path, _spec, why in items[:3]:
            lines.append(f"  - `{os.path.basename(path)}`: {why}")
    with open(out, "w") as fh:
        fh.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
