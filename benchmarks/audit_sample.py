"""A repeatable precision check: a seeded random sample of the corpus programs a rule flags,
each written with our diagnostics and the TVM test code around it, for a person to judge.

Usage:
    python benchmarks/audit_sample.py [--n 30] [--seed 21] [--corpus /work/corpus]
        [--tvm-git /work/.mirror/apache+tvm/repo] [--out benchmarks/results/audit_sample.md]

The flagged programs are those `benchmarks/corpus_validate.py` counts as "flagged by a
verification rule" (both spellings).  For each sampled program the output gives:

- the program as extracted (the corpus file);
- every error tirkit reports on it (code, line, message);
- where it comes from in TVM's tests (`source`, `lineno` from the corpus `manifest.json`)
  and the TVM test functions that use it: the function that encloses the program's
  definition, if any, and each `def test_*` of that file that names the program, read from
  the TVM git directory at the manifest's commit (`git show COMMIT:PATH`; tag v0.23.0 for
  classic, main for tirx);
- the verdict recorded in `benchmarks/corpus_verdicts.py`, if any, for comparison.

The reader's verdicts go into `benchmarks/results/audit.md`.
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "language"))
sys.path.insert(0, HERE)

MAX_LINES = 160


def _git_show(git_dir, commit, path):
    try:
        r = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"],
                           capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout if r.returncode == 0 else None


def _functions(tree):
    return [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def test_context(source_text, entry):
    """[(title, text)] of the TVM test code around a program: the enclosing function, then
    the test functions that name it."""
    try:
        tree = ast.parse(source_text)
    except SyntaxError:
        return []
    lines = source_text.splitlines()
    out = []
    lo, name = entry["lineno"], entry["name"]
    enclosing = [f for f in _functions(tree) if f.lineno < lo <= (f.end_lineno or 0)]
    for f in sorted(enclosing, key=lambda f: f.lineno)[:1]:
        out.append((f"enclosing function `{f.name}` (lines {f.lineno}-{f.end_lineno})",
                    "\n".join(lines[f.lineno - 1:f.end_lineno])))
    word = re.compile(rf"\b{re.escape(name)}\b")
    for f in _functions(tree):
        if not f.name.startswith("test") or f in enclosing:
            continue
        body = "\n".join(lines[f.lineno - 1:f.end_lineno])
        if word.search(body):
            out.append((f"`{f.name}` (lines {f.lineno}-{f.end_lineno})", body))
        if len(out) >= 3:
            break
    return out


def _clip(text):
    lines = text.splitlines()
    if len(lines) <= MAX_LINES:
        return text
    return "\n".join(lines[:MAX_LINES] + [f"# ... {len(lines) - MAX_LINES} more lines"])


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=30)
    ap.add_argument("--seed", type=int, default=21)
    ap.add_argument("--corpus", default="/work/corpus")
    ap.add_argument("--tvm-git", default="/work/.mirror/apache+tvm/repo")
    ap.add_argument("--out", default=os.path.join(HERE, "results", "audit_sample.md"))
    args = ap.parse_args(argv)
    from corpus_validate import run, verdict
    rows = run(args.corpus)
    flagged = sorted((r for r in rows if r[2] == "flagged"), key=lambda r: (r[0], r[1]))
    sample = random.Random(args.seed).sample(flagged, min(args.n, len(flagged)))
    manifests = {}
    for spelling in ("classic", "tirx"):
        with open(os.path.join(args.corpus, spelling, "manifest.json")) as f:
            m = json.load(f)
        manifests[spelling] = (m.get("commit") or m.get("git_ref"),
                               {e["file"]: e for e in m["entries"]})
    out = ["# Audit sample: flagged corpus programs with the TVM tests around them", "",
           f"`python benchmarks/audit_sample.py --n {args.n} --seed {args.seed}`: "
           f"{len(sample)} of the {len(flagged)} programs a rule flags "
           f"(of {len(rows)}), drawn with `random.Random({args.seed}).sample` from the "
           f"list sorted by spelling and file.  Verdicts: `benchmarks/results/audit.md`.", ""]
    sources = {}
    for k, (spelling, file, _, errs, *_) in enumerate(sample, 1):
        commit, entries = manifests[spelling]
        e = entries[file]
        path = os.path.join(args.corpus, spelling, file)
        with open(path, encoding="utf-8") as f:
            program = f.read()
        out += [f"## {k}. {spelling}/{file[:-3]}", "",
                f"TVM source: `{e['source']}` lines {e['lineno']}-{e['end_lineno']} "
                f"(commit {commit[:12] if commit else '?'}); recorded verdict: "
                f"{verdict(file) or '(none)'}", "", "Our diagnostics:", ""]
        out += [f"- line {line}: `{code}` {msg}" for code, line, msg in errs]
        out += ["", "The program:", "", "```python", _clip(program).rstrip(), "```", ""]
        key = (spelling, e["source"])
        if key not in sources:
            sources[key] = _git_show(args.tvm_git, commit, e["source"]) if commit else None
        src = sources[key]
        if src is None:
            out += ["(the TVM test file could not be read from the git directory)", ""]
            continue
        ctx = test_context(src, e)
        if not ctx:
            out += ["(no test function of that file names the program)", ""]
        for title, text in ctx:
            out += [f"TVM test code: {title}", "", "```python", _clip(text).rstrip(), "```", ""]
    os.makedirs(os.path.dirname(args.out), exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")
    print(f"{len(sample)} programs written to {args.out}")
    for spelling, file, _, errs, *_ in sample:
        print(f"{spelling}/{file}: " + ", ".join(sorted({c for c, _, _ in errs})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
