"""TVM 0.27's build of the very schedule tirkit applied: our trace (`sch.trace.as_python()`,
the steps `auto_tensorize` recorded and the ones after it) replayed on a `tvm.s_tir.Schedule`
of the same kernel, compiled for this host and timed with `time_evaluator`, one thread.

    import tvm_int8
    mod = tvm_int8.schedule_like_ours(kernel_text, our_trace_python, {ours: tvm_name})
    call, out = tvm_int8.runner(tvm_int8.build(mod, target), [A, B, C])

The replay differs from our trace only in spelling: `get_block` is TVM's `get_sblock`,
`tensorize`'s intrinsic is TVM's name for the same instruction (the `# tvm:` line of our
intrinsic file: `dot_16x4_vnni` for `x86.vnni.dot_16x4_u8s8s32`), an index map is a lambda
rather than its text, `tensorize` has no `intrinsics` argument, and TVM's tensorize takes a
block without its init, so a `tensorize` is applied after the trace's `decompose_reduction`
of the same block (ours tensorizes the block with its init and decomposes after; the
resulting loops and blocks are the same, which `same_as_ours` checks by parsing TVM's module
back and comparing it with ours structurally).  TVM_NUM_THREADS must be 1 before `tvm` is
imported (the caller sets it).

TVM 0.27's own `dot_16x4_vnni` does not compile: its implementation calls
`llvm.x86.avx512.vpdpbusd.512` with `<16 x i32>` operands, the signature of LLVM before 20,
and the wheel's LLVM (22) declares `<64 x i8>` ones, so `tvm.compile` stops in LLVM's
verifier ("Call parameter type does not match function signature").  `register_vnni()`
registers, as `VNNI_NAME`, TVM's own description of the instruction (its
`dot_product_16x4_u8i8i32_desc`) with an implementation that passes the byte operands as
`int8x64` (the same single `vpdpbusd zmm` per call); that is the one the replay uses."""
from __future__ import annotations

import re
import statistics


VNNI_NAME = "dot_16x4_vnni_i8x64"
_VNNI_IMPL = '''
@T.prim_func(s_tir=True)
def impl(A: T.Buffer((4,), "uint8", offset_factor=1),
         B: T.Buffer((16, 4), "int8", offset_factor=1),
         C: T.Buffer((16,), "int32", offset_factor=1)):
    with T.sblock("root"):
        T.reads(C[0:16], A[0:4], B[0:16, 0:4])
        T.writes(C[0:16])
        a = T.reinterpret("int32", A.vload([0], "uint8x4"))
        C[T.Ramp(0, 1, 16)] = T.call_llvm_pure_intrin(
            "int32x16", "llvm.x86.avx512.vpdpbusd.512", C.vload([0], "int32x16"),
            T.reinterpret("int8x64", T.Broadcast(a, 16)), B.vload([0, 0], "int8x64"))
'''


def register_vnni() -> str:
    """Register VNNI_NAME once (see the module docstring); returns the name."""
    import tvm
    from tvm.s_tir import TensorIntrin
    from tvm.s_tir.tensor_intrin import x86
    try:
        TensorIntrin.get(VNNI_NAME)
    except Exception:                   # not registered yet (TVM raises on an unknown name)
        TensorIntrin.register(VNNI_NAME, x86.dot_product_16x4_u8i8i32_desc,
                              tvm.script.from_source(_VNNI_IMPL))
    return VNNI_NAME


class _Replay:
    """A tvm.s_tir.Schedule behind our primitive names and keywords."""

    def __init__(self, sch, intrin_names):
        self._sch = sch
        self._names = intrin_names
        self._pending = {}          # the handle of a block to tensorize -> TVM intrinsic name

    def get_block(self, name, func_name=None):
        return self._sch.get_sblock(name)

    def transform_layout(self, block, buffer, index_map):
        return self._sch.transform_layout(block, tuple(buffer), eval(index_map))

    def reindex(self, block, buffer):
        return self._sch.reindex(block, tuple(buffer))

    def tensorize(self, block_or_loop, intrin, intrinsics=None):
        self._pending[block_or_loop] = self._names[intrin]

    def decompose_reduction(self, block, loop):
        init = self._sch.decompose_reduction(block, loop)
        for rv, name in list(self._pending.items()):
            if self._sch.get(rv).same_as(self._sch.get(block)):
                self._sch.tensorize(rv, name)
                del self._pending[rv]
        return init

    def finish(self):
        for rv, name in self._pending.items():
            self._sch.tensorize(rv, name)
        self._pending = {}

    def __getattr__(self, name):
        return getattr(self._sch, name)


def schedule_like_ours(kernel_text: str, trace_python: str, intrin_names: dict):
    """(TVM IRModule scheduled by our trace, the replayed Python)."""
    import tvm
    from tvm import s_tir
    from tvm.s_tir.tensor_intrin import x86  # noqa: F401  (registers the x86 intrinsics)
    text = "\n".join(ln for ln in kernel_text.splitlines()
                     if not ln.startswith("from tvm.script import"))
    text = _tirx(text)
    sch = s_tir.Schedule(tvm.script.from_source(text))
    r = _Replay(sch, intrin_names)
    exec(trace_python, {"sch": r})
    r.finish()
    return sch.mod


def _tirx(text: str) -> str:
    """Our classic spelling of the benchmark kernel in TVM 0.27's (`T.sblock`, s_tir)."""
    text = text.replace("@T.prim_func", "@T.prim_func(s_tir=True)")
    return re.sub(r"\bT\.block\(", "T.sblock(", text)


def same_as_ours(tvm_mod, our_func) -> bool:
    """TVM's scheduled function, parsed back by tirkit, is structurally equal to ours."""
    import tirkit
    func = tvm_mod[tvm_mod.get_global_vars()[0]]
    theirs = tirkit.parse(func.script()).module.functions[0][1]
    return tirkit.structural_equal(theirs.body, our_func.body)


def build(tvm_mod, target: dict):
    import tvm
    return tvm.compile(tvm_mod, target=tvm.target.Target(target))


def runner(ex, arrays):
    """(a call that runs the compiled function once on `arrays`, the output, the last array,
    after a first run).  Timed by the caller like our kernels (wall clock around the call);
    `time_it` is TVM's own time_evaluator, for a cross-check."""
    import tvm
    dev = tvm.cpu()
    args = [tvm.runtime.tensor(a, dev) for a in arrays]
    f = ex[_entry(ex)]
    f(*args)
    out = args[-1].numpy()
    return (lambda: f(*args)), out


def _entry(ex):
    return "gemm" if ex.mod.implements_function("gemm") else "main"


def time_it(ex, arrays, reps: int):
    """Median seconds of `reps` runs with TVM's time_evaluator (one run per repeat)."""
    import tvm
    dev = tvm.cpu()
    args = [tvm.runtime.tensor(a, dev) for a in arrays]
    f = ex.mod.time_evaluator(_entry(ex), dev, number=1, repeat=reps, min_repeat_ms=0)
    return statistics.median(f(*args).results)


def tvm_version() -> str:
    import tvm
    return tvm.__version__


__all__ = ["schedule_like_ours", "same_as_ours", "register_vnni", "build", "runner", "time_it",
           "tvm_version", "VNNI_NAME"]
