"""Real-world coverage: how much of a corpus of TVMScript programs tirkit reads and prints back.

Usage:
    python benchmarks/corpus.py FOLDER [--tvm] [--jobs N] [--timeout S] [--only SUBSTR]
                                [--limit N] [--failures N] [--json OUT]

FOLDER is made by ``benchmarks/corpus_extract.py`` (one program per file plus
``manifest.json``; see ``benchmarks/CORPUS.md``). For every program:

- parses: ``tirkit.parse`` reports no ``syntax``, ``name/...`` or ``type/mismatch`` error
  (each means part of the program was not read as written) and lowers every kernel;
- round-trips: ``structural_equal(parse(print(ir)), ir)``;
- fixpoint: printing the re-parsed IR gives the same text again;
- TVM-equal (``--tvm``): our output in the tirx spelling, parsed by TVM 0.27, is
  ``tvm.ir.structural_equal`` to TVM's parse of the original; both texts go through the
  extractor's classic->tirx rewrite (``corpus_extract.to_tvm_text``).

Each program runs in a pool of worker processes with a per-program timeout (a hung or
crashed worker is replaced, the program counted as failing). Figures are given over every
program and over the programs TVM itself parses (``tvm_parses`` in the manifest); failures
are grouped by cause.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(ROOT, "language"))

import corpus_extract  # noqa: E402  (the rewrite and the worker pool are shared)
import host  # noqa: E402  (benchmarks/host.py: where this ran)

MEASURES = ("parses", "roundtrip", "fixpoint", "tvm_equal")


# ---------------------------------------------------------------- one program


def _cause(d) -> str:
    """A short group key for a diagnostic: its code and message with names blurred."""
    msg = re.sub(r"'[^']*'", "'…'", d.message)
    msg = re.sub(r"\b\d+\b", "N", msg)
    return f"{d.code}: {msg}"[:120]


def _unread(d) -> bool:
    """A diagnostic that says part of the program was not read as written: a syntax error, an
    undefined name, or a construct refused as ill-typed or unsupported (its statement is left
    out of the IR)."""
    return d.severity == "error" and (d.code in ("syntax", "type/mismatch")
                                      or d.code.startswith("name/"))


def check_program(text: str, aliases: dict, spelling: str, tvm_ctx=None) -> dict:
    import tirkit
    from tirkit.script.printer import to_script

    out = {m: False for m in MEASURES}
    out["cause"] = None
    r = tirkit.parse(text, "program.py")
    bad = [d for d in r.diagnostics if _unread(d)]
    if bad:
        out["cause"] = "parse: " + _cause(bad[0])
        return out
    lowered = sum(len(k.functions) for k in r.kernels)
    if not r.kernels or lowered == 0 or any(not k.functions for k in r.kernels):
        errs = [d for d in r.diagnostics if d.severity == "error"]
        out["cause"] = "parse: not lowered" + (f" ({_cause(errs[0])})" if errs else "")
        return out
    out["parses"] = True
    t1 = to_script(r.module)
    r2 = tirkit.parse(t1, "printed.py")
    bad2 = [d for d in r2.diagnostics if _unread(d)]
    if bad2:
        out["cause"] = "roundtrip: reparse " + _cause(bad2[0])
    elif not tirkit.structural_equal(r2.module, r.module):
        out["cause"] = "roundtrip: not structurally equal"
    else:
        out["roundtrip"] = True
    t2 = to_script(r2.module)
    if t2 == t1:
        out["fixpoint"] = True
    elif out["cause"] is None:
        out["cause"] = "fixpoint: second print differs"
    if tvm_ctx is not None:
        ok, why = tvm_equal(tvm_ctx, text, aliases, spelling, to_script(r.module, spelling="tirx"))
        out["tvm_equal"] = ok
        if not ok and out["cause"] is None:
            out["cause"] = "tvm: " + why
    return out


def tvm_equal(ctx, original, aliases, spelling, ours_tirx):
    tvm, extra_for = ctx
    try:
        a = tvm.script.from_source(corpus_extract.to_tvm_text(original, aliases, spelling),
                                   extra_vars=extra_for(aliases))
    except BaseException as err:  # noqa: BLE001
        return False, "original does not parse: " + corpus_extract.first_error_line(err)[:100]
    ours_aliases = {"T": "tirx", "I": "ir"}
    try:
        b = tvm.script.from_source(corpus_extract.to_tvm_text(ours_tirx, ours_aliases, spelling),
                                   extra_vars=extra_for(ours_aliases))
    except BaseException as err:  # noqa: BLE001
        msg = corpus_extract.first_error_line(err)
        return False, "ours does not parse: " + re.sub(r"\b\d+\b", "N", msg)[:100]
    import tvm_ffi  # TVM 0.27 keeps structural equality in its FFI package

    try:
        mismatch = tvm_ffi.get_first_structural_mismatch(a, b, False)
    except BaseException as err:  # noqa: BLE001
        return False, f"structural_equal raised {type(err).__name__}"
    if mismatch is None:
        return True, None
    where = re.sub(r"\[\d+\]", "[N]", str(mismatch[0]))
    return False, "not structurally equal at " + where[-90:]


def _tvm_context():
    import tvm
    import tvm.script
    return tvm, corpus_extract.tvm_globals


# ---------------------------------------------------------------- worker pool


def _worker(conn, use_tvm):
    devnull = os.open(os.devnull, os.O_WRONLY)  # TVM prints diagnostics to stderr/stdout
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    sys.path.insert(0, os.path.join(ROOT, "language"))
    sys.setrecursionlimit(10000)
    ctx = _tvm_context() if use_tvm else None
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        key, text, aliases, spelling = job
        try:
            res = check_program(text, aliases, spelling, ctx)
        except BaseException as err:  # noqa: BLE001 - a crash is a result
            res = {m: False for m in MEASURES}
            res["cause"] = f"exception: {type(err).__name__}: {str(err)[:80]}"
        conn.send((key, res, None))


class Pool(corpus_extract.Pool):
    """The extractor's pool (timeouts, replacement of dead workers) with our worker."""

    def __init__(self, n, timeout, use_tvm):
        self.use_tvm = use_tvm
        super().__init__(n, timeout)

    def _start(self):
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker, args=(child, self.use_tvm), daemon=True)
        proc.start()
        child.close()
        return {"proc": proc, "conn": parent, "job": None, "since": 0.0}


# ---------------------------------------------------------------- main


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("folder")
    ap.add_argument("--tvm", action="store_true", help="also compare with TVM's parse")
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per program")
    ap.add_argument("--only", default=None, help="only files whose name contains this")
    ap.add_argument("--limit", type=int, default=None, help="first N programs only")
    ap.add_argument("--tvm-parsable", action="store_true",
                    help="only the programs TVM parses (default: every program, reported "
                         "over all and over the TVM-parsable ones)")
    ap.add_argument("--failures", type=int, default=3, help="example files per failure cause")
    ap.add_argument("--json", default=None, help="write per-program results here")
    args = ap.parse_args(argv)

    with open(os.path.join(args.folder, "manifest.json")) as f:
        manifest = json.load(f)
    spelling = manifest["spelling"]
    entries = manifest["entries"]
    if args.only:
        entries = [e for e in entries if args.only in e["file"]]
    if args.tvm_parsable:
        entries = [e for e in entries if e.get("tvm_parses", True)]
    if args.limit:
        entries = entries[: args.limit]

    jobs = []
    for e in entries:
        with open(os.path.join(args.folder, e["file"])) as f:
            text = f.read()
        aliases = corpus_extract.script_aliases(__import__("ast").parse(text))
        jobs.append((e["file"], text, aliases, spelling))

    t0 = time.monotonic()
    pool = Pool(max(1, args.jobs), args.timeout, args.tvm)
    try:
        raw = pool.run(jobs)
    finally:
        pool.close()
    seconds = time.monotonic() - t0

    results = {}
    for key, val in raw.items():
        if isinstance(val, tuple):  # (ok, error) from the pool: timeout or crash
            ok, err = val
            if isinstance(ok, dict):
                results[key] = ok
            else:
                res = {m: False for m in MEASURES}
                res["cause"] = f"worker: {err}"
                results[key] = res
        else:
            results[key] = val

    measures = MEASURES if args.tvm else MEASURES[:3]
    parsable = [e for e in entries if e.get("tvm_parses", True)]
    print("\n".join(host.header({"TVM 0.27": "in each worker process; parsing and "
                                  "`structural_equal` run serially"})))
    print(f"{args.folder} ({spelling}): {len(entries)} programs, {len(parsable)} of them "
          f"parsed by TVM; {seconds:.1f} s, {args.jobs} workers")
    for title, group, ms in (("every program", entries, MEASURES[:3]),
                             ("programs TVM parses (target >= 95%)", parsable, measures)):
        n = len(group)
        print(f" {title}: {n}")
        for m in ms:
            k = sum(1 for e in group if results[e['file']][m])
            print(f"  {m:10s} {k:5d} / {n}  {100.0 * k / max(n, 1):5.1f}%")
    causes = collections.defaultdict(list)
    print("failures by cause (programs TVM parses):")
    for e in parsable:
        r = results[e["file"]]
        if not all(r[m] for m in measures):
            causes[r["cause"] or "?"].append(e["file"])
    if causes:
        for cause, files in sorted(causes.items(), key=lambda kv: -len(kv[1])):
            print(f"  {len(files):4d}  {cause}")
            for fname in files[: args.failures]:
                print(f"          {fname}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"spelling": spelling, "seconds": seconds, "results": results}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
