"""CST -> IR lowering, one module per construct; `Lowerer` puts them together."""
from __future__ import annotations

from .access import AccessMixin
from .blocks import BlockMixin
from .buffers import BufferMixin
from .calls import CallMixin
from .context import Context, LowerError
from .exprs import ExprMixin
from .funcs import ConstantsBuilder, FuncMixin
from .loops import LoopMixin
from .operands import OperandMixin
from .pyvalues import PyValueMixin
from .scalars import ScalarMixin
from .sparse import SparseMixin
from .stmts import StmtMixin


class Lowerer(Context, ExprMixin, OperandMixin, PyValueMixin, AccessMixin, CallMixin, StmtMixin,
              ScalarMixin, LoopMixin, BlockMixin, BufferMixin, FuncMixin, SparseMixin):
    # `T.<name>(...)` as a statement of its own: handler method
    FRAME_CALLS = {
        "reads": "reads_stmt", "writes": "writes_stmt", "where": "where_stmt",
        "block_attr": "block_attr_stmt", "sblock_attr": "block_attr_stmt",
        "func_attr": "func_attr_stmt", "evaluate": "evaluate_stmt",
        "launch_thread": "launch_thread_stmt",
    }
    # `name = T.<name>(...)`: handler method (target, call, stmt, name)
    ASSIGN_CALLS = {
        "axis.spatial": "iter_var", "axis.S": "iter_var", "axis.reduce": "iter_var",
        "axis.R": "iter_var", "axis.scan": "iter_var", "axis.opaque": "iter_var",
        "axis.remap": "remap", "match_buffer": "match_buffer",
        "alloc_buffer": "alloc_buffer", "sblock_alloc_buffer": "alloc_buffer",
        "decl_buffer": "buffer_alias", "Buffer": "buffer_alias", "buffer_decl": "buffer_alias",
        "allocate": "allocate", "allocate_const": "allocate_const",
        "launch_thread": "launch_thread_assign", "env_thread": "env_thread",
        "bind": "bind_stmt", "meta_var": "meta_var_assign",
        "dense_fixed": "sparse_axis", "dense_variable": "sparse_axis",
        "sparse_fixed": "sparse_axis", "sparse_variable": "sparse_axis",
        "match_sparse_buffer": "match_sparse_buffer",
    }

    def __init__(self, *args, table=None, base_dir=None, comments=(), **kwargs):
        super().__init__(*args, **kwargs)      # `constants=`: the file's top-level values
        self.constants = ConstantsBuilder(table, base_dir)
        self.env_threads = {}
        self.func_attrs = []
        self.func_attr_spans = {}
        self.rebound = set()
        self.stepped_names = {}      # id(v * step + start) -> v, of each loop with a step
        self.buffer_map = []
        self.sparse_axes = []
        self.sp_iters = None
        self._own_comments = []
        self._trailing_comments = {}
        lines = self.source_lines
        for line, col, text in comments:
            before = lines[line - 1][:col - 1] if 0 < line <= len(lines) else ""
            if before.strip():
                self._trailing_comments[line] = text
            else:
                self._own_comments.append((line, text))
        self._own_i = 0


__all__ = ["Lowerer", "LowerError"]
