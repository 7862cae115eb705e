"""PTX warp instructions whose operands do not fit the instruction (`type/mismatch`,
`bounds/out-of-bounds`): `T.ptx_mma`, `T.ptx_ldmatrix` and `T.ptx_cp_async` in both
spellings (ir/ptx.py).

TVM's parser takes these calls as they come; its CUDA code generator refuses a malformed one
only when the kernel is built, and prints the others as pointer casts, so a register buffer of
another type than the call names, or registers past the end of their buffer, compile and
compute garbage.  Reported at the call (at the argument, where the argument's span is its
own):
- an mma whose configuration PTX does not have (operand types that do not go together, an
  accumulator of another type, saturation of floats, layouts other than row.col, a shape
  without that type), or whose type names, shape or layouts TVM cannot read;
- a register buffer whose element type is not the type the call reads it as (the call's
  offset counts the buffer's elements, and the registers are its bits read as the other type);
- registers of a lane past the end of their storage: `A + a_off` holds the lane's elements
  of A (ir/ptx.py `mma_counts`), an ldmatrix's destination two 16-bit elements per matrix;
- an ldmatrix of another count than 1, 2 or 4, of other than `.b16` elements, or into a
  buffer of other than 16-bit elements; the rows it reads past the source, at the lanes that
  give a row (all 32 for 4 matrices; 0-7 for 1 and 0-15 for 2 when threadIdx.x is the warp's
  32 lanes);
- a cp.async of other than 4, 8 or 16 bytes or of part of an element, and copies past either
  buffer;
- an ldmatrix source or a cp.async destination outside shared memory, a cp.async source
  outside global memory: a pointer's scope is part of its type, and these instructions
  address one state space alone (TVM converts the address with `__cvta_generic_to_shared`).

An offset is reported only when its largest (or smallest) value over the enclosing loops is
certain and no guard mentions its variables: the offset affine in the loops (divisions by
constants allowed), or evaluated at every point of the loops' values where they are constant
and few (remainders, XOR swizzles: arith/enumerate.py).  Arguments the call leaves symbolic
(ldmatrix's count, a copy's size) are not checked; TVM's own tests specialize them before
building.
"""
from __future__ import annotations

from ..ir import expr as E
from ..ir import ptx
from ..ir.dtype import bits_of, bytes_of, parse_dtype
from . import register
from ._common import func_accesses, is_thread, storage_owners
from ._operands import BOUNDS, TYPE, CallCheck


def _mma(c: CallCheck):
    parts = ptx.mma_call(c.call)
    if isinstance(parts, str):
        c.error(TYPE, parts)
        return
    config = ptx.mma_config(parts)
    if isinstance(config, ptx.MMAProblem):
        at = c.call.args[config.argument] if config.argument is not None else None
        c.error(TYPE, config.message, at)
        return
    types, names = config.types, parts.words[3:6]
    counts = ptx.mma_counts(config.mnk, types[0])
    for (ptr, off), t, word, what, count in zip(parts.operands, types, names, "ABC", counts):
        want = ptx.REGISTER_DTYPES.get(t)
        if want is None:
            continue
        held = c.element(ptr)
        if held is not None and held != want:
            c.error(TYPE, f"reads {what} as {word}, but '{getattr(ptr, 'name', ptr)}' holds "
                    f"{held}: the offset counts {held} elements, and the registers are their "
                    f"bits read as {word}", ptr)
            continue
        c.within(ptr, off, count, want,
                 "updates the accumulators" if what == "C" else f"reads {what}'s registers")


def _ldmatrix(c: CallCheck):
    parts = ptx.ldmatrix_call(c.call)
    if isinstance(parts, str):
        c.error(TYPE, parts)
        return
    if parts.element is not None and parse_dtype(parts.element) is not None and \
            bits_of(parts.element) == 8:
        return                      # TVM gathers 8-bit elements by hand, not with ldmatrix
    num = parts.num.value if isinstance(parts.num, E.IntImm) else None
    if num is not None and num not in ptx.LDMATRIX_COUNTS:
        c.error(TYPE, f"loads 1, 2 or 4 matrices, not {num}", parts.num)
        return
    if isinstance(parts.kind, E.StringImm) and parts.kind.value != ".b16":
        c.error(TYPE, f"loads \".b16\" elements, not \"{parts.kind.value}\"", parts.kind)
        return
    held = c.element(parts.dst)
    if held is not None and parse_dtype(held) is not None and bits_of(held) != 16:
        c.error(TYPE, f"writes two 16-bit elements per register, but "
                f"'{getattr(parts.dst, 'name', parts.dst)}' holds {held}", parts.dst)
        return
    source = ptx.pointer(parts.src, parts.src_offset)
    if source is not None and not _in(c, source[0], "shared", "reads rows of"):
        return
    if num is None:
        return
    c.within(parts.dst, parts.dst_offset, 2 * num, held or "float16", "writes")
    lanes = _row_lanes(c, num)
    if source is not None and lanes is not None:
        src, off = source
        c.within(src, off, 8, c.element(src) or "float16", "reads a row", lanes)


def _row_lanes(c: CallCheck, num: int):
    """The lanes that give a row's address to an ldmatrix of `num` matrices, as a `narrow`
    of CallCheck.offset_range: all 32 lanes for 4, lanes 0-7 for 1 and 0-15 for 2, which
    are threadIdx.x's values when its extent is the warp's 32 (else None: another count of
    threads makes the lane threadIdx.x % 32, and the rows are not read)."""
    if num == 4:
        return {}
    for lp in c.loops:
        if is_thread(lp) and lp.thread_tag == "threadIdx.x":
            if isinstance(lp.min, E.IntImm) and lp.min.value == 0 and \
                    isinstance(lp.extent, E.IntImm) and lp.extent.value == 32:
                return {lp.var: (0, 8 * num)}
            return None
    return None


def _copy(c: CallCheck):
    parts = ptx.copy_call(c.call)
    if isinstance(parts, str):
        c.error(TYPE, parts)
        return
    if not isinstance(parts.size, E.IntImm):
        return
    size = parts.size.value
    if size not in ptx.COPY_SIZES:
        c.error(TYPE, f"copies 4, 8 or 16 bytes, not {size}", parts.size)
        return
    d = parse_dtype(parts.dtype)
    if d is None or d.kind in ("handle", "void"):
        return
    item = bytes_of(parts.dtype)
    if size % item:
        c.error(TYPE, f"copies whole {parts.dtype} elements, but {size} bytes are not",
                parts.size)
        return
    if not (_in(c, parts.dst, "shared", "writes") and _in(c, parts.src, "global", "reads")):
        return
    c.within(parts.dst, parts.dst_offset, size // item, parts.dtype, "writes")
    c.within(parts.src, parts.src_offset, size // item, parts.dtype, "reads")


def _in(c: CallCheck, ptr, space: str, verb: str) -> bool:
    """Whether ptr's storage is in PTX's state space `space` (else a type/mismatch: the scope
    is part of a pointer's type, and the instruction addresses that space alone)."""
    scope = c.scope(ptr)
    if scope is None or scope.split(".")[0] == space:
        return True
    c.error(TYPE, f"{verb} {space} memory, but '{ptr.name}' is {scope}: the instruction "
            f"addresses the {space} state space alone", ptr)
    return False


_CHECKS = {**{op: _mma for op in ptx.MMA_OPS}, **{op: _ldmatrix for op in ptx.LDMATRIX_OPS},
           **{op: _copy for op in ptx.COPY_OPS}}


@register("ptx-operands", codes=(TYPE, BOUNDS), fast=True)
def check_ptx_operands(func, ctx):
    fa = func_accesses(func, ctx)
    calls = [x for x in fa.calls if x[0].op in _CHECKS and x[0].span is not None]
    if not calls:
        return []
    owners = storage_owners(func, ctx)
    out = []
    for call, loops, conds in calls:
        _CHECKS[call.op](CallCheck(call, loops, conds, fa, owners, out))
    return out
