"""Shared checks for the schedule tests (the shared kernels are in kernels.py)."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import tirkit
from tirkit.ir import stmt as S
from tirkit.schedule import Schedule

from conftest import EXAMPLES

EXAMPLES_VALID = EXAMPLES / "valid"


def sched(text, func_name=None):
    r = tirkit.parse(text)
    assert not [d for d in r.diagnostics if d.severity == "error"], r.diagnostics
    return Schedule(r.module, func_name)


def body_text(sch) -> str:
    """The printed module without the import line, for before/after comparisons."""
    return tirkit.to_script(sch.mod, imports=False).strip() + "\n"


def check_result(sch):
    """The printed result parses back to the same IR, checks clean, and the trace replays
    (as recorded instructions and as the printed Python) to the same module."""
    text = tirkit.to_script(sch.mod)
    r = tirkit.parse(text)
    assert not r.diagnostics, (r.diagnostics, text)
    assert tirkit.structural_equal(_fold_extents(r.module), _fold_extents(sch.mod)), text
    errs = [d for d in tirkit.check(text) if d.severity == "error"]
    assert not errs, (errs, text)
    check_replay(sch)


def check_replay(sch):
    """The trace replays on the original, as recorded instructions and as the printed
    Python, to the same module."""
    replayed = sch.trace.apply(Schedule(sch.original))
    assert tirkit.structural_equal(replayed.mod, sch.mod)
    ns = {"sch": Schedule(sch.original)}
    exec(sch.trace.as_python(), ns)
    assert tirkit.structural_equal(ns["sch"].mod, sch.mod)


def rewrite_functions(mod, fn):
    """`mod` with the body of each PrimFunc rebuilt through `fn(new, old)` (the callback of
    `_ir.rebuild`: a replacement node, or None to keep the rebuilt one)."""
    import dataclasses

    from tirkit.schedule import _ir
    funcs = tuple((n, dataclasses.replace(f, body=_ir.rebuild(f.body, fn))
                   if isinstance(f, S.PrimFunc) else f) for n, f in mod.functions)
    return dataclasses.replace(mod, functions=funcs)


def _fold_extents(mod):
    """The parser keeps a slice `a:b` as extent `b - a`; fold it to a constant when it is one
    (as TVM's parser does) before comparing."""
    import dataclasses

    from tirkit.ir import expr as E
    from tirkit.arith import writeback as _arith

    def fn(y, x):
        if isinstance(y, S.BufferRegion):
            rs = tuple(E.Range(r.min, _arith.simplify(r.extent)) for r in y.region)
            return dataclasses.replace(y, region=rs)
        return None
    return rewrite_functions(mod, fn)


def _inputs(func, seed, shapes=None):
    rng = np.random.default_rng(seed)
    arrays = []
    for n, (_, b) in enumerate(func.buffer_map):
        shape = tuple(int(d.value) for d in b.shape) if shapes is None else tuple(shapes[n])
        if b.dtype.startswith("float"):
            arrays.append(rng.standard_normal(shape).astype(b.dtype))
        else:
            arrays.append(rng.integers(-8, 8, shape).astype(b.dtype))
    return arrays


def check_same_results(sch, func_name=None, seed=0, shapes=None):
    """Run the original and the scheduled function on the same random inputs through the
    reference interpreter; every buffer must agree afterwards. `shapes` gives the arrays'
    shapes where the buffers' are symbolic (the interpreter reads the symbols off them)."""
    interp = pytest.importorskip("tirkit.codegen.interp")
    name = func_name or sch._default
    f0 = sch.original[name]
    f1 = sch.mod[name]
    a0 = _inputs(f0, seed, shapes)
    a1 = [x.copy() for x in a0]
    interp.run_reference(f0, a0, module=sch.original)
    interp.run_reference(f1, a1, module=sch.mod)
    for x, y in zip(a0, a1):
        assert np.abs(x).sum() > 0
        np.testing.assert_allclose(x, y, rtol=1e-5, atol=1e-5)


def check_scheduled(sch, **kw):
    """The whole check of a scheduled result: check_result (it prints, parses back, checks
    clean and replays), then check_same_results (it computes what the original computes)."""
    check_result(sch)
    check_same_results(sch, **kw)


def check_same_results_rewritten(sch, fn, **kw):
    """check_same_results with the original and the result both rewritten by `fn` first
    (see rewrite_functions), for what the interpreter does not run as written."""
    both = Schedule(rewrite_functions(sch.original, fn))
    both._mod = rewrite_functions(sch.mod, fn)
    check_same_results(both, **kw)


_ANY = object()


@contextlib.contextmanager
def refused(kind, node=_ANY):
    """The block raises a ScheduleError of `kind` (or of one of the kinds of a tuple) naming
    `node`; yields pytest's ExceptionInfo for further checks."""
    with pytest.raises(tirkit.ScheduleError) as e:
        yield e
    if isinstance(kind, tuple):
        assert e.value.kind in kind, e.value
    else:
        assert e.value.kind == kind, e.value
    if node is not _ANY:
        assert e.value.node_name == node, e.value


def loops_of(sch, block_name):
    return sch.get_loops(sch.get_block(block_name))


def loop_nodes(sch, rvs):
    return [sch.get(rv) for rv in rvs]


def first_realize(stmt):
    from tirkit.ir.visit import walk
    out = []
    walk(stmt, lambda x: out.append(x) if isinstance(x, S.BlockRealize) else True)
    return out
