"""Extract standalone TVMScript programs from Apache TVM's test suite.

Usage:
    python benchmarks/corpus_extract.py --git-dir DIR --ref REF --spelling classic|tirx --out FOLDER

DIR is a git directory of apache/tvm (a bare repository is fine). The test files are read
with ``git show REF:path`` and analysed with Python's ``ast``: they are never imported or
executed. Every ``@T.prim_func`` function and ``@I.ir_module`` class (any alias the file
imports for ``tvm.script.tir``/``tirx``/``ir``, also the qualified ``@tvm.script.ir_module``
and ``@tvm.script.tir.prim_func``), at any nesting depth, becomes one program: its exact
source lines (decorators included), dedented, preceded by the import lines it needs.
Definitions nested inside an extracted definition (the functions of an ``@I.ir_module``)
belong to it and are not extracted again.

With TVM installed (``--no-tvm`` skips it), each program is parsed by
``tvm.script.from_source`` in a pool of worker processes with a per-program timeout; a
worker that hangs or crashes is replaced and the program recorded as not parsing. For the
classic spelling the text is first rewritten to the current spelling for TVM only
(``T.block`` -> ``T.sblock``, ``T.block_attr`` -> ``T.sblock_attr``,
``@T.prim_func`` -> ``@T.prim_func(s_tir=True)``); the files written keep the original text.
"""

from __future__ import annotations

import argparse
import ast
import json
import multiprocessing as mp
import os
import re
import subprocess
import sys
import textwrap
import time
from multiprocessing.connection import wait as mp_wait

# Test folders per spelling: v0.23 names, then their renamed equivalents on main.
DIRS = {
    "classic": [
        "tests/python/tvmscript",
        "tests/python/tir-schedule",
        "tests/python/tir-analysis",
        "tests/python/tir-transform",
        "tests/python/meta_schedule",
        "tests/python/tir-base",
    ],
    "tirx": [
        "tests/python/tvmscript",
        "tests/python/s_tir/schedule",
        "tests/python/s_tir/analysis",
        "tests/python/tirx-analysis",
        "tests/python/s_tir/transform",
        "tests/python/tirx-transform",
        "tests/python/s_tir/meta_schedule",
        "tests/python/s_tir/base",
        "tests/python/tirx-base",
    ],
}

TIR_MODULES = {"tir", "tirx"}
SCRIPT_PACKAGES = {"tvm.script", "tvm.script.parser"}


# ---------------------------------------------------------------- git


def git(git_dir: str, *args: str) -> str:
    return subprocess.run(
        ["git", f"--git-dir={git_dir}", *args], check=True, capture_output=True, text=True
    ).stdout


def list_test_files(git_dir: str, ref: str, dirs: list[str]) -> list[str]:
    out = git(git_dir, "ls-tree", "-r", "--name-only", ref, "--", *dirs)
    return sorted(p for p in out.splitlines() if p.endswith(".py"))


# ---------------------------------------------------------------- extraction


def script_aliases(tree: ast.AST) -> dict[str, str]:
    """Names the file binds to tvm.script's tir/tirx/ir namespaces: alias -> module."""
    aliases: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module in SCRIPT_PACKAGES:
            for a in node.names:
                if a.name in TIR_MODULES or a.name == "ir":
                    aliases[a.asname or a.name] = a.name
        elif isinstance(node, ast.Import):
            for a in node.names:
                mod = a.name.rsplit(".", 1)
                if a.asname and len(mod) == 2 and mod[0] in SCRIPT_PACKAGES:
                    if mod[1] in TIR_MODULES or mod[1] == "ir":
                        aliases[a.asname] = mod[1]
    return aliases


def dotted(node: ast.AST) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return ".".join(reversed(parts))


def decorator_kind(dec: ast.AST, aliases: dict[str, str]) -> tuple[str, str] | None:
    """('prim_func'|'ir_module', 'alias'|'qualified') when `dec` is a kernel decorator."""
    if isinstance(dec, ast.Call):
        dec = dec.func
    name = dotted(dec)
    if name is None:
        return None
    if name in ("tvm.script.ir_module", "tvm.script.ir.ir_module"):
        return ("ir_module", "qualified")
    if name in ("tvm.script.tir.prim_func", "tvm.script.tirx.prim_func"):
        return ("prim_func", "qualified")
    head, _, attr = name.partition(".")
    mod = aliases.get(head)
    if mod in TIR_MODULES and attr == "prim_func":
        return ("prim_func", "alias")
    if mod == "ir" and attr == "ir_module":
        return ("ir_module", "alias")
    return None


def find_kernels(tree: ast.AST, aliases: dict[str, str]):
    """Outermost decorated kernel definitions, in source order."""
    found = []

    def visit(node):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                kinds = [decorator_kind(d, aliases) for d in child.decorator_list]
                kinds = [k for k in kinds if k]
                if kinds:
                    found.append((child, kinds[0]))
                    continue
            visit(child)

    visit(tree)
    return found


def used_names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def import_lines(node: ast.AST, aliases: dict[str, str], spelling: str) -> list[str]:
    names = used_names(node)
    lines = []
    if "tvm" in names:
        lines.append("import tvm")
    for alias, mod in sorted(aliases.items(), key=lambda kv: (kv[1] != "ir", kv[0])):
        if alias in names:
            lines.append(f"from tvm.script import {mod} as {alias}")
    return lines


def extract_file(text: str, spelling: str):
    """Yield (def_name, kind, form, lineno, end_lineno, program_text, aliases)."""
    tree = ast.parse(text)
    aliases = script_aliases(tree)
    src_lines = text.splitlines(keepends=True)
    for node, (kind, form) in find_kernels(tree, aliases):
        start = min([node.lineno] + [d.lineno for d in node.decorator_list])
        body = textwrap.dedent("".join(src_lines[start - 1 : node.end_lineno]))
        if not body.endswith("\n"):
            body += "\n"
        imports = import_lines(node, aliases, spelling)
        program = "\n".join(imports) + ("\n\n" if imports else "") + body
        yield node.name, kind, form, start, node.end_lineno, program, aliases


# ---------------------------------------------------------------- rewriting for TVM

IMPORT_RE = re.compile(r"^(from tvm\.script import .*|import tvm)\n", re.M)


def merge_s_tir(decorator_line: str, alias: str) -> str:
    """`@T.prim_func` / `@T.prim_func(args)` -> with s_tir=True (kept if present)."""
    m = re.match(rf"(\s*@{re.escape(alias)}\.prim_func)\s*(\((.*)\))?\s*$", decorator_line)
    if not m:
        return decorator_line
    args = (m.group(3) or "").strip()
    if "s_tir" in args:
        return decorator_line
    args = f"{args}, s_tir=True" if args else "s_tir=True"
    return f"{m.group(1)}({args})"


def to_tvm_text(program: str, aliases: dict[str, str], spelling: str) -> str:
    text = IMPORT_RE.sub("", program)
    if spelling != "classic":
        return text
    for alias, mod in aliases.items():
        if mod not in TIR_MODULES:
            continue
        a = re.escape(alias)
        text = re.sub(rf"\b{a}\.block_attr\b", f"{alias}.sblock_attr", text)
        text = re.sub(rf"\b{a}\.block\b", f"{alias}.sblock", text)
        text = "\n".join(merge_s_tir(line, alias) for line in text.split("\n"))
    text = text.replace("@tvm.script.tir.prim_func", "@tvm.script.tirx.prim_func")
    text = "\n".join(merge_s_tir(line, "tvm.script.tirx") for line in text.split("\n"))
    return text


# ---------------------------------------------------------------- TVM worker pool


def tvm_globals(aliases: dict[str, str]) -> dict:
    """The names `tvm.script.from_source` needs for a program with these script aliases
    (`T` -> TVM's tirx parser, `I` -> its ir parser)."""
    from tvm.script.parser import ir as ir_parser
    from tvm.script.parser import tirx as tirx_parser
    from tvm.script.parser.core.entry import _default_globals
    extra = _default_globals()
    for alias, mod in aliases.items():
        extra[alias] = ir_parser if mod == "ir" else tirx_parser
    return extra


def _worker(conn):
    devnull = os.open(os.devnull, os.O_WRONLY)  # TVM prints diagnostics to stderr/stdout
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    import tvm  # noqa: F401
    import tvm.script

    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        key, text, aliases = job
        try:
            tvm.script.from_source(text, extra_vars=tvm_globals(aliases))
            conn.send((key, True, None))
        except BaseException as err:  # noqa: BLE001 - any failure is a result
            conn.send((key, False, first_error_line(err)))


def first_error_line(err: BaseException) -> str:
    lines = [ln.strip() for ln in str(err).splitlines() if ln.strip()]
    for ln in lines:  # TVM's rendered diagnostics put the message on an `error:` line
        if ln.startswith("error:"):
            return ln
    msg = lines[0] if lines else ""
    return f"{type(err).__name__}: {msg}"[:300]


class Pool:
    def __init__(self, n: int, timeout: float):
        self.ctx = mp.get_context("spawn")
        self.timeout = timeout
        self.workers = [self._start() for _ in range(n)]

    def _start(self):
        parent, child = self.ctx.Pipe()
        proc = self.ctx.Process(target=_worker, args=(child,), daemon=True)
        proc.start()
        child.close()
        return {"proc": proc, "conn": parent, "job": None, "since": 0.0}

    def run(self, jobs):
        """jobs: list of (key, text, aliases). Returns {key: (ok, error)}."""
        pending = list(reversed(jobs))
        results = {}
        while pending or any(w["job"] for w in self.workers):
            for w in self.workers:
                if w["job"] is None and pending:
                    w["job"] = pending.pop()
                    w["since"] = time.monotonic()
                    w["conn"].send(w["job"])
            busy = [w for w in self.workers if w["job"]]
            ready = mp_wait([w["conn"] for w in busy] + [w["proc"].sentinel for w in busy], 0.5)
            now = time.monotonic()
            for i, w in enumerate(self.workers):
                if not w["job"]:
                    continue
                key = w["job"][0]
                if w["conn"] in ready:
                    try:
                        rkey, ok, err = w["conn"].recv()
                        results[rkey] = (ok, err)
                        w["job"] = None
                        continue
                    except EOFError:
                        pass
                dead = not w["proc"].is_alive()
                if dead or now - w["since"] > self.timeout:
                    if dead:
                        code = w["proc"].exitcode
                        results[key] = (False, f"worker crashed (exit code {code})")
                    else:
                        results[key] = (False, f"timeout after {self.timeout:g} s")
                    w["proc"].kill()
                    w["proc"].join()
                    self.workers[i] = self._start()
        return results

    def close(self):
        for w in self.workers:
            try:
                w["conn"].send(None)
            except OSError:
                pass
            w["proc"].join(5)
            if w["proc"].is_alive():
                w["proc"].kill()


# ---------------------------------------------------------------- main


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--git-dir", required=True)
    ap.add_argument("--ref", required=True)
    ap.add_argument("--spelling", choices=["classic", "tirx"], required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--dirs", nargs="*", help="test folders (default: per spelling)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds per TVM parse")
    ap.add_argument("--no-tvm", action="store_true", help="skip the TVM parse check")
    args = ap.parse_args(argv)

    t0 = time.monotonic()
    commit = git(args.git_dir, "rev-parse", f"{args.ref}^{{commit}}").strip()
    dirs = args.dirs or DIRS[args.spelling]
    os.makedirs(args.out, exist_ok=True)
    for old in os.listdir(args.out):
        if old.endswith(".py"):
            os.remove(os.path.join(args.out, old))

    files = list_test_files(args.git_dir, commit, dirs)
    stems = {}
    for path in files:
        stems.setdefault(os.path.splitext(os.path.basename(path))[0], []).append(path)

    programs, jobs, skipped = [], [], []
    for path in files:
        text = git(args.git_dir, "show", f"{commit}:{path}")
        stem = os.path.splitext(os.path.basename(path))[0]
        if len(stems[stem]) > 1:  # same file name in two folders: qualify with the folder
            stem = os.path.basename(os.path.dirname(path)).replace("-", "_") + "_" + stem
        try:
            kernels = list(extract_file(text, args.spelling))
        except SyntaxError as err:
            skipped.append({"source": path, "error": f"SyntaxError: {err}"})
            continue
        counts: dict[str, int] = {}
        for name, kind, form, start, end, program, aliases in kernels:
            counts[name] = counts.get(name, 0) + 1
            fname = f"{stem}__{name}__{counts[name]}.py"
            with open(os.path.join(args.out, fname), "w") as f:
                f.write(program)
            entry = {
                "file": fname,
                "source": path,
                "lineno": start,
                "end_lineno": end,
                "name": name,
                "kind": kind,
                "decorator": form,
            }
            programs.append(entry)
            jobs.append((fname, to_tvm_text(program, aliases, args.spelling), aliases))
    t_extract = time.monotonic() - t0

    if not args.no_tvm:
        pool = Pool(max(1, args.jobs), args.timeout)
        try:
            results = pool.run(jobs)
        finally:
            pool.close()
        for entry in programs:
            ok, err = results[entry["file"]]
            entry["tvm_parses"] = ok
            if not ok:
                entry["tvm_error"] = err
    t_total = time.monotonic() - t0

    parsed = sum(1 for p in programs if p.get("tvm_parses"))
    manifest = {
        "git_ref": args.ref,
        "commit": commit,
        "spelling": args.spelling,
        "dirs": dirs,
        "test_files": len(files),
        "programs": len(programs),
        "tvm_parses": None if args.no_tvm else parsed,
        "unparsable_test_files": skipped,
        "seconds": {"extract": round(t_extract, 1), "total": round(t_total, 1)},
        "entries": programs,
    }
    with open(os.path.join(args.out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)
        f.write("\n")
    print(
        f"{args.spelling} @ {commit[:12]}: {len(files)} test files, {len(programs)} programs"
        + ("" if args.no_tvm else f", {parsed} parse in TVM")
        + f" ({t_extract:.1f} s extract, {t_total:.1f} s total)"
    )


if __name__ == "__main__":
    sys.exit(main())
