"""Sparse kernels (the SparseTIR spelling): axes, sparse buffers and sparse iterations.

An axis is one level of a sparse tensor's storage.  Its kind says how the level stores its
coordinates (the formats of Pigeon): `dense_fixed` is uncompressed (`u`), `sparse_variable`
and `sparse_fixed` are compressed (`c`: an indptr per parent position and sorted indices, or
a fixed number of indices per parent position), `dense_variable` is a ragged dense level
(indptr only).  `format="hash"` marks a compressed level whose coordinates can also be found
in constant time (`h`); SparseTIR has no such level, it is tirkit's annotation.

Axes and sparse buffers are bound by identity in structural equality (like variables)."""
from __future__ import annotations

from typing import ClassVar, Optional

from ..diagnostics import Span
from .expr import PrimExpr, Var
from .stmt import SPAN_, TRAIL_, TRIVIA_, Buffer, Stmt, node

AXIS_KINDS = ("dense_fixed", "dense_variable", "sparse_fixed", "sparse_variable")


@node
class Axis:
    name: str
    kind: str                              # one of AXIS_KINDS
    parent: Optional["Axis"]               # None for dense_fixed
    length: PrimExpr
    nnz: Optional[PrimExpr] = None         # nnz (variable kinds) or nnz_cols (sparse_fixed)
    indptr: Optional[Var] = None
    indices: Optional[Var] = None
    idtype: str = "int32"
    sorted: bool = True
    format: str = ""                       # "" or "hash"
    span: Optional[Span] = SPAN_()
    BIND_BY_IDENTITY: ClassVar[bool] = True

    @property
    def is_sparse(self) -> bool:
        return self.kind in ("sparse_fixed", "sparse_variable")

    @property
    def is_variable(self) -> bool:
        return self.kind in ("dense_variable", "sparse_variable")

    @property
    def level_format(self) -> str:
        """Pigeon's name of the level's format: `u`, `c` or `h`."""
        if self.format == "hash":
            return "h"
        return "c" if self.is_sparse else "u"


@node
class SparseBuffer(Buffer):
    """A buffer over sparse axes: `A = T.match_sparse_buffer(a, (I, J), "float32")`.
    `shape` holds the axes' lengths (its dense view); `axes` the levels themselves."""
    axes: tuple = ()
    BIND_BY_IDENTITY: ClassVar[bool] = True


@node
class SpIterVar:
    var: Var
    axis: Axis
    is_reduction: bool
    span: Optional[Span] = SPAN_()


@node
class SparseIteration(Stmt):
    """`with T.sp_iter([I, J, K], "SRS", "name") as [i, j, k]:` and its body."""
    name: str
    sp_iter_vars: tuple                    # tuple[SpIterVar]
    body: Stmt
    init: Optional[Stmt] = None
    annotations: tuple = ()
    span: Optional[Span] = SPAN_()
    comments: tuple = TRIVIA_()
    trailing: Optional[str] = TRAIL_()


def buffer_axes(buf) -> tuple:
    return getattr(buf, "axes", ()) or ()


__all__ = ["Axis", "AXIS_KINDS", "SparseBuffer", "SpIterVar", "SparseIteration", "buffer_axes"]
