"""Asynchronous copies from global to shared memory (PTX `cp.async`, sm_80 and later):
`T.ptx_cp_async(D, d_off, S, s_off, bytes)` (tirx: `T.s_tir.cp_async_raw.legacy`, or
`T.s_tir.cp_async_raw(dtype, D, d_off, S, s_off, bytes)`) copies `bytes` (4, 8 or 16) from
`S + s_off` to `D + d_off`, offsets counted in elements of the call's dtype;
`T.ptx_commit_group()` (`T.ptx.cp.async_.commit_group()`) closes the thread's copies issued
since its last commit into a group; `T.ptx_wait_group(n)` (`T.ptx.cp.async_.wait_group(n)`)
waits until at most the n most recent of the thread's groups are still in flight.

The thread interpreter reads a copy's source when the copy is issued and writes its
destination when a wait completes its group (codegen/cuda/ptx_run.py).  An access to an
element of the destination before then is a `thread/race` with the copy: on a GPU it meets
whatever the copy has landed by that time.  A copy no wait completes never lands; on a GPU it
lands at no defined time, in shared memory no one may then read."""
from __future__ import annotations

from ...ir import expr as E
from ...ir import ptx
from ...ir.dtype import bytes_of
from ..errors import UNSUPPORTED, fail

COPY_OPS = ptx.COPY_OPS
COMMIT_OPS = ("ptx_commit_group", "ptx.cp.async_.commit_group")
WAIT_OPS = ("ptx_wait_group", "ptx.cp.async_.wait_group")
OPS = COPY_OPS + COMMIT_OPS + WAIT_OPS
SIZES = ptx.COPY_SIZES


def copy_parts(call):
    """(dtype, destination, its offset, source, its offset, bytes) of a copy."""
    parts = ptx.copy_call(call)
    if isinstance(parts, str):
        fail(UNSUPPORTED, f"T.{call.op} {parts}", call)
    return parts


def check_size(call, nbytes, itemsize):
    if int(nbytes) not in SIZES or int(nbytes) % itemsize:
        fail(UNSUPPORTED, f"T.{call.op} copies 4, 8 or 16 bytes, whole elements; got "
             f"{int(nbytes)}", call)
    return int(nbytes) // itemsize


def wait_count(call) -> int:
    """The groups a wait (a call of WAIT_OPS) leaves in flight."""
    if len(call.args) != 1 or not isinstance(call.args[0], E.IntImm) or call.args[0].value < 0:
        fail(UNSUPPORTED, f"T.{call.op} takes one constant count of groups, 0 or more", call)
    return call.args[0].value


def call_c(call, expr, ctype) -> str:
    """The inline PTX of one copy, commit or wait (a statement)."""
    if call.op in COMMIT_OPS:
        return 'asm volatile("cp.async.commit_group;\\n" ::)'
    if call.op in WAIT_OPS:
        return f'asm volatile("cp.async.wait_group {wait_count(call)};\\n" ::)'
    dtype, dst, d_off, src, s_off, nbytes = copy_parts(call)
    if not isinstance(nbytes, E.IntImm):
        fail(UNSUPPORTED, f"T.{call.op} is generated with a constant size", call)
    t = ctype(dtype)
    check_size(call, nbytes.value, bytes_of(dtype))
    kind = "cg" if nbytes.value == 16 else "ca"       # .cg (L2 only) takes 16 bytes alone
    return ("{ unsigned cp_d = (unsigned)__cvta_generic_to_shared((" + t + "*)" + expr(dst) +
            " + " + expr(d_off) + ");\n"
            f"    asm volatile(\"cp.async.{kind}.shared.global [%0], [%1], %2;\\n\"\n"
            f"      :: \"r\"(cp_d), \"l\"((const {t}*){expr(src)} + {expr(s_off)}), "
            f"\"n\"({nbytes.value})); }}")
