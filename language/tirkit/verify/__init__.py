"""Verification rules: one module per rule, registered here with a stable code.

A rule is a function `rule(func: PrimFunc, ctx: RuleContext) -> list[Diagnostic]` decorated
with `@register(code_prefix, fast=...)`.  Fast rules run while the user types; the full set
runs on save and in `tirkit check`.  Rules never raise: a rule that fails is reported as an
internal note and the others still run.
"""
from __future__ import annotations

import bisect
import copy
import importlib
import os
import pkgutil
from dataclasses import dataclass, field

from ..diagnostics import Diagnostic
from ..lru import LRU

RULES: dict = {}


@dataclass
class Rule:
    name: str
    fn: object
    fast: bool
    codes: tuple


@dataclass
class RuleContext:
    target: object = None
    module: object = None
    text: str = ""
    path: str = None
    cache: dict = field(default_factory=dict)
    lowering_errors: set = field(default_factory=set)   # id(PrimFunc) lowered with errors
    pragma: str = None                 # the file's `# tirkit: target=NAME`, read once
    intrinsics: tuple = ()             # folders of more tensor intrinsics (tensorize rule)
    sizes: dict = None                 # id -> (variable, value): the values of one run

    def incomplete(self, func) -> bool:
        """Lowering reported an error inside func: statements may be missing, so rules that
        reason about whole data flows stay quiet rather than cascade."""
        return id(func) in self.lowering_errors


def register(name: str, codes=(), fast: bool = False):
    def deco(fn):
        RULES[name] = Rule(name, fn, fast, tuple(codes) or (name,))
        return fn
    return deco


_loaded = False

# Rule results per function.  Lowered kernels are cached by definition (script/parse.py):
# a function whose definition is unchanged has the same key in `ParseResult.keys`, even when
# lines were added or removed above it; its diagnostics are taken from here, their lines
# shifted, instead of running every rule again.  The key is the definition plus everything
# else a rule reads (target, the file's target pragma, the path, whether lowering reported an
# error inside it, the rule selection).  A function without a definition key (built by other
# means) is keyed by the object itself.  Bounded and thread-safe: the language server checks
# documents from a thread pool.
_results = LRU(65536)


def clear_result_cache():
    _results.clear()


def _shifted(d: Diagnostic, delta: int) -> Diagnostic:
    return d.shifted(delta) if delta else copy.copy(d)


def load_rules():
    global _loaded
    if _loaded:
        return RULES
    for m in pkgutil.iter_modules(__path__):
        if not m.name.startswith("_"):
            importlib.import_module(f"{__name__}.{m.name}")
    _loaded = True
    return RULES


def _error_between(err_lines, first, last) -> bool:
    i = bisect.bisect_left(err_lines, first)
    return i < len(err_lines) and err_lines[i] <= last


def _function_diags(name, f, ctx, keys, common, incomplete, pause=None) -> list:
    """Every selected rule on one function, or their cached results (lines shifted)."""
    from ..ir.stmt import PrimFunc
    if not isinstance(f, PrimFunc):
        return []
    place = keys.get(id(f))
    definition, line = place if place is not None else (id(f), 0)
    key = (definition, name, incomplete, *common)
    cached = _results.get(key)
    if cached is not None and (place is not None or cached[0] is f):
        return [_shifted(d, line - cached[1]) for d in cached[2]]
    rules, fast_only = common[3][0], common[3][1]
    path = common[2]
    fdiags = []
    for rule in RULES.values():
        if rules is not None and rule.name not in rules:
            continue
        if fast_only and not rule.fast:
            continue
        if pause is not None:
            pause()
        if ctx.cache.get("func") is not f:
            ctx.cache.clear()
            ctx.cache["func"] = f
        try:
            out = rule.fn(f, ctx) or []
        except RecursionError:
            out = []
        except Exception as e:   # a broken rule must not hide the others
            out = [Diagnostic("internal", "information",
                              f"rule {rule.name} failed on '{name}': {type(e).__name__}: {e}",
                              f.span)]
        for d in out:
            if d.span is not None and d.span.file is None and path:
                d.span = d.span._replace(file=path)
        fdiags.extend(out)
    # the entry keeps a function without a definition key alive, so that its id cannot be
    # taken by another object while the entry exists
    _results.put(key, (f if place is None else None, line,
                       tuple(copy.copy(d) for d in fdiags)))
    return fdiags


def run_rules(result, target=None, rules=None, fast_only=False, intrinsics=(),
              pause=None, functions=None) -> list:
    """Diagnostics of parsing plus every selected rule on every function (`intrinsics`:
    folders of more tensor intrinsics, beside $TIRKIT_INTRINSICS and the shipped ones;
    `functions`: a set of names; only the kernels holding one of them are checked, a whole
    `@I.ir_module` class for any of its functions).
    `pause`: called before each rule on each function; a caller may wait there (the
    language server lets a request the user waits for go first)."""
    load_rules()
    diags = list(result.diagnostics)
    from ..target import from_pragma
    pragma = from_pragma(result.text) if result.text else None
    intrinsics = tuple(intrinsics or ())
    ctx = RuleContext(target=target, module=result.module, text=result.text, path=result.path,
                      pragma=pragma, intrinsics=intrinsics)
    err_lines = sorted({d.span.line for d in result.diagnostics
                        if d.severity == "error" and d.span})
    selection = (tuple(sorted(rules)) if rules is not None else None, bool(fast_only),
                 len(RULES))
    # (the intrinsic folders: the tensorize/available rule reads them)
    common = (str(target) if target is not None else None, pragma, result.path, selection,
              intrinsics, os.environ.get("TIRKIT_INTRINSICS"))
    keys = getattr(result, "keys", None) or {}
    kernels = getattr(result, "kernels", None) or []
    if sum(len(k.functions) for k in kernels) == len(result.module.functions):
        groups = [(k, k.functions) for k in kernels]
    else:                                   # functions that no kernel holds: one by one
        groups = [(None, result.module.functions)]
    if functions is not None:
        groups = [(k, fs if k is not None else [(n, f) for n, f in fs if n in functions])
                  for k, fs in groups if any(n in functions for n, _ in fs)]
    for kernel, group in groups:
        place = getattr(kernel, "key", None)
        if place is not None and kernel.syntax_ok and \
                not _error_between(err_lines, kernel.chunk.start_line, kernel.chunk.end_line):
            # a whole kernel (an @I.ir_module class: every method) without lowering errors
            key = (place[0], *common)
            cached = _results.get(key)
            if cached is not None:
                diags.extend(_shifted(d, place[1] - cached[1]) for d in cached[2])
                continue
            out = []
            for name, f in group:
                out.extend(_function_diags(name, f, ctx, keys, common, False, pause))
            _results.put(key, (None, place[1], tuple(copy.copy(d) for d in out)))
            diags.extend(out)
            continue
        for name, f in group:
            if kernel is not None and not kernel.syntax_ok:
                continue
            sp = getattr(f, "span", None)
            incomplete = sp is not None and _error_between(err_lines, sp.line, sp.end_line)
            if incomplete:
                ctx.lowering_errors.add(id(f))
            diags.extend(_function_diags(name, f, ctx, keys, common, incomplete, pause))
    seen = set()
    unique = []
    for d in sorted(diags, key=Diagnostic.sort_key):
        key = (d.code, d.span.line if d.span else 0, d.span.column if d.span else 0, d.message)
        if key not in seen:
            seen.add(key)
            unique.append(d)
    return unique
