"""signature/iter-type: a block iterator whose declared kind its use contradicts: a spatial
(data-parallel) iterator that does not index what the block writes, or a reduction iterator
that indexes what its `T.init()` initializes.

TensorIR's block signature says the instances of a block that differ in a spatial iterator
are independent: any order, or all at once, gives the same result, and schedule primitives
(`parallel`, `reorder`, `compute_at`) rely on it.  When a store of the block does not depend
on a spatial iterator `vj` (with more than one value), every instance for one value of the
other iterators writes the same element, so they are not independent:

- error, when the store reads the element it writes (`B[vi] = B[vi] + A[vi, vj]`): an
  accumulation over `vj`, which makes `vj` a reduction iterator (`T.axis.reduce`, "R" in
  `T.axis.remap`, with a `T.init()`).  TVM compiles it in loop order, and its schedule
  primitives refuse the block later ("does not have compact dataflow": it is neither a
  complete block, since it reads what it writes, nor a reduction block);
- warning, when it does not (`B[vi] = A[vi, vj]`, or a scratch element written, then read
  back): the last instance wins.  TVM takes the block for a complete one and lets a
  schedule run `vj` in parallel, where the instances overwrite each other's value.

A reduction iterator that moves the index of a store of `T.init()` (`C[vi, vj] = 0` under
"SR") is an error: the init runs only where every reduction iterator is at its first value,
so the elements of its other values are never initialized (TVM's own negative test
`rowsum_not_dominant` is such a block).

For spatial iterators, only what is certain is reported: stores to parameters and to
buffers allocated outside the block, in global or shared memory (a local buffer is private
to its thread once lowered), whose indices do not contain the iterator even through a
`let`, under no guard (`if`, `T.where`, `T.if_then_else`) that mentions it, for an
iterator whose binding moves with a loop of more than one iteration.  Reported on the
iterator, with the store (or the init's store) as a related location.  `reduction_edit`
is the quick fix of the first case (verify/fixes.py).  Spatial instances that depend on
each other through stores that do index the iterator (`A[vi + 1] = A[vi]`) are found by
enumeration in verify/instance_dependence.py, under this code; `scan_edit` is its fix."""
from __future__ import annotations

import re

from ..arith.writeback import simplify
from ..diagnostics import error, warning
from ..ir import expr as E
from ..ir.visit import vars_in
from . import register
from ._common import block_label, const_int, func_accesses, same_element, text

CODE = "signature/iter-type"
_SHARED = ("global", "shared", "shared.dyn")


def _deps(node, lets) -> set:
    """ids of the variables `node` depends on, through `let` bindings."""
    out, todo = set(), vars_in(node)
    while todo:
        v = todo.pop()
        if id(v) in out:
            continue
        out.add(id(v))
        if v in lets:
            todo.extend(vars_in(lets[v]))
    return out


def _moves(binding, loops, lets) -> bool:
    """Whether the binding takes more than one value: it uses a loop of more than one
    iteration (or one of unknown extent)."""
    deps = _deps(binding, lets)
    return any(id(lp.var) in deps and const_int(lp.extent) != 1 for lp in loops)


def block_accesses(fa):
    """({id(BlockRealize): the accesses of its body}, {id(BlockRealize): the stores of its
    init}), for each block the accesses in no block inside it, none passed whole."""
    by_block, inits = {}, {}
    for a in fa.accesses:
        if a.blocks and not a.opaque and not a.in_init:
            by_block.setdefault(id(a.blocks[-1]), []).append(a)
        elif a.blocks and a.in_init and a.is_write:
            inits.setdefault(id(a.blocks[-1]), []).append(a)
    return by_block, inits


def shared_outside(fa):
    """A test `(access, BlockRealize) -> bool`: whether the access's buffer is one that all
    the block's instances share, certainly: a parameter or a global or shared buffer
    allocated outside the block (a local buffer is private to its thread once lowered), not
    a `T.match_buffer` view, not declared in the block's body."""
    owned = {id(buf): id(r) for buf, r in fa.allocs}
    matched = {id(m.buffer) for r in fa.realizes for m in r.block.match_buffers}
    return lambda a, r: a.local_depth is None and a.buffer.scope in _SHARED and \
        id(a.buffer) not in matched and owned.get(id(a.buffer)) != id(r)


def unindexed(fa, by_block) -> list:
    """[(BlockRealize, spatial IterVar, its extent, store)]: each moving spatial iterator
    that a store of its block to a shared buffer does not index (nor guard), with the first
    such store."""
    shared = shared_outside(fa)
    return [(r, *found) for r in fa.realizes
            for found in unindexed_in(fa, r, [a for a in by_block.get(id(r), ())
                                              if a.is_write and shared(a, r)])]


def unindexed_in(fa, r, stores) -> list:
    """[(spatial IterVar, its extent, store)] of block r, as `unindexed` gives them;
    `stores`: the block's stores to buffers its instances share (`shared_outside`)."""
    if not stores:
        return []
    out, deps = [], None            # deps, per store: what its indices and guards depend on
    loops = fa.loops_of[id(r)]
    for iv, value in zip(r.block.iter_vars, r.iter_values):
        extent = const_int(iv.dom.extent)
        if iv.kind != "S" or iv.span is None or extent == 1 or \
                not _moves(value, loops, fa.lets):
            continue
        if deps is None:
            deps = [_deps((a.indices, tuple(c for c, _ in a.conds)), fa.lets)
                    for a in stores]
        a = next((a for a, d in zip(stores, deps) if id(iv.var) not in d), None)
        if a is not None:
            out.append((iv, extent, a))
    return out


@register(CODE, fast=True)
def check_iter_type(func, ctx):
    if ctx.incomplete(func):
        return []
    fa = func_accesses(func, ctx)
    by_block, inits = block_accesses(fa)
    out = _initialised_by_reduction(fa, inits)
    for r, iv, extent, store in unindexed(fa, by_block):
        out.append(_report(r.block, iv, extent, store, by_block[id(r)]))
    return out


def _initialised_by_reduction(fa, init_stores) -> list:
    """Errors for a reduction iterator that indexes what `T.init()` initializes
    (`C[vi, vj] = 0` under "SR"): the init runs only where every reduction iterator is at
    its first value, so the elements of its other values are never initialized.
    `init_stores`: id(BlockRealize) -> the stores of its init."""
    from ..arith import Analyzer
    an = Analyzer()
    out = []
    for r in fa.realizes:
        b = r.block
        inits = init_stores.get(id(r))
        if b.init is None or not inits:
            continue
        loops = fa.loops_of[id(r)]
        for iv, value in zip(b.iter_vars, r.iter_values):
            extent = const_int(iv.dom.extent)
            if iv.kind != "R" or iv.span is None or extent == 1 or \
                    not _moves(value, loops, fa.lets):
                continue
            a = next((a for a in inits if any(an.to_aff(i).terms.get(iv.var)
                                              for i in a.indices)), None)
            if a is None:
                continue
            name = iv.var.name
            written = f"{a.buffer.name}[{', '.join(text(i) for i in a.indices)}]"
            rel = [(a.span, f"T.init() writes `{written}` here")] if a.span else []
            others = f"the other {extent - 1} values" if extent is not None else \
                "its other values"
            out.append(error(
                CODE, f"{block_label(b)}: reduction iterator `{name}` indexes `{written}`, "
                f"which T.init() initializes: the init runs only where every reduction "
                f"iterator is at its first value, so the elements of {others} of `{name}` "
                f"are never initialized; `{name}` is spatial (\"S\" in T.axis.remap) if each "
                f"of its values writes its own element", iv.span, rel))
    return out


def _report(block, iv, extent, store, accesses):
    name = iv.var.name
    written = f"{store.buffer.name}[{', '.join(text(i) for i in store.indices)}]"
    many = f"the {extent} instances" if extent is not None else "the instances"
    rel = [(store.span, f"`{written}` is written here")] if store.span else []
    # the store's own value (the same statement) loads the element: an accumulation
    reads = any(not a.is_write and a.order == store.order and same_element(a, store)
                for a in accesses)
    if reads:
        init = "" if block.init is not None else " and give the block a T.init()"
        return error(CODE,
                     f"{block_label(block)}: spatial iterator `{name}` does not index the "
                     f"element it updates, `{written}`: {many} of `{name}` for each value of "
                     f"the other iterators all accumulate into it, which makes `{name}` a "
                     f"reduction (TVM's schedule primitives refuse the block: it lacks "
                     f"compact dataflow); declare it with T.axis.reduce (\"R\" in "
                     f"T.axis.remap){init}",
                     iv.span, rel)
    return warning(CODE,
                   f"{block_label(block)}: spatial iterator `{name}` does not index "
                   f"`{written}`: {many} of `{name}` for each value of the other iterators "
                   f"all write this element: the last one wins, and a parallel `{name}` "
                   f"(which TVM allows) makes them overwrite each other's value", iv.span, rel)


_ONE = re.compile(r"\baxis\s*\.\s*(spatial|S)\s*\(")
_REMAP = re.compile(r"\baxis\s*\.\s*remap\s*\(\s*(['\"])([A-Za-z]*)\1")


def reduction_edit(lines, line: int, column: int):
    """The edit that declares the iterator named at (line, column) (1-based, where this rule
    reports it) a reduction: its letter of `T.axis.remap("SS", ...)` made "R" (the call may
    wrap onto the next lines), or `T.axis.spatial`/`T.axis.S` made `T.axis.reduce`/
    `T.axis.R`.  (line, column, end_column, new text), 1-based with the end exclusive, or
    None when the source is not one of these forms."""
    return _kind_edit(lines, line, column, "R")


def scan_edit(lines, line: int, column: int, realize):
    """The edit that declares the iterator named at (line, column) of the block `realize` a
    scan, as `reduction_edit` does for a reduction: `T.axis.spatial`/`T.axis.S` made
    `T.axis.scan`.  `T.axis.remap` has no letter for a scan, so its statement is split
    (`remap_split`).  (line, column, end_line, end_column, new text), or None."""
    edit = _kind_edit(lines, line, column, "C")
    if edit is not None:
        ln, start, end, new = edit
        return (ln, start, ln, end, new)
    return remap_split(lines, line, column, realize)


def remap_split(lines, line: int, column: int, realize):
    """The edit that takes the iterator named at (line, column) out of its
    `T.axis.remap(kinds, [loops])` statement (the call may wrap onto the next two lines) and
    declares it `T.axis.scan` over its loop's range; the iterators before and after it stay
    in a remap of their own, or are declared alone where one is left.  None where the
    statement is not of that form (loops passed as one tuple, names not the block's)."""
    found = _declaration(lines, line, column) if realize is not None else None
    if found is None:
        return None
    src, eq, names, index, joined = found
    m = _REMAP.search(joined, eq.end())
    tail = _LOOPS.match(joined, m.end()) if m is not None else None
    if tail is None:
        return None
    prefix = joined[eq.end():m.start()].strip()          # "T." as the file spells it
    loops = [x.strip() for x in tail.group(1).split(",") if x.strip()]
    ivs = [(iv, v) for iv, v in zip(realize.block.iter_vars, realize.iter_values)
           if iv.span is not None and iv.span.line == line]
    if [iv.var.name for iv, _ in ivs] != names or [getattr(v, "name", None) for _, v in ivs] \
            != loops or len(m.group(2)) != len(names) or not prefix.endswith("."):
        return None
    iv = ivs[index][0]
    if iv.var.dtype != "int32" and iv.dom.extent.dtype != iv.var.dtype:
        return None
    quote, kinds = m.group(1), m.group(2)

    def kept(lo, hi):                   # the iterators [lo, hi), of the kinds they had
        if hi - lo == 1:
            return [f"{names[lo]} = {prefix}axis.{_SPELLED[kinds[lo]]}"
                    f"({_dom_text(ivs[lo][0])}, {loops[lo]})"]
        return [f"{', '.join(names[lo:hi])} = {prefix}axis.remap({quote}{kinds[lo:hi]}{quote}, "
                f"[{', '.join(loops[lo:hi])}])"] if hi > lo else []
    decls = kept(0, index) + [f"{names[index]} = {prefix}axis.scan({_dom_text(iv)}, "
                              f"{loops[index]})"] + kept(index + 1, len(names))
    if prefix != "T." and any("T." in d for d in decls):
        return None                     # (`text` spells a typed constant `T.int64(8)`)
    indent = src[:len(src) - len(src.lstrip())]
    return (line, len(indent) + 1, *_position(joined, line, tail.end()),
            ("\n" + indent).join(decls))


_LOOPS = re.compile(r"\s*,\s*\[([\w\s,]*)\]\s*\)")
_SPELLED = {"S": "spatial", "R": "reduce"}


def _dom_text(iv) -> str:
    """An iterator's range as `T.axis.*` takes it: its extent, or (start, end)."""
    dom = iv.dom
    if const_int(dom.min) == 0:
        return text(dom.extent)
    return f"({text(dom.min)}, {text(simplify(E.Add(dom.min, dom.extent, dom.min.dtype)))})"


def _declaration(lines, line, column):
    """(its source line, the match of its `=`, the names it assigns, the index of the one at
    `column`, the line joined with the next two) of the iterator declaration whose name is
    at (line, column); None where (line, column) is not left of an assignment."""
    if not 1 <= line <= len(lines):
        return None
    src = lines[line - 1]
    eq = re.search(r"(?<![=!<>])=(?!=)", src)
    if eq is None or eq.start() < column - 1:
        return None
    names = [n.strip() for n in src[:eq.start()].split(",")]
    return (src, eq, names, src[:column - 1].count(","),
            "\n".join(lines[line - 1:line + 2]))


def _position(joined, line, at):
    """(line, column), 1-based, of offset `at` of the lines `joined` that start at `line`."""
    return line + joined.count("\n", 0, at), at - (joined.rfind("\n", 0, at) + 1) + 1


def _kind_edit(lines, line, column, kind):
    found = _declaration(lines, line, column)
    if found is None:
        return None
    src, eq, names, index, joined = found
    one = _ONE.search(src, eq.end())
    if one is not None:
        new = "scan" if kind == "C" else "reduce" if one.group(1) == "spatial" else "R"
        return (line, one.start(1) + 1, one.end(1) + 1, new)
    m = _REMAP.search(joined, eq.end())
    if kind != "R" or m is None or len(m.group(2)) != len(names) or m.group(2)[index] != "S":
        return None
    ln, col = _position(joined, line, m.start(2) + index)
    return (ln, col, col + 1, "R")
