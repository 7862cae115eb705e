"""Validation on the TVM test-suite corpus: which TVM-parsable programs get an error from us.

Usage:
    python benchmarks/corpus_validate.py [--corpus /work/corpus] [--out FILE] [--tvm]

The corpus (made by benchmarks/corpus_extract.py) has `classic/` and `tirx/` folders, each
with a manifest.json listing every program and whether TVM 0.27 parses it (`tvm_parses`).
For each program TVM parses we run `tirkit.check` and sort it into:

- clean: no error;
- lowering: an error reported while building the IR (name/undefined, type/mismatch, syntax):
  the business of the lowering, listed apart;
- flagged: an error from a verification rule, `well-formed/*` included (and none from
  lowering).

The report lists every flagged program with its rules and the reason it is illegal (from
benchmarks/corpus_verdicts.py; a program without a verdict is marked "not reviewed"), then
the commonest lowering errors.

With `--tvm` (needs apache-tvm), each flagged program also goes through TVM's own checks,
`s_tir.analysis.verify_well_formed` and `s_tir.Schedule(mod, debug_mask="all")`, and the
report says which of them reject it: what we flag that TVM accepts is what TVM misses.
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
sys.path.insert(0, os.path.join(ROOT, "language"))
sys.path.insert(0, HERE)

import host  # noqa: E402  (benchmarks/host.py: where this ran)


def run(corpus):
    from tirkit.script.parse import parse
    from tirkit.verify import run_rules
    sys.setrecursionlimit(10000)
    rows = []
    for spelling in ("classic", "tirx"):
        man = json.load(open(os.path.join(corpus, spelling, "manifest.json")))
        for e in man["entries"]:
            if not e.get("tvm_parses"):
                continue
            path = os.path.join(corpus, spelling, e["file"])
            text = open(path, encoding="utf-8").read()
            try:
                result = parse(text, path)
                diags = run_rules(result)
            except Exception as ex:          # reported, never hidden
                rows.append((spelling, e["file"], "crash", [("crash", 0, repr(ex)[:200])], [],
                             []))
                continue
            # `well-formed/*` are validation rules that lowering reports (docs/validation.md)
            low = {id(d) for d in result.diagnostics if not d.code.startswith("well-formed/")}
            low_errs = [(d.code, d.message) for d in result.diagnostics if d.severity == "error"]
            errs = [d for d in diags if d.severity == "error"]
            if any(id(d) in low for d in errs):
                kind = "lowering"
            elif errs:
                kind = "flagged"
            else:
                kind = "clean"
            rows.append((spelling, e["file"], kind,
                         [(d.code, d.span.line, d.message) for d in errs], low_errs,
                         [d.code for d in diags if d.severity == "warning"]))
    return rows


def tvm_checks(corpus, flagged):
    """{(spelling, file): "ok" or the first TVM check that rejects the program}."""
    import ast
    import tvm
    import tvm.script
    from tvm import s_tir
    from corpus_extract import script_aliases, to_tvm_text, tvm_globals
    out = {}
    for spelling, f in flagged:
        program = open(os.path.join(corpus, spelling, f), encoding="utf-8").read()
        aliases = script_aliases(ast.parse(program))
        try:
            mod = tvm.script.from_source(to_tvm_text(program, aliases, spelling),
                                         extra_vars=tvm_globals(aliases))
            if not isinstance(mod, tvm.IRModule):
                mod = tvm.IRModule({"main": mod})
        except Exception:                  # noqa: BLE001 - TVM's verdict, whatever it is
            out[(spelling, f)] = "parse"
            continue
        try:
            ok = s_tir.analysis.verify_well_formed(mod, assert_mode=False)
        except Exception:                  # noqa: BLE001
            ok = False
        if not ok:
            out[(spelling, f)] = "verify_well_formed"
            continue
        try:
            s_tir.Schedule(mod, debug_mask="all")
            out[(spelling, f)] = "ok"
        except Exception:                  # noqa: BLE001
            out[(spelling, f)] = "Schedule(debug_mask=\"all\")"
    return out


def verdict(name):
    from corpus_verdicts import VERDICTS
    key = name[:-3] + "__" if name.endswith(".py") else name + "__"
    for pattern, why in VERDICTS:
        if re.search(pattern, key):
            return why
    return None


def _shape(message):
    """A lowering message with its names and numbers blanked, to count kinds of error."""
    m = re.sub(r"'[^']*'", "'…'", message)
    m = re.sub(r"`[^`]*`", "`…`", m)
    return re.sub(r"\d+", "N", m)


def report(rows, seconds, tvm=None):
    n = len(rows)
    by = collections.Counter(r[2] for r in rows)
    flagged = [r for r in rows if r[2] in ("flagged", "crash")]
    codes = collections.Counter(c for r in flagged for c in {x[0] for x in r[3]})
    unreviewed = [r for r in flagged if verdict(r[1]) is None]
    out = ["# Validation on the TVM test-suite corpus", "",
           *host.header({"TVM 0.27 (`--tvm`)": "in-process checks, run serially"}),
           "Programs TVM 0.27 parses, both spellings.", "",
           f"- programs: {n} ({sum(1 for r in rows if r[0] == 'classic')} classic, "
           f"{sum(1 for r in rows if r[0] == 'tirx')} tirx); {seconds:.0f} s",
           f"- clean: {by['clean']}; any error from us: {n - by['clean']} = "
           f"{100 * (n - by['clean']) / max(n, 1):.1f}% (the two kinds below)",
           f"- lowering errors (the IR could not be built faithfully; rules that reason "
           f"about whole data flows stay quiet there): {by['lowering']} = "
           f"{100 * by['lowering'] / max(n, 1):.1f}%",
           f"- **flagged by a verification rule: {len(flagged)} = "
           f"{100 * len(flagged) / max(n, 1):.1f}%**; with a verdict (illegal, reason below): "
           f"{len(flagged) - len(unreviewed)}; not reviewed: {len(unreviewed)}"]
    if tvm is not None:
        rejected = collections.Counter(v for v in tvm.values() if v != "ok")
        out.append(f"- TVM's own checks (`s_tir.analysis.verify_well_formed`, "
                   f"`s_tir.Schedule(mod, debug_mask=\"all\")`) accept "
                   f"{sum(1 for v in tvm.values() if v == 'ok')} of the {len(tvm)} flagged "
                   f"programs" + ("" if not rejected else "; rejected by " + ", ".join(
                       f"{k}: {n}" for k, n in rejected.most_common())))
    out += ["",
           "Programs per rule (a program may count under several):", "",
           "| rule | programs |", "| --- | --- |"]
    out += [f"| `{c}` | {k} |" for c, k in codes.most_common()]
    warns = collections.Counter(c for r in rows for c in r[5])
    wprogs = collections.Counter(c for r in rows for c in set(r[5]))
    out += ["", "Warnings (every program, flagged or not):", "",
            "| code | warnings | programs |", "| --- | ---: | ---: |"]
    out += [f"| `{c}` | {k} | {wprogs[c]} |" for c, k in warns.most_common()]
    out += ["", "## Every flagged program and why it is illegal", "",
            "| program | rules (first error line) | why it is illegal |", "| --- | --- | --- |"]
    for spelling, f, kind, errs, *_ in sorted(flagged, key=lambda r: (r[1], r[0])):
        rules = sorted({c for c, _, _ in errs})
        first = {}
        for c, ln, _ in errs:
            first.setdefault(c, ln)
        cells = ", ".join(f"`{c}` ({first[c]})" for c in rules)
        out.append(f"| {spelling}/{f[:-3] if f.endswith('.py') else f} | {cells} | "
                   f"{verdict(f) or '**not reviewed**'} |")
    low = collections.Counter()
    progs = collections.defaultdict(set)
    for spelling, f, kind, errs, low_errs, *_ in rows:
        if kind != "lowering":
            continue
        for code, msg in {(c, _shape(m)) for c, m in low_errs}:
            low[(code, msg)] += 1
            progs[(code, msg)].add(f"{spelling}/{f}")
    out += ["", f"## Commonest lowering errors ({by['lowering']} programs)", "",
            "| programs | code | message (names and numbers blanked) | e.g. |",
            "| ---: | --- | --- | --- |"]
    for (code, msg), k in sorted(low.items(), key=lambda kv: (-kv[1], kv[0]))[:15]:
        ex = sorted(progs[(code, msg)])[0]
        out.append(f"| {k} | `{code}` | {msg.replace('|', '/')} | {ex} |")
    out += ["", "## Every program with a lowering error", "",
            "| program | first error |", "| --- | --- |"]
    for spelling, f, kind, errs, low_errs, *_ in sorted(rows, key=lambda r: (r[1], r[0])):
        if kind == "lowering" and low_errs:
            code, msg = low_errs[0]
            msg = msg if len(msg) <= 110 else msg[:107] + "..."
            out.append(f"| {spelling}/{f[:-3] if f.endswith('.py') else f} | `{code}` "
                       f"{msg.replace('|', '/')} |")
    return "\n".join(out) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--corpus", default=os.environ.get("TIRKIT_CORPUS", "/work/corpus"))
    ap.add_argument("--out", default=None)
    ap.add_argument("--tvm", action="store_true",
                    help="also run TVM's own checks on every flagged program")
    args = ap.parse_args(argv)
    t0 = time.time()
    rows = run(args.corpus)
    seconds = time.time() - t0
    tvm = None
    if args.tvm:
        tvm = tvm_checks(args.corpus, [(r[0], r[1]) for r in rows if r[2] in ("flagged", "crash")])
    text = report(rows, seconds, tvm)
    if args.out:
        with open(args.out, "w") as fh:
            fh.write(text)
    print(text.split("## Every")[0])
    missing = [line for line in text.splitlines() if "**not reviewed**" in line]
    if missing:
        print("not reviewed:\n" + "\n".join(missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
