"""PTX's warp-level matrix instructions as TVM's builtins spell them: `T.ptx_mma` (tirx:
`T.ptx_legacy.mma`), `T.ptx_ldmatrix` (`T.ptx_legacy.ldmatrix`) and `T.ptx_cp_async`
(`T.s_tir.cp_async_raw[.legacy]`), and the tensor-core builtins over `nvcuda::wmma` fragments
(`T.tvm_fill_fragment`, `T.tvm_load_matrix_sync`, `T.tvm_mma_sync`, `T.tvm_store_matrix_sync`).

What is here is what PTX and TVM's CUDA code generator define, independent of what tirkit
generates or runs: the type names TVM reads (`DTypeFromString` of its
src/backend/cuda/codegen/ptx.cc), the mma configurations PTX has (the check TVM makes before
it prints an `mma.sync`: operand types, accumulator, saturation, layouts, shape), the
registers each lane holds, and the operands of each call.  The rules check calls against it
while the user types (verify/ptx_operands.py, wmma_operands.py); the CUDA back end generates
and runs the forms it knows (codegen/cuda/mma.py, ldmatrix.py, cp_async.py, wmma.py).
"""
from __future__ import annotations

import re
from typing import NamedTuple

from . import expr as E

MMA_OPS = ("ptx_mma", "ptx_legacy.mma")
LDMATRIX_OPS = ("ptx_ldmatrix", "ptx_legacy.ldmatrix")
COPY_OPS = ("ptx_cp_async", "s_tir.cp_async_raw.legacy", "s_tir.cp_async_raw")
WARP = 32
COPY_SIZES = (4, 8, 16)         # bytes of one cp.async (PTX's cp-size)
LDMATRIX_COUNTS = (1, 2, 4)     # 8x8 matrices of one ldmatrix

# PTX type -> bits
BITS = {"s4": 4, "u4": 4, "s8": 8, "u8": 8, "s16": 16, "u16": 16, "s32": 32, "u32": 32,
        "s64": 64, "u64": 64, "e2m1": 4, "e2m3": 6, "e3m2": 6, "e4m3": 8, "ue4m3": 8,
        "e5m2": 8, "ue8m0": 8, "f16": 16, "bf16": 16, "f16x2": 32, "f32": 32, "tf32": 32,
        "f64": 64, "b1": 1, "b8": 8, "b16": 16, "b32": 32, "b64": 64}

# the names TVM reads -> PTX type (its spellings exactly: ".f16" and "bf16" but not ".bf16")
TYPES = {"." + t: t for t in BITS if t not in ("bf16", "tf32", "ue4m3")}
TYPES.update({
    "int4": "s4", "uint4": "u4", "int8": "s8", "uint8": "u8", "int16": "s16", "uint16": "u16",
    "int32": "s32", "uint32": "u32", "int64": "s64", "uint64": "u64",
    "e2m1": "e2m1", "float4_e2m1fn": "e2m1", "e2m3": "e2m3", "float6_e2m3fn": "e2m3",
    "e3m2": "e3m2", "float6_e3m2fn": "e3m2", "e4m3": "e4m3", "float8_e4m3fn": "e4m3",
    "float8_e4m3fnuz": "ue4m3", "float8_e4m3b11fnuz": "ue4m3", "e5m2": "e5m2",
    "float8_e5m2": "e5m2", "float8_e5m2fn": "e5m2", "float8_e5m2fnuz": "e5m2",
    "ue8m0": "ue8m0", "float8_e8m0fnu": "ue8m0", "float16": "f16", "fp16": "f16",
    "bfloat16": "bf16", "bf16": "bf16", "float32": "f32", "fp32": "f32", "tf32": "tf32",
    "float64": "f64", "fp64": "f64", "int1": "b1"})

# PTX type -> the TIR dtype of the elements a lane's registers are read from (the types
# whose elements are whole bytes; sub-byte operands are not checked)
REGISTER_DTYPES = {"f16": "float16", "bf16": "bfloat16", "f32": "float32", "tf32": "float32",
                   "f64": "float64", "s8": "int8", "u8": "uint8", "s32": "int32",
                   "e4m3": "float8_e4m3fn", "e5m2": "float8_e5m2"}

# (m, n, k, multiplicand type, 1-bit operator) of every mma PTX has
_MMA_SHAPES = {
    (8, 8, 4, "f64", False), (8, 8, 4, "f16", False), (16, 8, 8, "f16", False),
    (16, 8, 16, "f16", False), (16, 8, 8, "bf16", False), (16, 8, 16, "bf16", False),
    (16, 8, 4, "tf32", False), (16, 8, 8, "tf32", False),
    (8, 8, 16, "s8", False), (16, 8, 16, "s8", False), (16, 8, 32, "s8", False),
    (8, 8, 16, "u8", False), (16, 8, 16, "u8", False), (16, 8, 32, "u8", False),
    (8, 8, 32, "s4", False), (16, 8, 32, "s4", False), (16, 8, 64, "s4", False),
    (8, 8, 32, "u4", False), (16, 8, 32, "u4", False), (16, 8, 64, "u4", False),
    (8, 8, 128, "b1", True), (16, 8, 128, "b1", True), (16, 8, 256, "b1", True),
    (16, 8, 32, "e4m3", False), (16, 8, 32, "e5m2", False),
}
# multiplicand type -> (the types B may have, the accumulator types)
_INTEGER = ("s4", "u4", "s8", "u8")
_MMA_TYPES = {"b1": (("b1",), ("s32",)), "f16": (("f16",), ("f16", "f32")),
              "bf16": (("bf16",), ("f32",)), "tf32": (("tf32",), ("f32",)),
              "f64": (("f64",), ("f64",)), "s4": (("s4", "u4"), ("s32",)),
              "u4": (("s4", "u4"), ("s32",)), "s8": (("s8", "u8"), ("s32",)),
              "u8": (("s8", "u8"), ("s32",)), "e4m3": (("e4m3", "e5m2"), ("f32",)),
              "e5m2": (("e4m3", "e5m2"), ("f32",))}


def parse_shape(shape: str):
    """(m, n, k) of "m16n8k16", or None."""
    m = re.fullmatch(r"m(\d+)n(\d+)k(\d+)", shape or "")
    return tuple(int(g) for g in m.groups()) if m else None


def mma_problem(mnk, layouts, types, bit_op: str, saturate: bool):
    """Why PTX has no mma of this configuration, or None.  `types`: the PTX types of A, B
    and C; `layouts`: A's and B's ("row" or "col")."""
    a, b, c = types
    if bit_op not in ("", "xor", "and"):
        return f"its 1-bit operator is \"{bit_op}\"; PTX's are \"xor\" and \"and\""
    if bit_op and a != "b1":
        return "a 1-bit operator takes 1-bit multiplicands"
    if a not in _MMA_TYPES:
        return f"{a} is not a type of mma's multiplicands"
    bs, cs = _MMA_TYPES[a]
    if b not in bs:
        return f"multiplicands of types {a} and {b} do not go together"
    if c not in cs:
        return f"{a} multiplicands accumulate in {' or '.join(cs)}, not {c}"
    if saturate and a not in _INTEGER:
        return "saturation is for 4- and 8-bit integer multiplicands only"
    if tuple(layouts) != ("row", "col") and (mnk, a) != ((8, 8, 4), "f16"):
        return f"its layouts are {'.'.join(layouts)}, but only m8n8k4 with f16 takes other " \
               "layouts than row.col"
    if (*mnk, a, bool(bit_op)) not in _MMA_SHAPES:
        shapes = sorted(f"m{m}n{n}k{k}" for m, n, k, t, _ in _MMA_SHAPES if t == a)
        return f"PTX has no m{mnk[0]}n{mnk[1]}k{mnk[2]} mma for {a}" + \
            (" without a 1-bit operator" if a == "b1" and not bit_op else "") + \
            f" (its shapes for {a}: {', '.join(shapes)})"
    return None


def mma_subproducts(mnk, a_type: str) -> int:
    """Independent products of one mma: 4 for m8n8k4 with f16 (one per quad pair), else 1."""
    return 4 if (tuple(mnk), a_type) == ((8, 8, 4), "f16") else 1


def mma_counts(mnk, a_type: str) -> tuple:
    """The elements of A, B and C each lane holds."""
    m, n, k = mnk
    lanes = WARP // mma_subproducts(mnk, a_type)
    return m * k // lanes, k * n // lanes, m * n // lanes


class MMACall(NamedTuple):
    words: tuple        # shape, A's and B's layouts, A's, B's and C's type names (str or None)
    operands: tuple     # (pointer, offset) of A, B and C
    saturate: E.PrimExpr
    bit_op: E.PrimExpr  # or None


def mma_call(call) -> MMACall | str:
    """The parts of an mma call, or what is wrong with its argument count (a message that
    follows the call's name)."""
    a = call.args
    if len(a) not in (13, 14):
        return (f"takes 13 arguments (shape, A and B layouts, A, B and C types, "
                f"A, its offset, B, its offset, C, its offset, saturate) and a 1-bit operator "
                f"after them; got {len(a)}")
    words = tuple(x.value if isinstance(x, E.StringImm) else None for x in a[:6])
    return MMACall(words, ((a[6], a[7]), (a[8], a[9]), (a[10], a[11])), a[12],
                   a[13] if len(a) == 14 else None)


class MMAConfig(NamedTuple):
    mnk: tuple          # (m, n, k)
    layouts: tuple      # A's and B's: "row" or "col"
    types: tuple        # PTX types of A, B and C
    saturate: bool
    bit_op: str         # "", "xor" or "and"


class MMAProblem(NamedTuple):
    message: str        # follows the call's name: "takes ...", "is no PTX mma: ..."
    reason: str         # the configuration's problem alone, or None where the words do not read
    argument: int       # the index of the argument it is about, or None


def mma_config(parts: MMACall):
    """The configuration an mma call's constant arguments name, or the MMAProblem why they
    name none PTX has (as TVM reads and checks them)."""
    words = parts.words
    for i, w in enumerate(words):
        if w is None:
            return MMAProblem("takes its shape, layouts and types as string constants", None, i)
    mnk = parse_shape(words[0])
    if mnk is None:
        return MMAProblem(f"shape \"{words[0]}\" is not one PTX writes (\"m16n8k16\")", None, 0)
    for i in (1, 2):
        if words[i] not in ("row", "col"):
            return MMAProblem(f"layout \"{words[i]}\" is neither \"row\" nor \"col\"", None, i)
    for i in (3, 4, 5):
        if words[i] not in TYPES:
            return MMAProblem(f"type \"{words[i]}\" is not a PTX type TVM reads (\"fp16\", "
                              "\"bf16\", \"tf32\", \"fp32\", \"fp64\", \"int8\", \"uint8\", "
                              "\"int4\", \"int32\", \"e4m3\", ...)", None, i)
    if not isinstance(parts.saturate, E.IntImm):
        return MMAProblem("takes saturate as a constant (True or False)", None, 12)
    bit_op = ""
    if parts.bit_op is not None:
        if not isinstance(parts.bit_op, E.StringImm):
            return MMAProblem("takes its 1-bit operator as a string constant", None, 13)
        bit_op = parts.bit_op.value
    config = MMAConfig(mnk, tuple(words[1:3]), tuple(TYPES[w] for w in words[3:6]),
                       bool(parts.saturate.value), bit_op)
    problem = mma_problem(config.mnk, config.layouts, config.types, bit_op, config.saturate)
    if problem is not None:
        return MMAProblem(f"is no PTX mma: {problem}", problem, None)
    return config


class LdmatrixCall(NamedTuple):
    element: str        # the element type TVM's newer form names first, or None
    trans: E.PrimExpr
    num: E.PrimExpr
    kind: E.PrimExpr    # ".b16"
    dst: E.PrimExpr
    dst_offset: E.PrimExpr
    src: E.PrimExpr     # a buffer's data or a T.tvm_access_ptr into it
    src_offset: E.PrimExpr


def ldmatrix_call(call) -> LdmatrixCall | str:
    """The parts of an ldmatrix call, or what is wrong with its argument count."""
    a = list(call.args)
    element = None
    if len(a) == 8 and isinstance(a[0], E.StringImm):
        element = a.pop(0).value
    if len(a) != 7:
        return (f"takes 7 arguments (trans, num, \".b16\", the destination, its "
                f"offset, the shared source, its offset), TVM's newer form the element type "
                f"before them; got {len(call.args)}")
    return LdmatrixCall(element, *a)


def pointer(ptr, offset):
    """(data Var, element offset) of an operand: a buffer's data with its offset, or a
    `T.tvm_access_ptr(type, data, offset, extent, rw)` (its offset added to the call's); None
    for anything else."""
    if isinstance(ptr, E.Call) and ptr.op == "tvm_access_ptr" and len(ptr.args) == 5:
        base = ptr.args[2]
        if base.dtype != offset.dtype:
            base = E.Cast(offset.dtype, base, span=offset.span)
        ptr, offset = ptr.args[1], E.Add(base, offset, offset.dtype, span=offset.span)
    return (ptr, offset) if isinstance(ptr, E.Var) else None


class CopyCall(NamedTuple):
    dtype: str          # the type the offsets count
    dst: E.PrimExpr
    dst_offset: E.PrimExpr
    src: E.PrimExpr
    src_offset: E.PrimExpr
    size: E.PrimExpr    # bytes


def copy_call(call) -> CopyCall | str:
    """The parts of a cp.async copy, or what is wrong with its arguments.  The element type
    the offsets count is the call's dtype (`dtype=`), or a string before the operands, as
    TVM's `ptx_cp_async(dtype, ...)` and `cp_async_raw(dtype, ...)` take it."""
    a = list(call.args)
    dtype = call.dtype
    if len(a) == 6 and isinstance(a[0], E.StringImm):
        dtype = a.pop(0).value
    elif call.op == "s_tir.cp_async_raw":
        return "takes the element type first"
    if len(a) != 5:
        return (f"takes the destination, its offset, the source, its offset and the bytes "
                f"to copy; got {len(a)} arguments")
    return CopyCall(dtype, *a)


# ---- wmma: fragments of `nvcuda::wmma`, through TVM's builtins ----------------------------
#   T.tvm_fill_fragment(F.data, m, n, k, index, value)
#   T.tvm_load_matrix_sync(F.data, m, n, k, index, ptr, stride, "row_major" | "col_major")
#   T.tvm_mma_sync(D.data, di, A.data, ai, B.data, bi, C.data, ci)
#   T.tvm_store_matrix_sync(F.data, m, n, k, index, ptr, stride, "row_major")
# with `ptr` a `T.tvm_access_ptr(T.type_annotation(dtype), X.data, offset, extent, rw_mask)`;
# fragment `index` of F is its elements [index * rows * cols, (index + 1) * rows * cols).
WMMA_FILL, WMMA_LOAD, WMMA_MMA, WMMA_STORE = (
    "tvm_fill_fragment", "tvm_load_matrix_sync", "tvm_mma_sync", "tvm_store_matrix_sync")
WMMA_OPS = (WMMA_FILL, WMMA_LOAD, WMMA_MMA, WMMA_STORE)
ACCESS_PTR = "tvm_access_ptr"


def wmma_shape(call):
    """(m, n, k) a fill, load or store call gives its fragment, or None (another call, or
    m, n, k not constant)."""
    if call.op not in (WMMA_FILL, WMMA_LOAD, WMMA_STORE) or len(call.args) < 4:
        return None
    mnk = call.args[1:4]
    return tuple(v.value for v in mnk) if all(isinstance(v, E.IntImm) for v in mnk) else None


def matrix_ops(call, fragments):
    """(operations, multiplicand dtype) of one warp-level matrix multiply-accumulate: 2 m n k
    for each of its products (`T.ptx_mma` names its shape; `T.tvm_mma_sync` takes the (m, n, k)
    its accumulator's calls give, `fragments`: id(data var) -> (m, n, k)), for the warp as a
    whole, and the dtype whose peak it runs at (int8 for 4-bit and 1-bit integers); None for
    another call or an unknown shape."""
    if call.op == WMMA_MMA and len(call.args) == 8:
        mnk = fragments.get(id(call.args[0]))
        a = getattr(call.args[2], "type_annotation", None)
        if mnk is None or not isinstance(a, E.PointerType):
            return None
        return 2 * mnk[0] * mnk[1] * mnk[2], a.element
    if call.op in MMA_OPS:
        parts = mma_call(call)
        mnk = None if isinstance(parts, str) else parse_shape(parts.words[0])
        a_type = None if mnk is None else TYPES.get(parts.words[3])
        dtype = REGISTER_DTYPES.get(a_type, "int8" if a_type in ("s4", "u4", "b1") else None)
        if dtype is None:
            return None
        return 2 * mnk[0] * mnk[1] * mnk[2] * mma_subproducts(mnk, a_type), dtype
    return None


def wmma_tile(scope: str, mnk) -> tuple:
    """(rows, cols) of one fragment of a buffer of `scope` whose calls say (m, n, k): a
    matrix_a fragment is m x k, a matrix_b fragment k x n, an accumulator m x n."""
    m, n, k = mnk
    return {"wmma.matrix_a": (m, k), "wmma.matrix_b": (k, n)}.get(scope, (m, n))


def wmma_span(rows: int, cols: int, stride: int, layout: str) -> int:
    """Elements from a load's or store's pointer to the last one of its tile: rows of `cols`
    elements `stride` apart (`row_major`), or else columns of `rows`."""
    if layout == "row_major":
        return (rows - 1) * stride + cols
    return (cols - 1) * stride + rows
