"""Pass 5: constants.  Each `AllocateConst` takes its values from the module's constant table
(`IRModule.constants[name].array()`); the statement stays, and the LLVM emitter turns the
collected arrays into read-only globals."""
from __future__ import annotations

import numpy as np

from ...ir import expr as E
from ...ir import stmt as S
from ...ir.constants import numpy_dtype
from ...ir.visit import walk
from ..errors import UNSUPPORTED, fail


def collect_constants(body: S.Stmt, table) -> dict:
    """{const_name: numpy array (flat, the allocation's dtype)} for every AllocateConst."""
    out = {}

    def fn(x):
        if isinstance(x, E.PrimExpr):          # no statement inside an expression
            return False
        if isinstance(x, S.AllocateConst):
            if table is None or x.const_name not in table:
                fail(UNSUPPORTED, f"constant '{x.const_name}' is not in the module's "
                     "constant table", x)
            arr = table[x.const_name].array()
            if arr is None:
                fail(UNSUPPORTED, f"constant '{x.const_name}' has no values (missing .params "
                     "file?)", x)
            out[x.const_name] = np.ascontiguousarray(arr, dtype=numpy_dtype(x.dtype)).ravel()
    walk(body, fn)
    return out
