"""Tensor cores through TVM's warp-level builtins, as `tensor_intrin/cuda.py` spells them:

    T.tvm_fill_fragment(F.data, m, n, k, index, value)
    T.tvm_load_matrix_sync(F.data, m, n, k, index, ptr, stride, "row_major" | "col_major")
    T.tvm_mma_sync(D.data, di, A.data, ai, B.data, bi, C.data, ci)
    T.tvm_store_matrix_sync(F.data, m, n, k, index, ptr, stride, "row_major")

with `ptr` a `T.tvm_access_ptr(T.type_annotation(dtype), X.data, offset, extent, rw_mask)`
and F a buffer of scope `wmma.matrix_a`, `wmma.matrix_b` or `wmma.accumulator`: fragment
`index` of F is its elements [index * rows * cols, (index + 1) * rows * cols), a matrix_a
fragment m x k, matrix_b k x n, accumulator m x n.

CUDA C: `nvcuda::wmma::fragment` arrays and the `nvcuda::wmma` calls.  The thread
interpreter runs each call with its matrix meaning, a warp's fragment as one whole tile
(every thread of the warp holds a copy; the arguments are the same across the warp).
"""
from __future__ import annotations

from ...ir import expr as E
from ...ir import ptx
from ...ir.visit import walk
from ..errors import UNSUPPORTED, fail

FILL, LOAD, MMA, STORE = ptx.WMMA_FILL, ptx.WMMA_LOAD, ptx.WMMA_MMA, ptx.WMMA_STORE
OPS = ptx.WMMA_OPS
ACCESS_PTR = ptx.ACCESS_PTR
_NS = "nvcuda::wmma::"
_FRAG_TYPE = {"float16": "half", "float32": "float", "int8": "signed char",
              "uint8": "unsigned char", "int32": "int", "bfloat16": "__nv_bfloat16"}


def scope_of(var) -> str:
    return getattr(getattr(var, "type_annotation", None), "scope", None) or "global"


def is_fragment(var) -> bool:
    return scope_of(var).startswith("wmma.")


# (m, n, k) of the fragments `nvcuda::wmma` has: 16-bit floats and 8-bit integers, tf32,
# double, 4-bit integers, bits
SHAPES = ((16, 16, 16), (32, 8, 16), (8, 32, 16), (16, 16, 8), (8, 8, 4), (8, 8, 32),
          (8, 8, 128))


def fragment_shapes(body) -> dict:
    """id(fragment data var) -> (m, n, k, layout or None) from the calls on it; a shape
    wmma does not have, or two shapes for one fragment, is `codegen/unsupported`."""
    out = {}

    def fn(x):
        if isinstance(x, E.Call) and x.op in (FILL, LOAD, STORE):
            var, shape = x.args[0], ptx.wmma_shape(x)
            if shape is None:
                fail(UNSUPPORTED, f"T.{x.op} needs constant m, n, k", x)
            if shape not in SHAPES:
                fail(UNSUPPORTED, f"T.{x.op} with m, n, k = {', '.join(map(str, shape))}: wmma "
                     "fragments are " + ", ".join("m{}n{}k{}".format(*s) for s in SHAPES), x)
            layout = x.args[7].value if x.op == LOAD and isinstance(x.args[7], E.StringImm) \
                else None
            prev = out.get(id(var))
            if prev is not None and prev[:3] != shape:
                fail(UNSUPPORTED, f"T.{x.op} uses '{var.name}' as an m{shape[0]}n{shape[1]}"
                     f"k{shape[2]} fragment, another call as m{prev[0]}n{prev[1]}k{prev[2]}", x)
            out[id(var)] = shape + (layout or (prev[3] if prev else None),)
    walk(body, fn)
    return out


def tile(var, shape) -> tuple:
    """(rows, cols) of one fragment of var with the (m, n, k) of its calls."""
    return ptx.wmma_tile(scope_of(var), shape[:3])


# ---- CUDA C --------------------------------------------------------------------------
def declare(var, dtype, elements, shape, name) -> str:
    """The fragment array declaration of one wmma-scope allocation."""
    if shape is None:
        fail(UNSUPPORTED, f"'{name}' ({scope_of(var)}) is never filled, loaded or stored: "
             "its fragment shape is unknown", var)
    rows, cols = tile(var, shape)
    count = max(1, elements // (rows * cols))
    scope = scope_of(var)[len("wmma."):]
    t = _FRAG_TYPE.get(dtype)
    if t is None:
        fail(UNSUPPORTED, f"no wmma fragment of {dtype}", var)
    layout = "" if scope == "accumulator" else \
        f", {_NS}{shape[3] or 'row_major'}"
    return f"{_NS}fragment<{_NS}{scope}, {shape[0]}, {shape[1]}, {shape[2]}, {t}{layout}> " \
        f"{name}[{count}];"


def call_c(call, expr) -> str:
    """CUDA C of one builtin call; expr prints an expression."""
    a = call.args
    if call.op == FILL:
        return f"{_NS}fill_fragment({expr(a[0])}[{expr(a[4])}], {expr(a[5])})"
    if call.op == LOAD:
        extra = ""
        if scope_of(a[0]) == "wmma.accumulator":
            extra = f", {_NS}mem_{a[7].value}"
        return f"{_NS}load_matrix_sync({expr(a[0])}[{expr(a[4])}], {expr(a[5])}, " \
            f"{expr(a[6])}{extra})"
    if call.op == MMA:
        d, di, x, xi, y, yi, c, ci = (expr(v) for v in a)
        return f"{_NS}mma_sync({d}[{di}], {x}[{xi}], {y}[{yi}], {c}[{ci}])"
    return f"{_NS}store_matrix_sync({expr(a[5])}, {expr(a[0])}[{expr(a[4])}], " \
        f"{expr(a[6])}, {_NS}mem_{a[7].value})"


def access_ptr_c(call, expr, ctype) -> str:
    _ann, data, offset = call.args[:3]
    return f"(({ctype(call.args[0].dtype)}*){expr(data)} + {expr(offset)})"
