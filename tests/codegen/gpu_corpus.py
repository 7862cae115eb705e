"""Every thread-bound kernel the project holds, found automatically: the kernels of the
shared valid examples, `examples/`, `benchmarks/gpu_kernels/`, `tests/data/gpu/`, and the
kernels written as strings in the test files.

A test file's kernels are its string values: constants, and what a small constant folder
computes from them (names bound to strings in the module or the function, `+`,
`str.replace`, `textwrap.dedent`, `str.format`/`%` left alone), so a template such as
`GPU.replace("TY", "64")` yields the kernel the test checks.  Strings without an import get
the classic one, as the tests' own helpers add it.
"""
from __future__ import annotations

import ast
import dataclasses
import functools
import os
import textwrap
from pathlib import Path

from tirkit.codegen.cuda import is_thread_bound
from tirkit.script.parse import parse

ROOT = Path(__file__).resolve().parents[2]
# the shared examples (as conftest.py finds them; this module also serves
# benchmarks/gpu_check.py, which runs without pytest)
EXAMPLES = ROOT.parent / "shared" / "examples"
if not EXAMPLES.exists():
    EXAMPLES = Path(os.environ.get("TIRKIT_SHARED", "/work/shared")) / "examples"
MARKERS = ("thread_binding", "launch_thread", "env_thread")
HEAD = "from tvm.script import tir as T\nfrom tvm.script import ir as I\n\n\n"


def kernel_files() -> list[Path]:
    return (sorted(EXAMPLES.glob("valid/*.py")) + sorted((ROOT / "examples").glob("*.py")) +
            sorted((ROOT / "tests" / "data" / "gpu").glob("*.py")) +
            sorted((ROOT / "benchmarks" / "gpu_kernels").glob("*.py")))


@dataclasses.dataclass(frozen=True)
class Kernel:
    path: Path          # the file holding it
    name: str           # the prim_func's name
    func: object
    module: object
    text: str           # the parsed text (the file, or the test's string with its import)
    in_string: bool     # written as a string in a test file

    @property
    def id(self) -> str:
        return f"{self.path.name}:{self.name}:{self.func.span.line if self.func.span else 0}"


class _Folder(ast.NodeVisitor):
    """Every string value a test file's expressions compute from constants."""

    def __init__(self):
        self.found: list[str] = []
        self.scopes: list[dict] = [{}]

    def value(self, node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            return node.value
        if isinstance(node, ast.Name):
            for scope in reversed(self.scopes):
                if node.id in scope:
                    return scope[node.id]
            return None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            a, b = self.value(node.left), self.value(node.right)
            return a + b if a is not None and b is not None else None
        if isinstance(node, ast.Call):
            f = node.func
            args = [self.value(a) for a in node.args]
            if None in args or node.keywords:
                return None
            if isinstance(f, ast.Attribute):
                if f.attr == "dedent" and len(args) == 1:
                    return textwrap.dedent(args[0])
                base = self.value(f.value)
                if base is not None and f.attr == "replace" and len(args) in (2, 3):
                    return base.replace(*args)
                if base is not None and f.attr in ("strip", "lstrip", "rstrip") and not args:
                    return getattr(base, f.attr)()
        return None

    def generic_visit(self, node):
        if isinstance(node, ast.expr):
            v = self.value(node)
            if v is not None:              # the whole value, not its intermediate parts
                if any(m in v for m in MARKERS):
                    self.found.append(v)
                return
        super().generic_visit(node)

    def visit_Assign(self, node):
        self.visit(node.value)
        v = self.value(node.value)
        for t in node.targets:
            if isinstance(t, ast.Name):
                if v is None:
                    self.scopes[-1].pop(t.id, None)
                else:
                    self.scopes[-1][t.id] = v

    def _scope(self, node):
        self.scopes.append({})
        self.generic_visit(node)
        self.scopes.pop()

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _scope


def test_file_strings(path: Path) -> list[str]:
    folder = _Folder()
    folder.visit(ast.parse(path.read_text(), str(path)))
    return list(dict.fromkeys(folder.found))


def _kernels_of(path, text, in_string):
    r = parse(text, str(path))
    if any(d.severity == "error" and d.code == "syntax" for d in r.diagnostics):
        return []
    return [Kernel(path, name, f, r.module, text, in_string)
            for name, f in r.module.prim_funcs() if is_thread_bound(f)]


@functools.lru_cache(maxsize=1)
def thread_bound_kernels() -> tuple[Kernel, ...]:
    out, seen = [], set()
    for path in kernel_files():
        out += _kernels_of(path, path.read_text(), False)
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        for s in test_file_strings(path):
            text = textwrap.dedent(s)
            if "from tvm.script" not in text and "from tirkit.script" not in text:
                text = HEAD + text
            for k in _kernels_of(path, text, True):
                lines = text.splitlines()[k.func.span.line - 1:k.func.span.end_line]
                key = (path, k.name, "\n".join(lines))
                if key not in seen:
                    seen.add(key)
                    out.append(k)
    return tuple(out)
