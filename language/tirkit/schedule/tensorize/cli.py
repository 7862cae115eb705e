"""`tirkit tensorize FILE --block C [--func F] [--intrin NAME] [--intrinsics DIR]
[--target T] [--list] [--write]`: what the editor's quick fix does, from the command line.

Without `--intrin`, the best intrinsic of the target that serves the block is applied. The
rewritten file is printed (written back with `--write`), then the schedule as Python on
stderr. `--list` prints, for every intrinsic, its mapping or the reason it does not apply.
Exit status: 0 done, 1 nothing applies (reasons printed), 2 a file or argument problem."""
from __future__ import annotations

import os
import sys


def add_commands(sub):
    t = sub.add_parser("tensorize", help="tensorize a block with an intrinsic (the quick fix "
                       "of tensorize/available)")
    t.add_argument("file")
    t.add_argument("--block", required=True, help="the block's name")
    t.add_argument("--func", default=None, help="the function holding it (default: the one "
                   "that has the block)")
    t.add_argument("--intrin", default=None, help="intrinsic name (default: the best one)")
    t.add_argument("--intrinsics", action="append", default=[], metavar="DIR",
                   help="a folder of more intrinsic files (repeatable)")
    t.add_argument("--target", default="llvm", help="llvm (this CPU), 'llvm -mattr=+avx512vnni"
                   ",+avx512bw', cuda-sm80, ...")
    t.add_argument("--list", action="store_true", help="only list mappings and reasons")
    t.add_argument("--write", action="store_true", help="write the result back to FILE")
    t.set_defaults(fn=cmd_tensorize)


def cmd_tensorize(args):
    from ...diagnostics import render_text
    from ...ir import stmt as S
    from ...script.parse import parse
    from ...tensorize.library import load
    from ...tensorize.mapping import find_mapping
    from ...tensorize.suggest import is_candidate, message
    from ..actions import Action, apply_action
    from ..errors import ScheduleError
    try:
        with open(args.file, encoding="utf-8") as fh:
            text = fh.read()
    except OSError as e:
        print(f"{args.file}: {e.strerror}", file=sys.stderr)
        return 2
    res = parse(text, args.file)
    errs = [d for d in res.diagnostics if d.severity == "error"]
    for d in errs:
        print(render_text(args.file, text, d), file=sys.stderr)
    if errs:
        return 2
    found = [(n, r) for n, f in res.module.prim_funcs() if args.func in (None, n)
             for r in _realizes(f.body, S) if r.block.name_hint == args.block]
    if not found:
        print(f"{args.file}: no block '{args.block}'", file=sys.stderr)
        return 2
    func, r = found[0]
    lib = load(args.intrinsics)
    for path, err in lib.errors:
        print(f"{path}: {err if isinstance(err, str) else err[0].message}", file=sys.stderr)
    if args.intrin is not None and lib.get(args.intrin) is None:
        print(f"no intrinsic named '{args.intrin}' (known: {', '.join(lib.names())})",
              file=sys.stderr)
        return 2
    intrs = [lib.get(args.intrin)] if args.intrin else lib.for_target(args.target)
    maps = [find_mapping(r, i) for i in intrs] if is_candidate(r) else []
    ok = sorted([m for m in maps if m.feasible], key=lambda m: (m.waste, -m.intrin.ops_per_cycle))
    if args.list:
        for i in lib.intrinsics:
            m = find_mapping(r, i)
            avail = "" if i.available_on(args.target) else " (not on this target)"
            print(f"{i.name}{avail}: " + (m.describe() if m.feasible else
                                          f"{m.message} ({m.code})"))
        return 0
    if not ok:
        for m in maps:
            print(f"{m.intrin.name}: {m.message} ({m.code})", file=sys.stderr)
        if not maps:
            print(f"block '{args.block}': no intrinsic of {args.target} applies",
                  file=sys.stderr)
        return 1
    m = ok[0]
    call = [("block", args.block), m.intrin.name] + ([args.intrinsics] if args.intrinsics
                                                      else [])
    try:
        new, python = apply_action(res, Action("tensorize", func, [("auto_tensorize", call)]))
    except ScheduleError as e:
        print(render_text(args.file, text, e.diagnostic()), file=sys.stderr)
        return 1
    print(message(m), file=sys.stderr)
    if args.write:
        tmp = args.file + ".tirkit-tmp"
        with open(tmp, "w", encoding="utf-8") as fh:
            fh.write(new)
        os.replace(tmp, args.file)
    else:
        sys.stdout.write(new)
    sys.stderr.write(python)
    return 0


def _realizes(body, S):
    from ...ir.visit import find_all
    return find_all(body, lambda x: True, S.BlockRealize)
