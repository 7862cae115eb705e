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

from ...ir import expr as E
from ..errors import UNSUPPORTED, fail

OPS = ("ptx_mma", "ptx_legacy.mma")
WARP = 32

# TVM's type names -> PTX's
_PTX = {"fp16": "f16", "float16": "f16", "bf16": "bf16", "bfloat16": "bf16", "fp32": "f32",
        "float32": "f32", "fp64": "f64", "float64": "f64", "int8": "s8", "uint8": "u8",
        "int32": "s32"}
# PTX type -> (the TIR dtype of its registers, C type, bits)
_REG = {"f16": ("float16", "half", 16), "bf16": ("bfloat16", "nv_bfloat16", 16),
        "f32": ("float32", "float", 32), "f64": ("float64", "double", 64),
        "s8": ("int8", "signed char", 8), "u8": ("uint8", "unsigned char", 8),
        "s32": ("int32", "int", 32)}
_FAMILY = {"f16": "f16", "bf16": "f16", "s8": "i8", "u8": "i8", "f64": "f64"}
_ACCUMULATORS = {"f16": ("f16", "f32"), "bf16": ("f32",), "s8": ("s32",), "u8": ("s32",),
                 "f64": ("f64",)}


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


# (shape, a layout, b layout, input family) -> (sub-products, m, n, k, (A layout, count),
#   (B layout, count), {C type: (C layout, count)}), the C types keyed by their first letter
#   where all of them share one layout
_FORMS = {
    ("m16n8k16", "row", "col", "f16"): (1, 16, 8, 16, (_a16x16, 8), (_b16x8, 4),
                                        {"f": (_c16x8, 4)}),
    ("m16n8k8", "row", "col", "f16"): (
        1, 16, 8, 8, (lambda ln, i: (0, ln // 4 + 8 * (i // 2), 2 * (ln % 4) + i % 2), 4),
        (lambda ln, i: (0, 2 * (ln % 4) + i, ln // 4), 2), {"f": (_c16x8, 4)}),
    ("m8n8k4", "row", "row", "f16"): (4, 8, 8, 4, (_a_m8n8k4_f16, 4), (_b_m8n8k4_f16, 4),
                                      {"f32": (_c_m8n8k4_f32, 8), "f16": (_c_m8n8k4_f16, 8)}),
    ("m8n8k4", "row", "col", "f64"): (1, 8, 8, 4, (lambda ln, i: (0, ln // 4, ln % 4), 1),
                                      (lambda ln, i: (0, ln % 4, ln // 4), 1),
                                      {"f": (_c8x8, 2)}),
    ("m8n8k16", "row", "col", "i8"): (
        1, 8, 8, 16, (lambda ln, i: (0, ln // 4, 4 * (ln % 4) + i), 4),
        (lambda ln, i: (0, 4 * (ln % 4) + i, ln // 4), 4), {"s": (_c8x8, 2)}),
    ("m16n8k16", "row", "col", "i8"): (
        1, 16, 8, 16, (lambda ln, i: (0, ln // 4 + 8 * (i // 4), 4 * (ln % 4) + i % 4), 8),
        (lambda ln, i: (0, 4 * (ln % 4) + i, ln // 4), 4), {"s": (_c16x8, 4)}),
    ("m16n8k32", "row", "col", "i8"): (
        1, 16, 8, 32,
        (lambda ln, i: (0, ln // 4 + 8 * ((i // 4) % 2), 4 * (ln % 4) + i % 4 + 16 * (i // 8)),
         16),
        (lambda ln, i: (0, 4 * (ln % 4) + i % 4 + 16 * (i // 4), ln // 4), 8),
        {"s": (_c16x8, 4)}),
}


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


def _words(call):
    return [x.value if isinstance(x, E.StringImm) else None for x in call.args[:6]]


def form(call) -> Form:
    """The call's form, or a codegen/unsupported diagnostic that names what is generated."""
    a = call.args
    if len(a) != 13:
        fail(UNSUPPORTED, f"T.{call.op} takes 13 arguments (shape, A and B layouts, A, B and "
             f"C types, A, its offset, B, its offset, C, its offset, saturate); got {len(a)}",
             call)
    words = _words(call)
    types = tuple(_PTX.get(w) for w in words[3:6])
    key = tuple(words[:3]) + (_FAMILY.get(types[0]),)
    entry = _FORMS.get(key)
    sat = a[12]
    if entry is None or None in types or _FAMILY.get(types[1]) != key[3] or \
            types[2] not in _ACCUMULATORS[types[0]] or \
            (key[3] != "i8" and types[0] != types[1]) or \
            not isinstance(sat, E.IntImm) or (sat.value and key[3] != "i8"):
        fail(UNSUPPORTED, f"T.{call.op} ({', '.join(str(w) for w in words)}) is not a form "
             "that is generated: m16n8k16 and m16n8k8 row.col with fp16 or bf16 inputs, "
             "m8n8k4 row.row with fp16 inputs, m8n8k4 row.col with fp64, and m8n8k16, "
             "m16n8k16 and m16n8k32 row.col with int8 or uint8 inputs and int32 "
             "accumulators (saturate: a constant, for int8 only)", call)
    for ptr, t, what in zip(a[6:12:2], types, "ABC"):
        held = getattr(getattr(ptr, "type_annotation", None), "element", None)
        if held is not None and held != _REG[t][0]:
            fail(UNSUPPORTED, f"T.{call.op} reads {what} as {words[3 + 'ABC'.index(what)]}, "
                 f"but '{getattr(ptr, 'name', ptr)}' holds {held} registers", call)
    subs, m, n, k, (ap, ac), (bp, bc), cs = entry
    cp, cc = cs.get(types[2]) or cs[types[2][0]]
    return Form(words[0], tuple(words[1:3]), types, bool(sat.value), subs, (m, n, k),
                (ac, bc, cc), (_table(ap, ac), _table(bp, bc), _table(cp, cc)))


def register_dtypes(f: Form) -> tuple:
    """The TIR dtypes of the A, B and C registers."""
    return tuple(_REG[t][0] for t in f.types)


def call_c(call, expr) -> str:
    """The inline PTX of one mma call (a statement)."""
    f = form(call)
    a = call.args
    operands, constraints = [], []
    for (ptr, off), t, count in zip(((a[6], a[7]), (a[8], a[9]), (a[10], a[11])), f.types,
                                    f.counts):
        _, ct, bits = _REG[t]
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
