"""`tirkit tune FILE --kernel NAME --trials N [--target NAME] [--ray ADDR] [--write] [--resume]`.

Writes the tuned script beside the original (`FILE.tuned.py`, or the file itself with
`--write`) and the schedule (`FILE.NAME.trace.py`, runnable lines on `sch`); every measured
candidate goes to the database (`FILE.tune.jsonl` unless `--db`), which `--resume` starts
from.  Progress goes to stderr: trials done, best time, GFLOP/s.
"""
from __future__ import annotations

import os
import sys
import tempfile

from ..extras import missing


def add_commands(sub):
    t = sub.add_parser("tune", help="search a schedule for a kernel: validated candidates, "
                       "cost model, measured here or on Ray")
    t.add_argument("file")
    t.add_argument("--kernel", default=None, help="the function to tune (default: the only one)")
    t.add_argument("--trials", type=int, default=64, help="candidates to measure (default 64)")
    t.add_argument("--ray", default=None, metavar="ADDR",
                   help="measure on a Ray cluster: `auto`, an address, or `local` to start one")
    t.add_argument("--workers", type=int, default=1,
                   help="local measuring processes (default 1: one measurement at a time)")
    t.add_argument("--threads", type=int, default=1,
                   help="threads of each measured run (default 1, timed in CPU time)")
    t.add_argument("--write", action="store_true", help="rewrite FILE in place")
    t.add_argument("--db", default=None, help="the database (default FILE.tune.jsonl)")
    t.add_argument("--resume", action="store_true", help="start from the database's records")
    t.add_argument("--target", default=None, metavar="NAME",
                   help="tune for this target: a CUDA one (cuda-sm80, cuda-sm90, an alias such "
                   "as cuda) searches the GPU sketches and measures on this machine's GPU; "
                   "default: this CPU")
    t.add_argument("--seed", type=int, default=0)
    t.add_argument("--log", default=None, metavar="PATH",
                   help="write every refused, invalid and failed candidate to PATH")
    t.set_defaults(fn=cmd_tune)


def _bar(done, total, best, gflops, width=24):
    n = int(width * done / max(total, 1))
    best_t = f"{best * 1e3:.3f} ms" if best is not None else "-"
    rate = f", {gflops:.1f} GFLOP/s" if gflops else ""
    return f"\r[{'#' * n}{'.' * (width - n)}] {done}/{total} trials, best {best_t}{rate}"


def _write(path, text):
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=d, prefix=".tirkit-")
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.replace(tmp, path)


def _runner(args):
    if args.ray:
        try:
            from .ray_runner import RayRunner
            return RayRunner(args.ray)
        except ImportError:
            print("tirkit tune --ray needs Ray: pip install 'tirkit[ray]'", file=sys.stderr)
            return 2
        except Exception as e:
            print(f"tirkit tune: cannot reach the Ray cluster '{args.ray}': "
                  f"{type(e).__name__}: {e}", file=sys.stderr)
            return 2
    from .runners import LocalRunner
    return LocalRunner(args.workers)


def _target(args):
    """The target name (None: this CPU), or the exit status 2 with its reason printed: an
    unknown name, or a CUDA target where no GPU can run the candidates here (the Ray
    cluster's workers measure on their own GPUs)."""
    from .. import target as targets
    if args.target is None:
        return None
    tgt = targets.get(args.target)
    if tgt is None:
        print(f"tirkit tune: unknown target '{args.target}' (known: "
              f"{', '.join(targets.names())})", file=sys.stderr)
        return 2
    if not tgt.is_gpu:
        return None
    if not args.ray:
        from ..codegen.cuda.runtime import available
        why = available()
        if why is not None:
            print(f"tirkit tune: --target {tgt.name} measures candidates on a CUDA GPU, and "
                  f"none can run them here: {why}", file=sys.stderr)
            return 2
    return tgt.name


def cmd_tune(args) -> int:
    status = missing("tune", "llvmlite", "run")
    if status is not None:
        return status
    from ..codegen.selection import selected_kernels
    from ..script.parse import parse
    from .database import Database
    from .edit import EditError, tuned_text
    from .search import TuneError, tune
    args.func = args.kernel
    loaded = selected_kernels(args, "tuned")
    if isinstance(loaded, int):
        return loaded
    module, text, funcs, status = loaded
    if status:          # no kernel named, and the file has errors
        return status
    if len(funcs) != 1:
        print(f"{args.file}: {len(funcs)} kernels; choose one with --kernel "
              f"({', '.join(n for n, _ in funcs)})", file=sys.stderr)
        return 1
    name = funcs[0][0]
    target = _target(args)
    if isinstance(target, int):
        return target
    runner = _runner(args)
    if isinstance(runner, int):
        return runner
    stem = args.file[:-3] if args.file.endswith(".py") else args.file
    db = Database(args.db or stem + ".tune.jsonl")
    log_fh = open(args.log, "w", encoding="utf-8") if args.log else None
    tty = sys.stderr.isatty()

    def progress(done, total, best, gflops):
        line = _bar(done, total, best, gflops)
        print(line if tty else line.lstrip("\r"), end="" if tty else "\n", file=sys.stderr,
              flush=True)

    def log(line):
        if log_fh is not None:
            log_fh.write(line + "\n")
    try:
        result = tune(module, name, args.trials, runner=runner, database=db,
                      resume=args.resume, seed=args.seed, threads=args.threads, log=log,
                      progress=progress, target=target)
    except TuneError as e:
        print(f"{args.file}: {e}", file=sys.stderr)
        return 1
    finally:
        runner.close()
        if log_fh is not None:
            log_fh.close()
    if tty:
        print(file=sys.stderr)
    print(f"{name}: {result.stats.line()}")
    if result.best is None:
        print(f"{name}: no candidate was measured", file=sys.stderr)
        return 1
    rate = f", {result.flops / result.best_seconds / 1e9:.1f} GFLOP/s" if result.flops else ""
    print(f"{name}: best {result.best_seconds * 1e3:.3f} ms{rate} "
          f"({result.best.sketch.name}); tuned in {result.wall_seconds:.1f} s")
    try:
        new_text = tuned_text(parse(text, args.file), name, result.module)
    except EditError as e:
        print(f"{args.file}: {e}", file=sys.stderr)
        return 1
    out = args.file if args.write else stem + ".tuned.py"
    _write(out, new_text)
    trace_path = f"{stem}.{name}.trace.py"
    _write(trace_path, result.trace())
    print(f"wrote {out} and {trace_path}")
    return 0
