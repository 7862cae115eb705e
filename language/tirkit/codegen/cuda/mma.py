"""`T.ptx_mma(shape, a_layout, b_layout, a_type, b_type, c_type, A, a_off, B, b_off, C, c_off,
saturate)` (the tirx spelling is `T.ptx_legacy.mma`): one warp-wide PTX
`mma.sync.aligned` on the registers of each thread (`local` buffers: A's, B's and C's
elements from their offsets), as TVM's CUDA code generator prints it after its warp memory
is lowered to registers.  C is the accumulator, updated in place (D = A B + C).

The forms generated and run are those of PTX's fragment layouts below (lane = 4 * group +
t), each checked against TVM's own GPU-tested kernels of that form:
- m16n8k16 and m16n8k8, row.col: fp16 or bf16 inputs, fp32 accumulators (fp16 too for
  fp16 inputs);
- m8n8k4, row.row: fp16 inputs, fp16 or fp32 accumulators.  This one is four independent
  8x8x4 products, one per quad pair (lanes 4q..4q+3 hold rows 0-3 of A and columns 0-3 of
  B, lanes 4q+16..4q+19 rows 4-7 and columns 4-7);
- m8n8k4, row.col: fp64;
- m8n8k16, m16n8k16 and m16n8k32, row.col: int8 or uint8 inputs (each its own), int32
  accumulators; `saturate` clamps to int32 (PTX's `.satfinite`), else the sum wraps.

The thread interpreter assembles the warp's tiles from the 32 threads' registers, multiplies
them exactly (float64, or int64) and hands each thread its registers of D back, rounded to
the accumulator's type.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ...ir import ptx
from ..errors import UNSUPPORTED, fail

OPS = ptx.MMA_OPS
WARP = ptx.WARP

# PTX type -> the C type of its registers' elements
_CTYPE = {"f16": "half", "bf16": "nv_bfloat16", "f32": "float", "f64": "double",
          "s8": "signed char", "u8": "unsigned char", "s32": "int"}
_FAMILY = {"f16": "f16", "bf16": "f16", "s8": "i8", "u8": "i8", "f64": "f64"}


def _a16x16(lane, i):
    g, t = divmod(lane, 4)
    return 0, g + 8 * ((i // 2) % 2), 2 * t + i % 2 + 8 * (i // 4)


def _b16x8(lane, i):
    g, t = divmod(lane, 4)
    return 0, 2 * t + i % 2 + 8 * (i // 2), g


def _c16x8(lane, i):
    g, t = divmod(lane, 4)
    return 0, g + 8 * (i // 2), 2 * t + i % 2


def _c8x8(lane, i):
    g, t = divmod(lane, 4)
    return 0, g, 2 * t + i


def _quad_pair(lane):
    return (lane % 16) // 4, lane // 16, lane % 4


def _a_m8n8k4_f16(lane, i):
    q, u, t = _quad_pair(lane)
    return q, t + 4 * u, i


def _b_m8n8k4_f16(lane, i):
    q, u, t = _quad_pair(lane)
    return q, t, i + 4 * u


def _c_m8n8k4_f32(lane, i):
    q, u, t = _quad_pair(lane)
    return q, lane % 2 + (i & 2) + 4 * u, (t & 2) + (i & 1) + (i & 4)


def _c_m8n8k4_f16(lane, i):
    q, u, t = _quad_pair(lane)
    return q, t + 4 * u, i


# (shape, a layout, b layout, input family) -> (A layout, B layout, {C type: C layout}), the
#   C types keyed by their first letter where all of them share one layout; a layout maps
#   (lane, register) to (sub-product, row, column)
_FORMS = {
    ("m16n8k16", "row", "col", "f16"): (_a16x16, _b16x8, {"f": _c16x8}),
    ("m16n8k8", "row", "col", "f16"): (
        lambda ln, i: (0, ln // 4 + 8 * (i // 2), 2 * (ln % 4) + i % 2),
        lambda ln, i: (0, 2 * (ln % 4) + i, ln // 4), {"f": _c16x8}),
    ("m8n8k4", "row", "row", "f16"): (_a_m8n8k4_f16, _b_m8n8k4_f16,
                                      {"f32": _c_m8n8k4_f32, "f16": _c_m8n8k4_f16}),
    ("m8n8k4", "row", "col", "f64"): (lambda ln, i: (0, ln // 4, ln % 4),
                                      lambda ln, i: (0, ln % 4, ln // 4), {"f": _c8x8}),
    ("m8n8k16", "row", "col", "i8"): (lambda ln, i: (0, ln // 4, 4 * (ln % 4) + i),
                                      lambda ln, i: (0, 4 * (ln % 4) + i, ln // 4),
                                      {"s": _c8x8}),
    ("m16n8k16", "row", "col", "i8"): (
        lambda ln, i: (0, ln // 4 + 8 * (i // 4), 4 * (ln % 4) + i % 4),
        lambda ln, i: (0, 4 * (ln % 4) + i, ln // 4), {"s": _c16x8}),
    ("m16n8k32", "row", "col", "i8"): (
        lambda ln, i: (0, ln // 4 + 8 * ((i // 4) % 2), 4 * (ln % 4) + i % 4 + 16 * (i // 8)),
        lambda ln, i: (0, 4 * (ln % 4) + i % 4 + 16 * (i // 4), ln // 4), {"s": _c16x8}),
}
_GENERATED = ("m16n8k16 and m16n8k8 row.col with fp16 or bf16 inputs, m8n8k4 row.row with fp16 "
              "inputs, m8n8k4 row.col with fp64, and m8n8k16, m16n8k16 and m16n8k32 row.col "
              "with int8 or uint8 inputs")


def _table(pos, count):
    """(sub, row, col) index arrays, each (32, count): where register i of each lane sits."""
    return tuple(np.array([[pos(lane, i)[j] for i in range(count)] for lane in range(WARP)])
                 for j in range(3))


@dataclass(frozen=True)
class Form:
    """One checked mma call: its PTX name, operand types and fragment layouts."""
    shape: str
    layouts: tuple
    types: tuple              # PTX types of A, B, C
    saturate: bool
    subs: int
    mnk: tuple
    counts: tuple             # registers (elements) of A, B, C per lane
    tables: tuple             # (sub, row, col) arrays of A, B, C

    @property
    def ptx(self) -> str:
        a, b, c = self.types
        sat = ".satfinite" if self.saturate else ""
        return f"mma.sync.aligned.{self.shape}.{'.'.join(self.layouts)}{sat}.{c}.{a}.{b}.{c}"


def form(call, registers=True) -> Form:
    """The call's form, or a codegen/unsupported diagnostic: what PTX has no such mma for
    (verify/ptx_operands.py reports it while the user types), a form not generated, or (with
    `registers`) a register buffer of another type than the call reads."""
    parts = ptx.mma_call(call)
    if isinstance(parts, str):
        fail(UNSUPPORTED, f"T.{call.op} {parts}", call)
    words = parts.words
    config = ptx.mma_config(parts)
    problem = (config.reason or config.message) if isinstance(config, ptx.MMAProblem) else None
    entry = None if problem or config.bit_op else \
        _FORMS.get(tuple(words[:3]) + (_FAMILY.get(config.types[0]),))
    if entry is None:
        fail(UNSUPPORTED, f"T.{call.op} ({', '.join(str(w) for w in words)}) is not a form "
             f"that is generated{': ' + problem if problem else ''}; the forms generated: "
             f"{_GENERATED}", call)
    types, mnk = config.types, config.mnk
    for (ptr, _), t, what, word in zip(parts.operands if registers else (), types, "ABC",
                                       words[3:6]):
        held = getattr(getattr(ptr, "type_annotation", None), "element", None)
        if held is not None and held != ptx.REGISTER_DTYPES[t]:
            fail(UNSUPPORTED, f"T.{call.op} reads {what} as {word}, but "
                 f"'{getattr(ptr, 'name', ptr)}' holds {held} registers", call)
    ap, bp, cs = entry
    cp = cs.get(types[2]) or cs[types[2][0]]
    counts = ptx.mma_counts(mnk, types[0])
    return Form(words[0], config.layouts, types, config.saturate,
                ptx.mma_subproducts(mnk, types[0]), mnk, counts,
                tuple(_table(p, n) for p, n in zip((ap, bp, cp), counts)))


def register_dtypes(f: Form) -> tuple:
    """The TIR dtypes of the A, B and C registers."""
    return tuple(ptx.REGISTER_DTYPES[t] for t in f.types)


def call_c(call, expr) -> str:
    """The inline PTX of one mma call (a statement)."""
    f = form(call)
    a = call.args
    operands, constraints = [], []
    for (ptr, off), t, count in zip(((a[6], a[7]), (a[8], a[9]), (a[10], a[11])), f.types,
                                    f.counts):
        ct, bits = _CTYPE[t], ptx.BITS[t]
        base = f"(({ct}*){expr(ptr)} + {expr(off)})"
        if t in ("f32", "f64"):
            operands.append(base)
            constraints.append(("f" if t == "f32" else "d", count))
        else:
            const = "" if t == f.types[2] else "const "
            operands.append(f"reinterpret_cast<{const}unsigned*>{base}")
            constraints.append(("r", count * bits // 32))
    names = ("mma_a", "mma_b", "mma_c")
    ctypes = [("float*" if t == "f32" else "double*" if t == "f64" else
               "unsigned*" if i == 2 else "const unsigned*") for i, t in enumerate(f.types)]
    decls = "; ".join(f"{ct} {nm} = {op}" for ct, nm, op in zip(ctypes, names, operands))
    (ka, na), (kb, nb), (kc, nc) = constraints
    slots, i = [], 0
    for n in (nc, na, nb, nc):
        slots.append("{" + ", ".join(f"%{j}" for j in range(i, i + n)) + "}")
        i += n
    outs = ", ".join(f'"={kc}"(mma_c[{j}])' for j in range(nc))
    ins = ", ".join([f'"{ka}"(mma_a[{j}])' for j in range(na)] +
                    [f'"{kb}"(mma_b[{j}])' for j in range(nb)] +
                    [f'"{kc}"(mma_c[{j}])' for j in range(nc)])
    return ("{ " + decls + ";\n"
            f"    asm volatile(\"{f.ptx} {', '.join(slots)};\\n\"\n"
            f"      : {outs}\n      : {ins}); }}")


def warp_mma(f: Form, a_regs, b_regs, c_regs):
    """(32, count) registers of A, B and C of one warp -> its (32, count) D registers,
    exact (float64 or int64; int32 accumulators saturate or wrap as the form says)."""
    m, n, k = f.mnk
    wide = np.int64 if f.types[2] == "s32" else np.float64
    A = np.zeros((f.subs, m, k), wide)
    B = np.zeros((f.subs, k, n), wide)
    C = np.zeros((f.subs, m, n), wide)
    for tile, regs, table in ((A, a_regs, f.tables[0]), (B, b_regs, f.tables[1]),
                              (C, c_regs, f.tables[2])):
        tile[table] = np.asarray(regs).astype(wide)
    D = (np.matmul(A, B) + C)[f.tables[2]]
    if f.types[2] == "s32":
        if f.saturate:
            return np.clip(D, -2 ** 31, 2 ** 31 - 1).astype(np.int32)
        return (D & 0xFFFFFFFF).astype(np.uint32).view(np.int32)
    return D
