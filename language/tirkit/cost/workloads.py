"""The workload set the cost model is trained and evaluated on: small TensorIR kernels (one
run takes milliseconds) of the kinds the TensorIR paper evaluates, several shapes each.

    WORKLOADS["gmm_128"]()      # -> TVMScript text of one kernel, classic spelling
    names()                     # every workload name, in a fixed order
    family("c2d_28")            # "c2d": the operator family (held-out splits go by workload)

Each kernel is written as TVM's `te_workload` configurations write it: padding and dilation as
a separate block that a schedule may inline, reductions with `T.init`.
"""
from __future__ import annotations

HEADER = "from tvm.script import tir as T\n\n\n"


def _buf(name, shape, dtype="float32"):
    dims = ", ".join(str(s) for s in shape)
    if len(shape) == 1:
        dims += ","
    return f'{name}: T.Buffer(({dims}), "{dtype}")'


def _block(name, axes, store, value, init=None, indent="    "):
    """One loop nest with one block: `axes` [(var, extent, "S"|"R")], `store` the written
    element ("C[vi, vj]"), `value` its new value, `init` the reduction's initial value."""
    loops = ", ".join(a for a, _, _ in axes)
    extents = ", ".join(str(e) for _, e, _ in axes)
    kinds = "".join(k for _, _, k in axes)
    vs = ", ".join("v" + a for a, _, _ in axes)
    lines = [f"{indent}for {loops} in T.grid({extents}):",
             f'{indent}    with T.block("{name}"):']
    lines.append(f'{indent}        {vs} = T.axis.remap("{kinds}", [{loops}])')
    if init is not None:
        lines.append(f"{indent}        with T.init():")
        lines.append(f"{indent}            {store} = {init}")
    lines.append(f"{indent}        {store} = {value}")
    return "\n".join(lines) + "\n"


def _func(name, params, allocs, blocks):
    head = f"@T.prim_func\ndef {name}({', '.join(params)}):\n"
    head += f'    T.func_attr({{"global_symbol": "{name}", "tir.noalias": True}})\n'
    for a, shape in allocs:
        dims = ", ".join(str(s) for s in shape) + ("," if len(shape) == 1 else "")
        head += f'    {a} = T.alloc_buffer(({dims}), "float32")\n'
    return HEADER + head + "".join(blocks)


Z = "T.float32(0)"


# ---- contractions ------------------------------------------------------------------------
def gmm(n, m, k):
    def make():
        return _func(f"gmm_{n}_{m}_{k}", [_buf("A", (n, k)), _buf("B", (k, m)), _buf("C", (n, m))],
                     [], [_block("C", [("i", n, "S"), ("j", m, "S"), ("k", k, "R")], "C[vi, vj]",
                                 "C[vi, vj] + A[vi, vk] * B[vk, vj]", Z)])
    return make


def gmm_relu(n, m, k):
    def make():
        return _func(f"gmm_relu_{n}", [_buf("A", (n, k)), _buf("B", (k, m)), _buf("D", (n, m))],
                     [("C", (n, m))],
                     [_block("C", [("i", n, "S"), ("j", m, "S"), ("k", k, "R")], "C[vi, vj]",
                             "C[vi, vj] + A[vi, vk] * B[vk, vj]", Z),
                      _block("D", [("i", n, "S"), ("j", m, "S")], "D[vi, vj]",
                             "T.max(C[vi, vj], T.float32(0))")])
    return make


def bmm(b, n, m, k):
    def make():
        return _func(f"bmm_{b}_{n}", [_buf("A", (b, n, k)), _buf("B", (b, k, m)),
                                      _buf("C", (b, n, m))], [],
                     [_block("C", [("b", b, "S"), ("i", n, "S"), ("j", m, "S"), ("k", k, "R")],
                             "C[vb, vi, vj]", "C[vb, vi, vj] + A[vb, vi, vk] * B[vb, vk, vj]", Z)])
    return make


def gemv(n, k):
    def make():
        return _func(f"gemv_{n}_{k}", [_buf("A", (n, k)), _buf("x", (k,)), _buf("y", (n,))], [],
                     [_block("y", [("i", n, "S"), ("k", k, "R")], "y[vi]",
                             "y[vi] + A[vi, vk] * x[vk]", Z)])
    return make


# ---- convolutions (NHWC, weights HWIO) -----------------------------------------------------
def _pad2d(h, w, c, p, src="X"):
    cond = f"{p} <= vh and vh < {h + p} and {p} <= vw and vw < {w + p}"
    return _block("pad", [("n", 1, "S"), ("h", h + 2 * p, "S"), ("w", w + 2 * p, "S"),
                          ("c", c, "S")], "P[vn, vh, vw, vc]",
                  f"T.if_then_else({cond}, {src}[vn, vh - {p}, vw - {p}, vc], T.float32(0))")


def c1d(l, ci, co, k):
    def make():
        lo = l - k + 1
        return _func(f"c1d_{l}_{ci}", [_buf("X", (1, l, ci)), _buf("W", (k, ci, co)),
                                       _buf("Y", (1, lo, co))], [],
                     [_block("conv", [("n", 1, "S"), ("l", lo, "S"), ("o", co, "S"),
                                      ("r", k, "R"), ("c", ci, "R")], "Y[vn, vl, vo]",
                             "Y[vn, vl, vo] + X[vn, vl + vr, vc] * W[vr, vc, vo]", Z)])
    return make


def c2d(h, ci, co, k, pad=1, dil=1, name="c2d"):
    def make():
        hp = h + 2 * pad
        ho = hp - dil * (k - 1)
        return _func(f"{name}_{h}_{ci}_{co}_{k}",
                     [_buf("X", (1, h, h, ci)), _buf("W", (k, k, ci, co)),
                      _buf("Y", (1, ho, ho, co))], [("P", (1, hp, hp, ci))],
                     [_pad2d(h, h, ci, pad),
                      _block("conv", [("n", 1, "S"), ("h", ho, "S"), ("w", ho, "S"),
                                      ("o", co, "S"), ("rh", k, "R"), ("rw", k, "R"),
                                      ("c", ci, "R")], "Y[vn, vh, vw, vo]",
                             f"Y[vn, vh, vw, vo] + P[vn, vh + vrh * {dil}, vw + vrw * {dil}, vc]"
                             " * W[vrh, vrw, vc, vo]", Z)])
    return make


def c3d(d, ci, co, k):
    def make():
        do = d - k + 1
        return _func(f"c3d_{d}_{ci}", [_buf("X", (1, d, d, d, ci)), _buf("W", (k, k, k, ci, co)),
                                       _buf("Y", (1, do, do, do, co))], [],
                     [_block("conv", [("n", 1, "S"), ("d", do, "S"), ("h", do, "S"),
                                      ("w", do, "S"), ("o", co, "S"), ("rd", k, "R"),
                                      ("rh", k, "R"), ("rw", k, "R"), ("c", ci, "R")],
                             "Y[vn, vd, vh, vw, vo]",
                             "Y[vn, vd, vh, vw, vo] + X[vn, vd + vrd, vh + vrh, vw + vrw, vc]"
                             " * W[vrd, vrh, vrw, vc, vo]", Z)])
    return make


def dep(h, c, k):
    def make():
        p = k // 2
        hp = h + 2 * p
        return _func(f"dep_{h}_{c}_{k}", [_buf("X", (1, h, h, c)), _buf("W", (k, k, c)),
                                          _buf("Y", (1, h, h, c))], [("P", (1, hp, hp, c))],
                     [_pad2d(h, h, c, p),
                      _block("conv", [("n", 1, "S"), ("h", h, "S"), ("w", h, "S"),
                                      ("c", c, "S"), ("rh", k, "R"), ("rw", k, "R")],
                             "Y[vn, vh, vw, vc]",
                             "Y[vn, vh, vw, vc] + P[vn, vh + vrh, vw + vrw, vc] * W[vrh, vrw, vc]",
                             Z)])
    return make


def grp(h, c, groups, k):
    def make():
        g = c // groups
        ho = h - k + 1
        return _func(f"grp_{h}_{c}_{groups}",
                     [_buf("X", (1, h, h, c)), _buf("W", (k, k, g, c)),
                      _buf("Y", (1, ho, ho, c))], [],
                     [_block("conv", [("n", 1, "S"), ("h", ho, "S"), ("w", ho, "S"),
                                      ("o", c, "S"), ("rh", k, "R"), ("rw", k, "R"),
                                      ("c", g, "R")], "Y[vn, vh, vw, vo]",
                             f"Y[vn, vh, vw, vo] + X[vn, vh + vrh, vw + vrw, vo // {g} * {g} + vc]"
                             " * W[vrh, vrw, vc, vo]", Z)])
    return make


def t2d(h, ci, co, k):
    """Transposed convolution, stride 2: the input dilated by zeros and padded, then a
    convolution with the flipped kernel (as TVM's te workload writes it)."""
    def make():
        hd = 2 * h - 1 + 2 * (k - 1)
        ho = hd - k + 1
        cond = (f"{k - 1} <= vh and vh < {2 * h - 1 + k - 1} and {k - 1} <= vw and "
                f"vw < {2 * h - 1 + k - 1} and (vh - {k - 1}) % 2 == 0 and "
                f"(vw - {k - 1}) % 2 == 0")
        pad = _block("dilate", [("n", 1, "S"), ("h", hd, "S"), ("w", hd, "S"), ("c", ci, "S")],
                     "P[vn, vh, vw, vc]",
                     f"T.if_then_else({cond}, X[vn, (vh - {k - 1}) // 2, (vw - {k - 1}) // 2, vc],"
                     " T.float32(0))")
        return _func(f"t2d_{h}_{ci}", [_buf("X", (1, h, h, ci)), _buf("W", (k, k, ci, co)),
                                       _buf("Y", (1, ho, ho, co))], [("P", (1, hd, hd, ci))],
                     [pad, _block("conv", [("n", 1, "S"), ("h", ho, "S"), ("w", ho, "S"),
                                           ("o", co, "S"), ("rh", k, "R"), ("rw", k, "R"),
                                           ("c", ci, "R")], "Y[vn, vh, vw, vo]",
                                  f"Y[vn, vh, vw, vo] + P[vn, vh + vrh, vw + vrw, vc] * "
                                  f"W[{k - 1} - vrh, {k - 1} - vrw, vc, vo]", Z)])
    return make


# ---- pooling, normalisation, element-wise, reductions ---------------------------------------
def pool(h, c, k, stride, kind):
    def make():
        ho = (h - k) // stride + 1
        acc = ("T.max(Y[vn, vh, vw, vc], X[vn, vh * {s} + vrh, vw * {s} + vrw, vc])" if kind == "max"
               else "Y[vn, vh, vw, vc] + X[vn, vh * {s} + vrh, vw * {s} + vrw, vc]")
        init = 'T.min_value("float32")' if kind == "max" else Z
        return _func(f"pool_{kind}_{h}_{c}", [_buf("X", (1, h, h, c)), _buf("Y", (1, ho, ho, c))],
                     [], [_block("pool", [("n", 1, "S"), ("h", ho, "S"), ("w", ho, "S"),
                                          ("c", c, "S"), ("rh", k, "R"), ("rw", k, "R")],
                                 "Y[vn, vh, vw, vc]", acc.format(s=stride), init)])
    return make


def softmax(n, m):
    def make():
        ax2 = [("i", n, "S"), ("k", m, "R")]
        sp2 = [("i", n, "S"), ("j", m, "S")]
        return _func(f"softmax_{n}_{m}", [_buf("A", (n, m)), _buf("S", (n, m))],
                     [("mx", (n,)), ("ex", (n, m)), ("sm", (n,))],
                     [_block("mx", ax2, "mx[vi]", "T.max(mx[vi], A[vi, vk])",
                             'T.min_value("float32")'),
                      _block("ex", sp2, "ex[vi, vj]", "T.exp(A[vi, vj] - mx[vi])"),
                      _block("sm", ax2, "sm[vi]", "sm[vi] + ex[vi, vk]", Z),
                      _block("S", sp2, "S[vi, vj]", "ex[vi, vj] / sm[vi]")])
    return make


def layernorm(n, m):
    def make():
        ax2 = [("i", n, "S"), ("k", m, "R")]
        sp2 = [("i", n, "S"), ("j", m, "S")]
        return _func(f"layernorm_{n}_{m}", [_buf("A", (n, m)), _buf("G", (m,)), _buf("Y", (n, m))],
                     [("s1", (n,)), ("s2", (n,))],
                     [_block("s1", ax2, "s1[vi]", "s1[vi] + A[vi, vk]", Z),
                      _block("s2", ax2, "s2[vi]", "s2[vi] + A[vi, vk] * A[vi, vk]", Z),
                      _block("Y", sp2, "Y[vi, vj]",
                             f"(A[vi, vj] - s1[vi] / T.float32({m})) * G[vj] / T.sqrt("
                             f"s2[vi] / T.float32({m}) - s1[vi] * s1[vi] / T.float32({m * m})"
                             " + T.float32(1e-5))")])
    return make


def chain(n, m, ops):
    def make():
        sp2 = [("i", n, "S"), ("j", m, "S")]
        blocks, allocs, src = [], [], "A"
        for t, op in enumerate(ops):
            dst = "Y" if t == len(ops) - 1 else f"T{t}"
            if dst != "Y":
                allocs.append((dst, (n, m)))
            blocks.append(_block(f"e{t}", sp2, f"{dst}[vi, vj]",
                                 op.format(x=f"{src}[vi, vj]", b="B[vi, vj]")))
            src = dst
        return _func(f"chain{len(ops)}_{n}_{m}", [_buf("A", (n, m)), _buf("B", (n, m)),
                                                 _buf("Y", (n, m))], allocs, blocks)
    return make


def rowsum(n, m):
    def make():
        return _func(f"rowsum_{n}_{m}", [_buf("A", (n, m)), _buf("B", (n,))], [],
                     [_block("B", [("i", n, "S"), ("k", m, "R")], "B[vi]", "B[vi] + A[vi, vk]", Z)])
    return make


def colsum(n, m):
    def make():
        return _func(f"colsum_{n}_{m}", [_buf("A", (n, m)), _buf("B", (m,))], [],
                     [_block("B", [("j", m, "S"), ("k", n, "R")], "B[vj]", "B[vj] + A[vk, vj]", Z)])
    return make


def l2norm(n, m):
    def make():
        return _func(f"l2norm_{n}_{m}", [_buf("A", (n, m)), _buf("B", (1,))], [],
                     [_block("B", [("z", 1, "S"), ("i", n, "R"), ("k", m, "R")], "B[vz]",
                             "B[vz] + A[vi, vk] * A[vi, vk]", Z)])
    return make


WORKLOADS = {
    "gmm_128": gmm(128, 128, 128),
    "gmm_64_256": gmm(64, 256, 64),
    "gmm_256_64": gmm(256, 64, 128),
    "gmm_relu_96": gmm_relu(96, 96, 96),
    "bmm_4_64": bmm(4, 64, 64, 64),
    "bmm_8_32": bmm(8, 32, 32, 64),
    "gemv_512": gemv(512, 512),
    "c1d_128": c1d(128, 32, 32, 3),
    "c1d_256": c1d(256, 16, 32, 5),
    "c2d_16": c2d(16, 32, 32, 3),
    "c2d_28": c2d(28, 16, 32, 3),
    "c2d_14_1x1": c2d(14, 64, 64, 1, pad=0),
    "c3d_8": c3d(8, 16, 16, 3),
    "dep_28": dep(28, 32, 3),
    "dep_14": dep(14, 64, 5),
    "dil_16": c2d(16, 16, 16, 3, pad=2, dil=2, name="dil"),
    "grp_14": grp(14, 32, 4, 3),
    "t2d_8": t2d(8, 16, 16, 3),
    "pool_max_32": pool(32, 32, 2, 2, "max"),
    "pool_avg_28": pool(28, 32, 3, 1, "avg"),
    "softmax_64": softmax(64, 256),
    "softmax_32": softmax(32, 512),
    "layernorm_64": layernorm(64, 256),
    "chain3_256": chain(256, 256, ["{x} + {b}", "{x} * T.float32(2)",
                                   "T.max({x}, T.float32(0))"]),
    "chain2_128": chain(128, 512, ["T.exp({x})", "{x} * {b}"]),
    "rowsum_256": rowsum(256, 512),
    "colsum_512": colsum(512, 256),
    "l2norm_128": l2norm(128, 128),
    # more shapes of the same operators: a held-out workload then has relatives in training,
    # as a new layer of a known network has
    "gmm_192_96": gmm(192, 96, 160),
    "gmm_32_512": gmm(32, 512, 128),
    "gmm_relu_64": gmm_relu(64, 256, 128),
    "bmm_2_128": bmm(2, 128, 64, 32),
    "gemv_1024": gemv(1024, 256),
    "gemv_256": gemv(256, 1024),
    "c1d_64": c1d(64, 64, 64, 3),
    "c1d_512": c1d(512, 8, 16, 7),
    "c2d_32": c2d(32, 16, 16, 3),
    "c2d_7": c2d(7, 128, 128, 3),
    "c2d_28_1x1": c2d(28, 32, 64, 1, pad=0),
    "c3d_6": c3d(6, 8, 32, 3),
    "dep_56": dep(56, 16, 3),
    "dil_28": c2d(28, 8, 16, 3, pad=2, dil=2, name="dil"),
    "grp_28": grp(28, 16, 2, 3),
    "t2d_16": t2d(16, 8, 8, 3),
    "pool_max_64": pool(64, 16, 2, 2, "max"),
    "pool_avg_14": pool(14, 64, 3, 1, "avg"),
    "softmax_128": softmax(128, 128),
    "layernorm_32": layernorm(32, 1024),
    "chain3_512": chain(512, 128, ["{x} * {b}", "{x} - T.float32(1)", "T.min({x}, T.float32(4))"]),
    "chain2_64": chain(64, 1024, ["T.sigmoid({x})", "{x} + {b}"]),
    "rowsum_1024": rowsum(1024, 64),
    "rowsum_128": rowsum(128, 1024),
    "colsum_256": colsum(256, 1024),
    "colsum_1024": colsum(1024, 64),
    "l2norm_256": l2norm(256, 64),
    # a third shape of every operator
    "gmm_96_384": gmm(96, 384, 64),
    "gmm_48_128": gmm(48, 128, 256),
    "gmm_relu_128": gmm_relu(128, 128, 64),
    "bmm_16_32": bmm(16, 32, 64, 32),
    "gemv_768": gemv(768, 384),
    "c1d_96": c1d(96, 48, 48, 5),
    "c2d_14": c2d(14, 64, 32, 3),
    "c2d_56_1x1": c2d(56, 16, 32, 1, pad=0),
    "c3d_10": c3d(10, 8, 16, 3),
    "dep_32": dep(32, 48, 3),
    "dil_20": c2d(20, 16, 8, 3, pad=2, dil=2, name="dil"),
    "grp_20": grp(20, 24, 3, 3),
    "t2d_12": t2d(12, 16, 8, 3),
    "pool_max_48": pool(48, 24, 3, 2, "max"),
    "pool_avg_20": pool(20, 48, 2, 2, "avg"),
    "softmax_256": softmax(256, 64),
    "layernorm_128": layernorm(128, 128),
    "chain2_256": chain(256, 256, ["T.tanh({x})", "{x} - {b}"]),
    "chain3_128": chain(128, 384, ["{x} * {b}", "{x} + T.float32(1)",
                                   "T.max({x}, T.float32(0))"]),
    "rowsum_512": rowsum(512, 256),
    "colsum_128": colsum(128, 512),
    "l2norm_512": l2norm(512, 32),
    # and a fourth
    "gmm_320_32": gmm(320, 32, 96),
    "gmm_relu_48": gmm_relu(48, 192, 96),
    "bmm_3_96": bmm(3, 96, 48, 64),
    "gemv_128": gemv(128, 2048),
    "c1d_192": c1d(192, 24, 40, 3),
    "c2d_10": c2d(10, 48, 48, 3),
    "c2d_7_1x1": c2d(7, 128, 128, 1, pad=0),
    "c3d_5": c3d(5, 16, 24, 3),
    "dep_20": dep(20, 96, 3),
    "dil_12": c2d(12, 32, 16, 3, pad=2, dil=2, name="dil"),
    "grp_10": grp(10, 64, 8, 3),
    "t2d_6": t2d(6, 32, 16, 3),
    "pool_max_24": pool(24, 64, 2, 2, "max"),
    "pool_avg_40": pool(40, 16, 3, 1, "avg"),
    "softmax_16": softmax(16, 1024),
    "layernorm_256": layernorm(256, 64),
    "chain2_32": chain(32, 2048, ["T.exp({x})", "{x} + {b}"]),
    "chain3_64": chain(64, 1024, ["{x} - {b}", "{x} * {x}", "T.min({x}, T.float32(2))"]),
    "rowsum_64": rowsum(64, 2048),
    "colsum_2048": colsum(2048, 32),
    "l2norm_64": l2norm(64, 512),
    "gmm_relu_32": gmm_relu(32, 512, 64),
}


def names():
    return list(WORKLOADS)


def family(name: str) -> str:
    return name.split("_")[0]


def script(name: str) -> str:
    return WORKLOADS[name]()
