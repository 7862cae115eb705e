"""`T.ptx_mma("m16n8k16", "row", "col", "fp16", "fp16", "fp32", A, a_off, B, b_off, C, c_off,
False)`: one warp-wide `mma.sync.aligned.m16n8k16.row.col` on the registers of each thread
(`local` buffers: A holds 8 halves from a_off, B 4 from b_off, C 4 floats from c_off), as
TVM's CUDA code generator prints it after its warp memory is lowered to registers.

The thread interpreter assembles the warp's 16x16 A, 16x8 B and 16x8 C tiles from the 32
threads' registers in PTX's fragment layout (lane = 4 * group + t), multiplies, and hands
each thread its registers of D back.
"""
from __future__ import annotations

import numpy as np

from ...ir import expr as E
from ..errors import UNSUPPORTED, fail

OP = "ptx_mma"
_IN = {"fp16": ("half", "f16"), "bf16": ("nv_bfloat16", "bf16")}


def _check(call):
    a = call.args
    words = [x.value if isinstance(x, E.StringImm) else None for x in a[:6]]
    if words[0] != "m16n8k16" or words[1:3] != ["row", "col"] or words[3] not in _IN or \
            words[4] != words[3] or words[5] != "fp32":
        fail(UNSUPPORTED, "T.ptx_mma is generated for m16n8k16, row.col, fp16 or bf16 inputs "
             f"and fp32 accumulators (got {', '.join(str(w) for w in words)})", call)
    return words[3]


def call_c(call, expr) -> str:
    """The inline PTX of one T.ptx_mma call (a statement)."""
    kind = _check(call)
    a = call.args
    t, ptx = _IN[kind]
    pa = f"reinterpret_cast<const unsigned*>(({t}*){expr(a[6])} + {expr(a[7])})"
    pb = f"reinterpret_cast<const unsigned*>(({t}*){expr(a[8])} + {expr(a[9])})"
    pc = f"((float*){expr(a[10])} + {expr(a[11])})"
    return ("{ const unsigned* mma_a = " + pa + "; const unsigned* mma_b = " + pb +
            "; float* mma_c = " + pc + ";\n"
            f"    asm volatile(\"mma.sync.aligned.m16n8k16.row.col.f32.{ptx}.{ptx}.f32 "
            "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\\n\"\n"
            "      : \"=f\"(mma_c[0]), \"=f\"(mma_c[1]), \"=f\"(mma_c[2]), \"=f\"(mma_c[3])\n"
            "      : \"r\"(mma_a[0]), \"r\"(mma_a[1]), \"r\"(mma_a[2]), \"r\"(mma_a[3]), "
            "\"r\"(mma_b[0]), \"r\"(mma_b[1]),\n"
            "        \"f\"(mma_c[0]), \"f\"(mma_c[1]), \"f\"(mma_c[2]), \"f\"(mma_c[3])); }")


# PTX's fragment layouts for m16n8k16 (lane = 4 * group + t): register i of a lane -> element
def _a_pos(lane, i):
    g, t = lane // 4, lane % 4
    return g + 8 * ((i // 2) % 2), 2 * t + i % 2 + 8 * (i // 4)


def _b_pos(lane, i):
    g, t = lane // 4, lane % 4
    return 2 * t + i % 2 + 8 * (i // 2), g


def _c_pos(lane, i):
    g, t = lane // 4, lane % 4
    return g + 8 * (i // 2), 2 * t + i % 2


def _layout(pos, regs):
    rows, cols = zip(*[pos(lane, i) for lane in range(32) for i in range(regs)])
    return np.array(rows).reshape(32, regs), np.array(cols).reshape(32, regs)


A_LAYOUT, B_LAYOUT, C_LAYOUT = _layout(_a_pos, 8), _layout(_b_pos, 4), _layout(_c_pos, 4)


def warp_mma(a_regs, b_regs, c_regs):
    """(32, 8), (32, 4), (32, 4) registers of one warp -> its (32, 4) D registers."""
    A = np.zeros((16, 16))
    B = np.zeros((16, 8))
    C = np.zeros((16, 8))
    A[A_LAYOUT] = a_regs
    B[B_LAYOUT] = b_regs
    C[C_LAYOUT] = c_regs
    return (A @ B + C)[C_LAYOUT]
