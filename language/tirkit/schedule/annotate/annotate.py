"""annotate / unannotate: set or drop an annotation on a loop or a block."""
from __future__ import annotations

import dataclasses

from ...ir import expr as E
from ..registry import primitive
from ..state import BlockRV

_OK = (int, float, str, bool, E.PrimExpr)


def _check_value(sch, v, node):
    if isinstance(v, (list, tuple)):
        for x in v:
            _check_value(sch, x, node)
        return
    if isinstance(v, dict):
        for k, x in v.items():
            _check_value(sch, k, node)
            _check_value(sch, x, node)
        return
    if not isinstance(v, _OK):
        raise sch.error("annotate/bad-value", f"annotation value {v!r} cannot be written in "
                        "TVMScript", node)


def _target(sch, rv):
    if isinstance(rv, BlockRV):
        return sch.block_info(rv).block
    return sch.loop_info(rv)[0]


@primitive("annotate")
def annotate(sch, block_or_loop, ann_key, ann_val):
    node = _target(sch, block_or_loop)
    if not isinstance(ann_key, str):
        raise sch.error("annotate/bad-key", "annotation keys are strings", node)
    _check_value(sch, ann_val, node)
    if isinstance(ann_val, tuple):
        ann_val = list(ann_val)
    ann = tuple((k, v) for k, v in node.annotations if k != ann_key) + ((ann_key, ann_val),)
    sch.replace(block_or_loop.func, node, dataclasses.replace(node, annotations=ann))


@primitive("unannotate")
def unannotate(sch, block_or_loop, ann_key):
    node = _target(sch, block_or_loop)
    if not any(k == ann_key for k, _ in node.annotations):
        raise sch.error("unannotate/missing-key", f"no annotation '{ann_key}' here", node)
    ann = tuple((k, v) for k, v in node.annotations if k != ann_key)
    sch.replace(block_or_loop.func, node, dataclasses.replace(node, annotations=ann))
