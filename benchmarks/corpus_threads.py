"""Thread interpreter over the TVM test-suite corpus (see CORPUS.md): what the thread-bound
kernels of real programs do when `tirkit run` runs them without a GPU.

For every program TVM parses that binds a loop to GPU threads and that `tirkit check` finds
no error in, each thread-bound kernel runs in the thread interpreter (codegen/cuda/threads.py)
on random inputs, the first and last blocks of each grid dimension (`--blocks`), with its race
detector.  Outcomes: ran; refused (`codegen/unsupported`: what the CUDA lowering does not
generate; `codegen/argument`: a dtype numpy has no array of); a race, an access out of bounds or another error the run reports; over the CPU
limit; an internal error (a bug of ours).  Every race and out-of-bounds report is listed with
why the program itself has it, read by hand (`VERDICTS`); one not listed there is marked
"not reviewed".  Writes benchmarks/results/corpus_threads.md.

    python benchmarks/corpus_threads.py --corpus /work/corpus --jobs 2
"""
from __future__ import annotations

import argparse
import collections
import json
import multiprocessing as mp
import os
import re
import signal
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "language"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import host  # noqa: E402  (benchmarks/host.py: where this ran)

REFUSALS = ("codegen/unsupported", "codegen/argument")    # what the run does not do
THREADED = re.compile(r"thread_binding|launch_thread|threadIdx|blockIdx")

# Reports read by hand: (file name substring, kernel) -> why the program has it.
VERDICTS = {
    ("tvmscript_syntax_sugar__loop_syntax_sugar", "loop_syntax_sugar"):
        "every thread of the nest read-modify-writes `A[i, j, k, x]`, which does not depend "
        "on threadIdx.x: a race in the program (a parser test, never run)",
    ("tvmscript_syntax_sugar__loop_no_syntax_sugar", "loop_no_syntax_sugar"):
        "the same nest as `loop_syntax_sugar`, spelled without the sugar: the same race",
    ("memhammer_lower_auto_copy__", "main"):
        "an `auto_copy` block, the input of TVM's memhammer lowering (LowerAutoCopy), which "
        "spreads the copy over the threads; run as written, every thread copies the whole "
        "tile from its own accumulator fragment, which nothing wrote, so the threads write "
        "different values",
    ("lift_thread_binding__expected", "expected"):
        "every thread stores `C[...]` from its own local `D_local`, which only thread 0's "
        "write-back filled (TVM's expected IR guards the local write-back by `threadIdx_x == "
        "0`): the other threads store values nothing wrote, a race in the program (a "
        "transform test's expected IR, never run)",
    ("tir_transform_simplify__func__3", "func"):
        "the threadIdx.y threads of one threadIdx.x store `A_ptr[tx]` each from another "
        "element of `C_ptr`: a race in the program (a simplifier test's input, never run)",
    ("split_host_device__expected__1", "default_function_kernel"):
        "the grid size is the scalar parameter `num_blocks`, which the host function sets "
        "to `(seq_len + 127) // 128`; the run draws it at random, here negative",
    ("split_host_device__Before__14", "kernel"):
        "`n + 1` threads store `A[i]` of a 16-element `A`: only `n <= 15` is valid, and the "
        "run draws the scalar `n` at random",
    ("split_host_device__Expected__11", "kernel"):
        "TVM's expected output of `split_host_device__Before__14`: the same kernel, valid "
        "only for `n <= 15`",
    ("merge_dynamic_shared_memory_allocations__func__4", "func"):
        "`B_sh`, declared with 128 elements over a 1024-byte pool, is stored at "
        "`threadIdx_x + 128`: outside its declared shape, inside the pool (a test of merged "
        "allocations' offsets, never run)",
    ("transform_default_gpu_schedule__Expected", "broadcast_to"):
        "the output's symbolic shape `(x_0, x_1)` broadcasts a `(3, 1)` input, so only "
        "`x_0 = 3` is valid; the random sizes of the run are others (`tirkit run --size "
        "x_0=3` runs it)",
}


class _Timeout(Exception):
    pass


def _alarm(*_):
    raise _Timeout()


def _run_file(job):
    """[(kernel, outcome, detail)] of one program (run in a worker process)."""
    path, cpu = job
    import numpy as np
    import tirkit
    from tirkit.codegen.cuda import is_thread_bound
    from tirkit.codegen.cuda.threads import run_threads
    from tirkit.codegen.inputs import make_inputs, make_scalars
    from tirkit.diagnostics import TirkitError
    signal.signal(signal.SIGVTALRM, _alarm)
    text = Path(path).read_text()
    try:
        if any(d.severity == "error" for d in tirkit.check(text, path)):
            return [("", "errors (not run)", "")]
        result = tirkit.parse(text, path)
    except Exception as e:                      # noqa: BLE001 - a bug of ours, counted
        return [("", "internal error", f"check: {type(e).__name__}: {e}"[:300])]
    out = []
    for name, func in result.module.prim_funcs():
        if not is_thread_bound(func):
            continue
        try:
            rng = np.random.default_rng(0)
            arrays, scalars = make_inputs(func, rng, None), make_scalars(func, rng, None)
            signal.setitimer(signal.ITIMER_VIRTUAL, cpu)
            try:
                run_threads(func, arrays, scalars, module=result.module, blocks=2)
            finally:
                signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            out.append((name, "ran", ""))
        except _Timeout:
            out.append((name, f"over {cpu:g} s of CPU", ""))
        except TirkitError as e:
            d = e.diagnostics[0]
            where = f"{d.span.line}: " if d.span else ""
            out.append((name, d.code, where + d.message))
        except MemoryError:
            out.append((name, "out of memory", ""))
        except Exception as e:                  # noqa: BLE001 - a bug of ours, counted
            out.append((name, "internal error", f"{type(e).__name__}: {e}"[:300]))
    return out


def _programs(corpus: Path):
    """Files of the programs TVM parses that bind GPU threads, per spelling."""
    out = []
    for spelling in ("classic", "tirx"):
        folder = corpus / spelling
        manifest = json.loads((folder / "manifest.json").read_text())
        for e in manifest["entries"]:
            path = folder / e["file"]
            if e.get("tvm_parses") and THREADED.search(path.read_text()):
                out.append((spelling, str(path)))
    return out


def _verdict(path, kernel):
    for (key, name), why in VERDICTS.items():
        if key in path and name == kernel:
            return why
    return "**not reviewed**"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--corpus", default="/work/corpus")
    ap.add_argument("--cpu", type=float, default=20.0,
                    help="seconds of CPU per kernel (a busy machine does not change which "
                    "kernels pass it)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    programs = _programs(Path(args.corpus))
    t0 = time.time()
    outcomes = {s: collections.Counter() for s in ("classic", "tirx")}
    refused = collections.Counter()
    reports = []
    with mp.get_context("spawn").Pool(args.jobs, maxtasksperchild=20) as pool:
        jobs = [(path, args.cpu) for _, path in programs]
        for (spelling, path), rows in zip(programs, pool.imap(_run_file, jobs)):
            for kernel, outcome, detail in rows:
                if outcome in REFUSALS:
                    refused[re.sub(r"'[^']*'|\d+", "…", detail.split(": ", 1)[-1])[:90]] += 1
                outcomes[spelling][outcome] += 1
                if outcome not in ("ran", "errors (not run)") + REFUSALS and \
                        not outcome.startswith("over "):
                    reports.append((spelling, os.path.basename(path), kernel, outcome, detail))
    write(programs, outcomes, refused, reports, time.time() - t0, args)
    return 0


def write(programs, outcomes, refused, reports, seconds, args):
    out = ["# Thread interpreter over the TVM test-suite corpus", "",
           *host.header({"the thread interpreter": "tirkit's own, one process per job"}),
           f"{len(programs)} programs TVM parses that bind GPU threads; 2 blocks per grid "
           f"dimension, {args.cpu:g} s of CPU per kernel; {seconds:.0f} s.", "",
           "| outcome | classic | tirx |", "|---|---|---|"]
    keys = sorted(set(outcomes["classic"]) | set(outcomes["tirx"]),
                  key=lambda k: -(outcomes["classic"][k] + outcomes["tirx"][k]))
    for k in keys:
        out.append(f"| {k} | {outcomes['classic'][k]} | {outcomes['tirx'][k]} |")
    out += ["", "Refused (`codegen/unsupported`, `codegen/argument`), by message, both "
            "spellings:", "",
            "| message | kernels |", "|---|---|"]
    out += [f"| {k} | {v} |" for k, v in refused.most_common()]
    out += ["", "Every other report, with why the program has it:", ""]
    for spelling, name, kernel, outcome, detail in reports:
        out.append(f"- {spelling} `{name}` `{kernel}`: `{outcome}` at {detail}  ")
        out.append(f"  {_verdict(name, kernel)}")
    if not reports:
        out.append("- none")
    dest = ROOT / "benchmarks" / "results" / "corpus_threads.md"
    dest.write_text("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    sys.exit(main())
