"""ResNet-50's 3x3 int8 conv2d (NHWC 1x56x56x64 -> 64, stride 1, padding 1; u8 data x s8
weights -> s32), one thread, tensorized with the best dot-product intrinsic this CPU has
(AVX-512 VNNI `vpdpbusd` here), against this host's measured int8 peak. Side by side in one
run: two tensorized schedules, the same script untensorized, ONNX Runtime's `ConvInteger`
(NCHW) and ONNX Runtime's `MatMulInteger` on the im2col'd input (MLAS's GEMM, which uses
AMX on a CPU that has it). Every kernel's result is checked equal to numpy (u8 in [0, 256),
s8 in [-128, 128)) before it is timed; medians of repeated runs. A loaded machine slows
every kernel: before each timed call the header's int8 peak loop runs for about as long,
and each row also gives its share of that adjacent peak (the median over the pairs).

    python benchmarks/tensorize_conv.py [--reps 60]
    # needs the `run` and `bench` extras (llvmlite, onnxruntime, onnx)

The kernel (`conv_script`) pads in a block of its own (`pad`, vectorized over channels),
then reduces over (rh, rw, ci). Two ways to give it the weights:
- pre-packed: the kernel's declared input is the layout the instruction wants,
  W[kh, kw, C_in/4, C_out/16, 16, 4] (weights are constants in inference; `transform_layout`
  refuses a parameter, whose layout is the caller's, so the packed layout is the input), and
  the schedule tiles and tensorizes by hand (split, reorder, blockize, tensorize);
- HWIO: W[kh, kw, C_in, C_out] as stored, packed inside the kernel by `auto_tensorize`
  (reindex + transform_layout to [C_out/16, kh, kw, C_in/4, 16, 4]), the packing timed.
Both then register-block the same way: 4 output pixels x 4 vectors of 16 output channels,
16 independent accumulators (vpdpbusd: latency 5, 2 per cycle), each input dword broadcast
once and used for 4 instructions, each weight vector loaded once and used for 4; the
accumulators are a local copy of Y per tile (`cache_write`, `reverse_compute_at`), which
the code generator compacts to the tile and LLVM keeps in registers (zeroed, not memset and
reloaded; stored once per tile).
Writes benchmarks/results/tensorize_conv.md."""
from __future__ import annotations

import argparse
import inspect
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import host  # noqa: E402
from ort_int8 import one_thread_session  # noqa: E402

ANCHORS = {"ONNX Runtime": "intra_op_num_threads=1, inter_op_num_threads=1, sequential",
           "tirkit": "one thread (no parallel loops)"}
SHAPE = (56, 56, 64, 64)            # H, W, C_in, C_out (3x3, stride 1, padding 1, N = 1)


def conv_script(h, w, ci, co, lanes=16, packed=True):
    """The conv2d as TVMScript: the pad block, then the reduction; weights pre-packed as
    [3, 3, ci/4, co/lanes, lanes, 4] or as stored, [3, 3, ci, co]."""
    if packed:
        wshape = f"(3, 3, {ci // 4}, {co // lanes}, {lanes}, 4)"
        wload = f"W[vrh, vrw, vci // 4, vco // {lanes}, vco % {lanes}, vci % 4]"
    else:
        wshape, wload = f"(3, 3, {ci}, {co})", "W[vrh, vrw, vci, vco]"
    return f'''from tvm.script import tir as T


@T.prim_func
def conv(X: T.Buffer((1, {h}, {w}, {ci}), "uint8"), W: T.Buffer({wshape}, "int8"),
         Y: T.Buffer((1, {h}, {w}, {co}), "int32")):
    T.func_attr({{"global_symbol": "conv", "tir.noalias": True}})
    Xp = T.alloc_buffer((1, {h + 2}, {w + 2}, {ci}), "uint8")
    for n, ph, pw, c in T.grid(1, {h + 2}, {w + 2}, {ci}):
        with T.block("pad"):
            vn, vh, vw, vc = T.axis.remap("SSSS", [n, ph, pw, c])
            Xp[vn, vh, vw, vc] = T.if_then_else(
                1 <= vh and vh < {h + 1} and 1 <= vw and vw < {w + 1},
                X[vn, vh - 1, vw - 1, vc], T.uint8(0))
    for n, oh, ow, co, rh, rw, ci in T.grid(1, {h}, {w}, {co}, 3, 3, {ci}):
        with T.block("conv"):
            vn, vh, vw, vco, vrh, vrw, vci = T.axis.remap("SSSSRRR", [n, oh, ow, co, rh, rw, ci])
            with T.init():
                Y[vn, vh, vw, vco] = 0
            Y[vn, vh, vw, vco] = Y[vn, vh, vw, vco] + \
                T.Cast("int32", Xp[vn, vh + vrh, vw + vrw, vci]) * T.Cast("int32", {wload})
'''


def intrinsic_tile(intrin):
    """(lanes, k): the instruction's output vector length and its reduction length."""
    shapes = [[int(s.value) for s in intrin.desc.buffer_of(p).shape] for p in intrin.desc.params]
    return shapes[-1][0], shapes[0][0]


def schedule_packed(sch, intrin, wb=4, cb=4):
    """Weights pre-packed: tile (w by wb pixels, co by cb vectors of `lanes`), tensorize."""
    lanes, k = intrinsic_tile(intrin)
    b = sch.get_block("conv")
    out = sch.cache_write(b, 0, "local")
    n, h, w, co, rh, rw, ci = sch.get_loops(b)
    co0, co1 = sch.split(co, [None, lanes])
    ci0, ci1 = sch.split(ci, [None, k])
    wo, wi = sch.split(w, [None, wb])
    coa, cob = sch.split(co0, [None, cb])
    sch.reorder(n, h, coa, wo, rh, rw, ci0, wi, cob, co1, ci1)
    ob = sch.blockize(co1)
    sch.tensorize(ob, intrin.name)
    _register_block(sch, ob, out, wo, rh, wi, cob, lanes)


def schedule_hwio(sch, intrin, wb=4, cb=4):
    """Weights as stored: auto_tensorize packs them, then the same register blocking."""
    lanes, k = intrinsic_tile(intrin)
    b = sch.get_block("conv")
    out = sch.cache_write(b, 0, "local")
    ob = sch.auto_tensorize(b, intrin.name)
    n, h, w, co0, rh, rw, ci0 = sch.get_loops(ob)
    wo, wi = sch.split(w, [None, wb])
    coa, cob = sch.split(co0, [None, cb])
    sch.reorder(n, h, coa, wo, rh, rw, ci0, wi, cob)
    _register_block(sch, ob, out, wo, rh, wi, cob, lanes)
    # the packing copy W[rh, rw, ci, co] -> [co/16, rh, rw, ci/4, 16, 4] in its output's
    # order, the 4 bytes of a dword unrolled (LLVM made gathers and scatters of it)
    ax0, ax1, ax2, ax3 = sch.get_loops(sch.get_block("W_reindex_reindex"))
    co_o, co_i = sch.split(ax0, [None, lanes])
    ci_o, ci_i = sch.split(ax3, [None, k])
    sch.reorder(co_o, ax1, ax2, ci_o, co_i, ci_i)
    sch.unroll(ci_i)


def _register_block(sch, ob, out, wo, rh, wi, cob, lanes):
    """The accumulators of one tile in registers: Y's local copy (cache_write) lives per
    iteration of `wo`, is zeroed before the reduction loops and written back after them as
    whole vectors, each loop over the tile unrolled; the pad block is vectorized."""
    sch.reverse_compute_at(out, wo)
    init = sch.decompose_reduction(ob, rh)
    sch.unroll(wi)
    sch.unroll(cob)
    for lp in sch.get_loops(init)[-2:]:
        sch.unroll(lp)
    sch.vectorize(sch.get_loops(sch.get_block("conv_init"))[-1])
    *_, px, c = sch.get_loops(out)
    c0, c1 = sch.split(c, [None, lanes])
    sch.unroll(px)
    sch.unroll(c0)
    sch.vectorize(c1)
    sch.vectorize(sch.get_loops(sch.get_block("pad"))[-1])


def pack_weights(w_hwio, lanes=16):
    """[3, 3, ci, co] -> [3, 3, ci/4, co/lanes, lanes, 4]."""
    kh, kw, ci, co = w_hwio.shape
    return np.ascontiguousarray(
        w_hwio.reshape(kh, kw, ci // 4, 4, co // lanes, lanes).transpose(0, 1, 2, 4, 5, 3))


def reference(x, w_hwio):
    """NHWC conv2d, 3x3, padding 1, in int64, as int32."""
    _, h, w, _ = x.shape
    xp = np.pad(x.astype(np.int64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    out = np.zeros((1, h, w, w_hwio.shape[3]), np.int64)
    for a in range(3):
        for b in range(3):
            out += xp[:, a:a + h, b:b + w, :] @ w_hwio[a, b].astype(np.int64)
    return out.astype(np.int32)


def best_intrinsic(mod):
    """The best intrinsic of this CPU for the conv block (None when none serves it)."""
    import tirkit
    from tirkit.tensorize.suggest import block_mappings
    sch = tirkit.Schedule(mod)
    ok, _ = block_mappings(sch.get(sch.get_block("conv")))
    return ok[0].intrin if ok else None


class PeakLoop:
    """host.py's int8 peak loop (tirkit.codegen.llvm.peak: independent zmm vpdpbusd chains),
    run for about as long as a kernel right before each of its timed calls, so that a loaded
    machine slows both alike: the median of the per-pair ratios is the kernel's share of the
    peak at the moment it ran."""

    def __init__(self, seconds=4e-4):
        from tirkit.codegen.llvm import engine
        from tirkit.codegen.llvm.peak import Compiled, dot_loop, enabled_features
        loop = dot_loop(enabled_features(engine.host_cpu()[1]))
        self.compiled, self.rates = None, []
        if loop is not None:
            ir, self.ops, _ = loop
            self.compiled = Compiled(ir, "dot_loop")
            self.inp, self.out = np.full(256, 3, np.uint8), np.zeros(64, np.uint8)
            self.n = 1000
            for _ in range(3):              # warm, then scale n to about `seconds` a run
                best = min(self.seconds() for _ in range(5))
                self.n = max(1000, int(self.n * seconds / max(best, 1e-7)))

    def seconds(self):
        t = time.perf_counter()
        self.compiled.run(self.n, self.inp, self.out)
        return time.perf_counter() - t

    def rate(self):
        if self.compiled is None:
            return None
        self.rates.append(self.n * self.ops / self.seconds())
        return self.rates[-1]


def timed(fn, reps, ops, peak_loop):
    """(median s, best s, median of the per-call shares of the adjacent peak or None)."""
    fn()
    ts, shares = [], []
    for _ in range(reps):
        rate = peak_loop.rate()
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
        if rate is not None:
            shares.append(ops / ts[-1] / rate)
    return statistics.median(ts), min(ts), statistics.median(shares) if shares else None


def entry_call(kernel, args):
    """A call of the compiled kernel's entry point with its arguments checked and packed
    once (as `Kernel.time` calls it): the kernel's own time, without the ~15 us of Python
    argument checks of `kernel(*args)`."""
    import ctypes
    from tirkit.codegen.runtime import pool
    ptrs, svals = kernel.pack(args)
    cb = pool(1).launch
    slot = (ctypes.c_uint64 * 2)()

    def call(_keep=args):
        kernel.entry(ptrs, svals, cb, ctypes.addressof(slot))
    return call


def ours(x, w_hwio, ref, reps, peak_loop):
    import tirkit
    from tirkit import codegen
    h, w, ci, co = SHAPE
    hwio = tirkit.parse(conv_script(h, w, ci, co, packed=False)).module
    intrin = best_intrinsic(hwio)
    if intrin is None:
        raise SystemExit("no intrinsic of this CPU serves the conv2d")
    lanes, _ = intrinsic_tile(intrin)
    cb = min(4, co // lanes)
    packed = tirkit.parse(conv_script(h, w, ci, co, lanes, packed=True)).module
    runs = []
    for label, mod, sched, wt, r in (
            ("weights pre-packed [3, 3, 16, 4, 16, 4]", packed, schedule_packed,
             pack_weights(w_hwio, lanes), reps),
            ("weights HWIO, packed in the kernel", hwio, schedule_hwio, w_hwio, reps),
            ("untensorized (same script, HWIO)", hwio, None, w_hwio, 3)):
        sch = tirkit.Schedule(mod)
        if sched is not None:
            sched(sch, intrin, 4, cb)
        k = codegen.build(sch.mod["conv"], sch.mod)
        y = np.zeros(ref.shape, "int32")
        k(x, wt, y)
        assert np.array_equal(y, ref), label
        runs.append((f"tirkit {label}", *timed(entry_call(k, (x, wt, y)), r, 2 * ref.size * ci * 9,
                                               peak_loop)))
    return runs, intrin


def onnx_runtime(x, w_hwio, ref, reps, peak_loop):
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper, numpy_helper
    except ImportError:
        return []
    xc = np.ascontiguousarray(x.transpose(0, 3, 1, 2))           # NCHW, ONNX's layout
    wc = np.ascontiguousarray(w_hwio.transpose(3, 2, 0, 1))       # OIHW
    rows = []
    for const in (True, False):
        inputs = [helper.make_tensor_value_info("x", TensorProto.UINT8, list(xc.shape))]
        inits = [numpy_helper.from_array(wc, "w")] if const else []
        if not const:
            inputs.append(helper.make_tensor_value_info("w", TensorProto.INT8, list(wc.shape)))
        node = helper.make_node("ConvInteger", ["x", "w"], ["y"], pads=[1, 1, 1, 1])
        out = helper.make_tensor_value_info("y", TensorProto.INT32, [1, ref.shape[3],
                                                                     *ref.shape[1:3]])
        graph = helper.make_graph([node], "g", inputs, [out], initializer=inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        s = one_thread_session(model)
        feed = {"x": xc} if const else {"x": xc, "w": wc}
        y = s.run(None, feed)[0]
        assert np.array_equal(y.transpose(0, 2, 3, 1), ref)
        label = f"ONNX Runtime {ort.__version__} ConvInteger (NCHW), W " + \
            ("a constant initializer" if const else "a graph input")
        ops = 2 * ref.size * x.shape[3] * 9
        rows.append((label, *timed(lambda: s.run(None, feed), max(3, reps // 4), ops, peak_loop)))
    rows.append(_im2col_gemm(ort, helper, numpy_helper, TensorProto, x, w_hwio, ref, reps,
                             peak_loop))
    return rows


def _im2col_gemm(ort, helper, numpy_helper, TensorProto, x, w_hwio, ref, reps, peak_loop):
    """ONNX Runtime's MatMulInteger (MLAS's u8 x s8 GEMM) on the GEMM this conv is: the
    im2col'd input [H*W, 9*C_in] (made outside the timing) times W [9*C_in, C_out], W a
    constant initializer."""
    _, h, w, ci = x.shape
    xp = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    a = np.ascontiguousarray(np.stack([xp[0, r:r + h, c:c + w, :] for r in range(3)
                                       for c in range(3)], axis=2).reshape(h * w, 9 * ci))
    b = np.ascontiguousarray(w_hwio.reshape(9 * ci, -1))
    node = helper.make_node("MatMulInteger", ["A", "B"], ["C"])
    graph = helper.make_graph(
        [node], "g", [helper.make_tensor_value_info("A", TensorProto.UINT8, list(a.shape))],
        [helper.make_tensor_value_info("C", TensorProto.INT32, [h * w, b.shape[1]])],
        initializer=[numpy_helper.from_array(b, "B")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    s = one_thread_session(model)
    out = s.run(None, {"A": a})[0]
    assert np.array_equal(out.reshape(ref.shape), ref)
    label = f"ONNX Runtime {ort.__version__} MatMulInteger on the im2col'd input " \
        f"[{h * w}, {9 * ci}] x [{9 * ci}, {b.shape[1]}] (im2col not timed), B an initializer"
    return (label, *timed(lambda: s.run(None, {"A": a}), reps, 2 * a.shape[0] * a.shape[1]
                          * b.shape[1], peak_loop))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=60)
    args = ap.parse_args()
    from tirkit.codegen.llvm.peak import measure_peak
    head = host.header(ANCHORS)                       # measures the peak (cached below)
    peak = measure_peak(1).int8
    h, w, ci, co = SHAPE
    rng = np.random.default_rng(0)
    x = rng.integers(0, 256, (1, h, w, ci)).astype("uint8")
    w_hwio = rng.integers(-128, 128, (3, 3, ci, co)).astype("int8")
    ref = reference(x, w_hwio)
    peak_loop = PeakLoop()
    rows, intrin = ours(x, w_hwio, ref, args.reps, peak_loop)
    rows += onnx_runtime(x, w_hwio, ref, args.reps, peak_loop)
    ops = 2 * h * w * ci * co * 9
    loop_rate = statistics.median(peak_loop.rates) if peak_loop.rates else None
    lines = head + [
        "", f"# Tensorized int8 conv2d, ResNet-50 3x3 {h}x{w}x{ci} -> {co} (NHWC, u8 x s8 -> "
        "s32), one thread", "",
        f"Intrinsic: `{intrin.name}`. {ops / 1e6:.1f} MOP per call. Peak: {peak / 1e9:.1f} "
        f"GOP/s (the header's one-thread int8 peak, this run: best of short runs in CPU time); "
        f"70% of it is {0.7 * peak / 1e9:.1f} GOP/s. The same peak loop timed right before each "
        "timed call ran at a median "
        + (f"{loop_rate / 1e9:.1f} GOP/s (wall time)" if loop_rate else "- (no int8 loop)")
        + ": the last column is each call's share of that adjacent run, the median of the "
        "pairs.", "",
        "| kernel | median ms | best ms | GOP/s (median) | share of peak (median) | "
        "share of peak (best) | share of the adjacent peak loop |",
        "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for label, t, best, adj in rows:
        lines.append(f"| {label} | {t * 1e3:.3f} | {best * 1e3:.3f} | {ops / t / 1e9:.1f} | "
                     f"{ops / t / peak:.0%} | {ops / best / peak:.0%} | "
                     + (f"{adj:.0%} |" if adj is not None else "- |"))
    lines += ["", "Every kernel's output was checked equal to numpy before timing (X in "
              "[0, 256), W in [-128, 128)). tirkit's times include the padding block (and, "
              "for HWIO weights, packing them) and are calls of the compiled entry point "
              "with the arguments checked once (`kernel(*arrays)` adds about 15 us of Python "
              "argument checks); ONNX Runtime's are `InferenceSession.run` on NCHW tensors "
              "as the operator defines them (its CPU ConvInteger kernel, as it runs here).", "",
              "Schedules (after parsing `conv_script`):", "", "```python",
              inspect.getsource(schedule_packed).rstrip(), "",
              inspect.getsource(schedule_hwio).rstrip(), "",
              inspect.getsource(_register_block).rstrip(), "```"]
    out = Path(__file__).resolve().parent / "results" / "tensorize_conv.md"
    out.write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
