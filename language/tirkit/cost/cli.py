"""`tirkit cost collect | confirm | train | eval | predict`: the learned cost model's commands.

    tirkit cost collect data.jsonl [--per-workload 300] [--workloads a,b] [--confirm 8]  # resumable
    tirkit cost confirm data.jsonl [--top 8 | --all] [--rounds 2]  # measure again; resumable
    tirkit cost train data.jsonl [-o model.json.gz] [--objective ensemble]
    tirkit cost eval data.jsonl [--model M] [--holdout a,b]                 # top-1/top-5/Spearman
    tirkit cost predict FILE [--model M]       # one line per kernel: name and predicted time
"""
from __future__ import annotations

import sys

from ..extras import missing
from .model import DEFAULT_OBJECTIVE, OBJECTIVES


def add_commands(sub):
    c = sub.add_parser("cost", help="the learned cost model: collect measurements, train, "
                       "evaluate, predict kernel run times")
    cs = c.add_subparsers(dest="cost_cmd", required=True)
    col = cs.add_parser("collect", help="time random valid schedules of the workload set and "
                        "append them to a JSON-lines dataset (resumes where it stopped)")
    col.add_argument("dataset", nargs="?")
    col.add_argument("--per-workload", type=int, default=300)
    col.add_argument("--workloads", default=None, help="comma-separated names (default: all; "
                     "see --list)")
    col.add_argument("--list", action="store_true", help="print the workload names and exit")
    col.add_argument("--seed", type=int, default=0)
    col.add_argument("--threads", type=int, default=None)
    col.add_argument("--no-features", action="store_true",
                     help="store scripts and times only (features are recomputed when training)")
    col.add_argument("--confirm", type=int, default=None, metavar="N",
                     help="then measure each workload's N fastest kernels again, their time "
                     "the median of all measurements (default 8; 0: not)")
    col.set_defaults(fn=cmd_collect)
    cf = cs.add_parser("confirm", help="measure kernels of a dataset again, each one's time "
                       "the median of all its measurements (resumes where it stopped)")
    cf.add_argument("dataset")
    which = cf.add_mutually_exclusive_group()
    which.add_argument("--top", type=int, default=None, metavar="N",
                       help="each workload's N fastest kernels (default 8)")
    which.add_argument("--all", action="store_true", help="every kernel of each workload")
    cf.add_argument("--rounds", type=int, default=None, help="measurements per kernel (default 2)")
    cf.add_argument("--workloads", default=None, help="comma-separated names (default: all)")
    cf.add_argument("--threads", type=int, default=None)
    cf.set_defaults(fn=cmd_confirm)
    tr = cs.add_parser("train", help="train the XGBoost model on datasets for this machine")
    tr.add_argument("datasets", nargs="+")
    tr.add_argument("-o", "--output", default=None,
                    help="model file (default: the user's model, which hover then uses)")
    tr.add_argument("--objective", default=DEFAULT_OBJECTIVE,
                    choices=list(OBJECTIVES))
    tr.add_argument("--rounds", type=int, default=None)
    tr.add_argument("--exclude", default="", help="comma-separated workloads left out")
    tr.set_defaults(fn=cmd_train)
    ev = cs.add_parser("eval", help="held-out scores: train without some workloads, rank "
                       "their measured schedules")
    ev.add_argument("datasets", nargs="+")
    ev.add_argument("--holdout", default=None, help="comma-separated workloads (default: "
                    "every fourth workload)")
    ev.add_argument("--objective", default=DEFAULT_OBJECTIVE,
                    choices=list(OBJECTIVES))
    ev.add_argument("--rounds", type=int, default=None)
    ev.set_defaults(fn=cmd_eval)
    pr = cs.add_parser("predict", help="predicted run time of each kernel of a file")
    pr.add_argument("file")
    pr.add_argument("--model", default=None, help="model file (default: the shipped one)")
    pr.set_defaults(fn=cmd_predict)


def cmd_collect(args) -> int:
    from .workloads import names
    if args.list:
        print("\n".join(names()))
        return 0
    if args.dataset is None:
        print("tirkit cost collect: a dataset file is needed (or --list)", file=sys.stderr)
        return 2
    status = missing("cost collect", "llvmlite", "run")
    if status is not None:
        return status
    from .collect import collect
    from .measure import THREADS, Measurer
    ws = _workloads("collect", args.workloads)
    if ws is None:
        return 2
    m = Measurer(threads=args.threads or THREADS)
    collect(args.dataset, ws, per_workload=args.per_workload, seed=args.seed,
            features=not args.no_features, measurer=m)
    from .confirm import TOP, confirm
    top = TOP if args.confirm is None else args.confirm
    if top > 0:
        confirm(args.dataset, ws, top=top, measurer=m)
    return 0


def _workloads(cmd, text):
    """The workloads a comma-separated `--workloads` names (all when it is empty); None, with
    the unknown names on stderr, when one is not in the workload set."""
    from .workloads import names
    ws = names() if not text else [w.strip() for w in text.split(",")]
    unknown = [w for w in ws if w not in names()]
    if unknown:
        print(f"tirkit cost {cmd}: unknown workload(s) {', '.join(unknown)} "
              "(see tirkit cost collect --list)", file=sys.stderr)
        return None
    return ws


def cmd_confirm(args) -> int:
    import os
    status = missing("cost confirm", "llvmlite", "run")
    if status is not None:
        return status
    if not os.path.exists(args.dataset):
        print(f"{args.dataset}: no such file", file=sys.stderr)
        return 2
    from .confirm import ROUNDS, TOP, confirm
    from .measure import THREADS, Measurer
    ws = _workloads("confirm", args.workloads)
    if ws is None:
        return 2
    top = None if args.all else TOP if args.top is None else args.top
    n = confirm(args.dataset, ws, top=top, rounds=args.rounds or ROUNDS,
                measurer=Measurer(threads=args.threads or THREADS))
    print(f"{n} kernels measured again")
    return 0


def _load_sets(paths):
    from . import dataset
    recs = []
    for p in paths:
        try:
            recs += dataset.read(p)
        except OSError as e:
            print(f"{p}: {e.strerror}", file=sys.stderr)
            return None
    return recs


def cmd_train(args) -> int:
    status = missing("cost train", "xgboost", "cost")
    if status is not None:
        return status
    import time
    from .train import train, user_model_path
    recs = _load_sets(args.datasets)
    if recs is None:
        return 2
    exclude = {w for w in args.exclude.split(",") if w}
    recs = [r for r in recs if r["workload"] not in exclude]
    if not recs:
        print("tirkit cost train: no records", file=sys.stderr)
        return 1
    t0 = time.perf_counter()
    model = train(recs, objective=args.objective, rounds=args.rounds)
    out = args.output or user_model_path()
    import os
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    model.save(out)
    print(f"trained on {len(recs)} kernels of {len({r['workload'] for r in recs})} workloads "
          f"in {time.perf_counter() - t0:.1f} s ({model.objective}, machine {model.machine}): "
          f"{out}")
    return 0


def cmd_eval(args) -> int:
    status = missing("cost eval", "xgboost", "cost")
    if status is not None:
        return status
    from .train import evaluate, default_holdout
    recs = _load_sets(args.datasets)
    if recs is None:
        return 2
    hold = ([w for w in args.holdout.split(",") if w] if args.holdout
            else default_holdout(sorted({r["workload"] for r in recs})))
    res = evaluate(recs, hold, objective=args.objective, rounds=args.rounds)
    print(f"held out {len(hold)} workloads ({', '.join(hold)}); trained on "
          f"{res['train_kernels']} kernels")
    print(f"top-1 {res['top1']:.3f}  top-5 {res['top5']:.3f}  Spearman {res['spearman']:.3f}")
    return 0


def cmd_predict(args) -> int:
    from ..analysis.roofline import format_seconds
    from ..codegen.selection import sound_kernels
    from .model import CostModel
    from .predict import calls_functions, cpu_kernel, predict_kernels
    from .train import user_model
    args.func = None
    if args.model:
        try:                              # ImportError: a file of version 1 (only xgboost
            model = CostModel.load(args.model)      # reads its trees) without xgboost
        except (OSError, ValueError, ImportError) as e:
            print(f"tirkit cost predict: {e}", file=sys.stderr)
            return 2
    else:
        model = user_model()
    if model is None:
        print("tirkit cost predict: no usable cost model (train one for this tirkit: "
              "tirkit cost train)", file=sys.stderr)
        return 2
    loaded = sound_kernels(args)
    if isinstance(loaded, int):
        return loaded
    sound = [f for n, f in loaded.funcs if n not in loaded.broken]
    secs = iter(predict_kernels(sound, model))
    for name, f in loaded.funcs:
        if name in loaded.broken:
            print(f"{name}: no prediction (the kernel has errors)")
            continue
        s = next(secs)
        if s is not None:
            print(f"{name}: predicted {format_seconds(s)}")
        elif not cpu_kernel(f):
            print(f"{name}: no prediction (a GPU kernel: the model predicts CPU kernels)")
        elif calls_functions(f):
            print(f"{name}: no prediction (it calls functions of its module, whose work the "
                  "cost features do not read)")
        else:
            print(f"{name}: no prediction (the cost features cannot read this kernel)")
    return 1 if loaded.errors else 0
