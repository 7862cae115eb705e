"""Python-embedded kernels: `@T.prim_func` / `@I.ir_module` from `tirkit.script` read the
decorated definition's source through `inspect` and build its IR when the module is imported.

The source is parsed, never executed: the body of a kernel does not run. Values of the
enclosing module and closure (ints, floats, strings, tuples of them) may be used in the
kernel as constants, as TVMScript allows.
"""
from __future__ import annotations

import inspect
import sys

from ..diagnostics import Diagnostic, Span, TirkitError

_CONST_TYPES = (int, float, str)


class Placeholder:
    """`T.Buffer((128,), "float32")`, `T.handle`, `T.int32`...: what Python evaluates in a
    kernel's signature (annotations, defaults) before the decorator reads the source."""
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __call__(self, *args, **kwargs):
        return Placeholder(self._name + "()")

    def __getitem__(self, item):
        return Placeholder(self._name + "[]")

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return Placeholder(f"{self._name}.{name}")

    def __repr__(self):
        return f"<tirkit.script {self._name}>"


def in_class_body(depth: int) -> bool:
    """True when the caller `depth` frames up is executing a class body (the functions of an
    `@I.ir_module` class are built with the class, not one by one)."""
    frame = sys._getframe(depth + 1)
    try:
        loc = frame.f_locals
        return "__module__" in loc and "__qualname__" in loc and frame.f_code.co_name != "<module>"
    finally:
        del frame


def _class_source(cls, filename, lineno):
    """Source lines of a class found in its file by name, near the line that decorates it
    (for classes whose module is not in sys.modules, where inspect cannot find them)."""
    import ast
    import linecache
    text = "".join(linecache.getlines(filename))
    if not text:
        raise OSError(f"cannot read {filename}")
    best = None
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ClassDef) and node.name == cls.__name__:
            first = min([node.lineno] + [d.lineno for d in node.decorator_list])
            if first <= lineno <= node.end_lineno or best is None:
                best = (first, node.end_lineno)
    if best is None:
        raise OSError(f"class '{cls.__name__}' not found in {filename}")
    lines = text.split("\n")[best[0] - 1:best[1]]
    return [ln + "\n" for ln in lines], best[0]


def _source(obj, where=None):
    """(source lines of obj's definition, path, first line)."""
    try:
        try:
            lines, start = inspect.getsourcelines(obj)
            path = inspect.getsourcefile(obj) or inspect.getfile(obj)
        except (OSError, TypeError, KeyError):
            if where is None or not inspect.isclass(obj):
                raise
            path = where[0]
            lines, start = _class_source(obj, *where)
    except (OSError, TypeError, KeyError, SyntaxError) as e:
        span = Span(1, 1, 1, 2, None)
        raise TirkitError([Diagnostic("syntax", "error", f"the source of '{obj.__qualname__}' "
                                      f"is not available ({e})", span)]) from None
    start = max(start, 1)
    return lines, path, start


def _constants(obj, func=None, scope=None) -> dict:
    """The enclosing module's and closure's constant values, by name."""
    out = {}
    mod = sys.modules.get(obj.__module__)
    scopes = [scope or getattr(func, "__globals__", None) or (vars(mod) if mod else {})]
    if func is not None and func.__closure__:
        scopes.append({name: cell.cell_contents
                       for name, cell in zip(func.__code__.co_freevars, func.__closure__)
                       if _has_contents(cell)})
    for scope in scopes:
        for k, v in scope.items():
            if isinstance(v, _CONST_TYPES) and not isinstance(v, bool) or (
                    isinstance(v, tuple) and all(isinstance(x, _CONST_TYPES) for x in v)):
                out[k] = v
    return out


def _has_contents(cell) -> bool:
    try:
        cell.cell_contents
        return True
    except ValueError:
        return False


def build(obj, tir_alias_line: str, func=None, scope=None, where=None):
    """Parse the definition of obj; (ParseResult, its kernel) or TirkitError."""
    from ..ir.constants import ConstantTable
    from ..syntax.chunks import find_chunks
    from ..verify import run_rules
    from .parse import ParseResult, lower_kernel
    from ..ir.stmt import IRModule

    src_lines, path, start = _source(obj, where)
    # the definition at its own line numbers, so diagnostics point into the user's file
    body = "".join(src_lines).rstrip("\n").split("\n")
    lines = [""] * (start - 1) + body
    lines.append(tir_alias_line)      # the aliases the decorators use, resolved as imports
    text = "\n".join(lines) + "\n"
    chunks, aliases = find_chunks(text)
    chunks = [c for c in chunks if c.start_line >= start]
    if not chunks:
        raise TirkitError([Diagnostic("syntax", "error", f"'{obj.__qualname__}' is not a kernel "
                                      "definition", Span(start, 1, start, 2, path))])
    chunk = chunks[0]
    kernel = lower_kernel(chunk, aliases, ConstantTable(), path, _constants(obj, func, scope))
    module = IRModule(tuple(kernel.functions), kernel.module_name, ConstantTable(), (), None,
                      chunk.spelling)
    result = ParseResult(module, list(kernel.diagnostics), [kernel], text, path)
    diags = run_rules(result)
    errors = [d for d in diags if d.severity == "error"]
    if errors or not kernel.functions:
        raise TirkitError(errors or diags or [Diagnostic(
            "syntax", "error", f"'{obj.__qualname__}' could not be built",
            Span(start, 1, start, 2, path))])
    return result, kernel
