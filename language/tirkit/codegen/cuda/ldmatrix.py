"""`T.ptx_ldmatrix(trans, num, ".b16", D, d_off, S, s_off)` (the tirx spelling is
`T.ptx_legacy.ldmatrix`; TVM's newer form puts the element type first, and S may be a
`T.tvm_access_ptr`): PTX's warp-wide `ldmatrix.sync.aligned.m8n8.x{num}{.trans}.shared.b16`.

The warp loads `num` (1, 2 or 4) 8x8 matrices of 16-bit elements from shared memory.  Lanes
8j..8j+7 give the addresses of matrix j's eight rows (`S + s_off`, each row 8 consecutive
elements); every lane then receives two elements of each matrix, into its registers
`D[d_off + 2j]` and `D[d_off + 2j + 1]`: row lane / 4, columns 2 (lane % 4) and the one after,
or with `trans` the same elements of the transposed matrix."""
from __future__ import annotations

import numpy as np

from ...ir import expr as E
from ...ir import ptx
from ..errors import UNSUPPORTED, fail

OPS = ptx.LDMATRIX_OPS
ROWS = 8                    # rows of a matrix, and elements of a row


def parts(call):
    """(trans, num, destination, its offset, shared source data, its offset) of either
    spelling: TVM's newer one puts the element type first, and the source may be a
    `T.tvm_access_ptr(type, data, offset, extent, rw)` (its offset added to the call's)."""
    parts = ptx.ldmatrix_call(call)
    if isinstance(parts, str):
        fail(UNSUPPORTED, f"T.{call.op} {parts}", call)
    kind = parts.kind.value if isinstance(parts.kind, E.StringImm) else None
    if kind != ".b16":
        fail(UNSUPPORTED, f"T.{call.op} loads 16-bit elements (\".b16\"); got {kind}", call)
    source = ptx.pointer(parts.src, parts.src_offset)
    if source is None:
        fail(UNSUPPORTED, f"T.{call.op} reads from a buffer's data or a T.tvm_access_ptr "
             "into it", call)
    src, off = source
    return parts.trans, parts.num, parts.dst, parts.dst_offset, src, off


def check(call, num):
    """num, refused where PTX has no such ldmatrix."""
    if int(num) not in ptx.LDMATRIX_COUNTS:
        fail(UNSUPPORTED, f"T.{call.op} loads 1, 2 or 4 matrices; got {int(num)}", call)
    return int(num)


def positions(trans: bool, num: int):
    """(matrix, source row, source column) of each lane's 2 * num elements, each (32, 2 num)."""
    lane, reg = np.arange(32)[:, None], np.arange(2 * num)[None, :]
    shape = (32, 2 * num)
    matrix = np.broadcast_to(reg // 2, shape)
    row = np.broadcast_to(lane // 4, shape)
    col = np.broadcast_to(2 * (lane % 4) + reg % 2, shape)
    return (matrix, col, row) if trans else (matrix, row, col)


def _element(ptr) -> str:
    return getattr(getattr(ptr, "type_annotation", None), "element", None) or "float16"


def call_c(call, expr, ctype) -> str:
    """The inline PTX of one ldmatrix call (a statement)."""
    trans, num, dst, d_off, src, s_off = parts(call)
    if not all(isinstance(x, E.IntImm) for x in (trans, num)):
        fail(UNSUPPORTED, f"T.{call.op} is generated with a constant count and transpose "
             "flag (PTX names them in the instruction)", call)
    num = check(call, num.value)
    d = f"reinterpret_cast<unsigned*>(({ctype(_element(dst))}*){expr(dst)} + {expr(d_off)})"
    s = f"(({ctype(_element(src))}*){expr(src)} + {expr(s_off)})"
    regs = ", ".join(f"%{i}" for i in range(num))
    outs = ", ".join(f'"=r"(ldm_d[{i}])' for i in range(num))
    return ("{ unsigned* ldm_d = " + d + ";\n"
            "    unsigned ldm_s = (unsigned)__cvta_generic_to_shared(" + s + ");\n"
            f"    asm volatile(\"ldmatrix.sync.aligned.m8n8.x{num}"
            f"{'.trans' if trans.value else ''}.shared.b16 {{{regs}}}, [%{num}];\\n\"\n"
            f"      : {outs}\n      : \"r\"(ldm_s)); }}")
