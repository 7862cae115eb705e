"""Generated kernel files for the speed benchmarks (one generator for all of them).

`generate(n_kernels, seed, spelling)` gives about 1,000 lines for 60 kernels: element-wise,
reductions, scheduled CPU matmuls, padded convolutions, GPU matmuls with shared memory and
GPU element-wise kernels, each with comments above and inside it as real files have them.
The kernels are written in the classic spelling; `spelling="tirx"` rewrites them so that
TVM 0.27 reads exactly the same kernels.
"""
from __future__ import annotations

import random

HEADERS = {"classic": "from tvm.script import tir as T\n\n\n",
           "tirx": "from tvm.script import tirx as T\n\n\n"}


def elementwise(name, rng):
    n, m = rng.choice([64, 128, 256]), rng.choice([32, 64, 128])
    op = rng.choice(["A[vi, vj] * T.float32(2)", "A[vi, vj] + T.float32(1)",
                     "T.max(A[vi, vj], T.float32(0))", "T.exp(A[vi, vj])"])
    return f'''@T.prim_func
def {name}(A: T.Buffer(({n}, {m}), "float32"), B: T.Buffer(({n}, {m}), "float32")):
    T.func_attr({{"global_symbol": "{name}", "tir.noalias": True}})
    for i, j in T.grid({n}, {m}):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = {op}
'''


def reduction(name, rng):
    n, k = rng.choice([32, 64, 128]), rng.choice([64, 256, 512])
    return f'''@T.prim_func
def {name}(A: T.Buffer(({n}, {k}), "float32"), B: T.Buffer(({n},), "float32")):
    T.func_attr({{"global_symbol": "{name}", "tir.noalias": True}})
    for i, k in T.grid({n}, {k}):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(A[vi, vk])
            T.writes(B[vi])
            with T.init():
                B[vi] = T.float32(0)
            B[vi] = B[vi] + A[vi, vk]
'''


def tiled_matmul(name, rng):
    n = rng.choice([128, 256])
    return f'''@T.prim_func
def {name}(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
        C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({{"global_symbol": "{name}", "tir.noalias": True}})
    for i_0 in T.parallel({n // 32}):
        for j_0, k_0, i_1, k_1 in T.grid({n // 16}, {n // 4}, 32, 4):
            for j_1 in T.vectorized(16):
                with T.block("C"):
                    vi = T.axis.spatial({n}, i_0 * 32 + i_1)
                    vj = T.axis.spatial({n}, j_0 * 16 + j_1)
                    vk = T.axis.reduce({n}, k_0 * 4 + k_1)
                    T.reads(A[vi, vk], B[vk, vj])
                    T.writes(C[vi, vj])
                    with T.init():
                        C[vi, vj] = T.float32(0)
                    C[vi, vj] = C[vi, vj] + A[vi, vk] * B[vk, vj]
'''


def padded_conv(name, rng):
    h = rng.choice([16, 32])
    return f'''@T.prim_func
def {name}(X: T.Buffer(({h}, {h}), "float32"), W: T.Buffer((3, 3), "float32"),
        Y: T.Buffer(({h}, {h}), "float32")):
    T.func_attr({{"global_symbol": "{name}", "tir.noalias": True}})
    pad = T.alloc_buffer(({h + 2}, {h + 2}), "float32")
    for i, j in T.grid({h + 2}, {h + 2}):
        with T.block("pad"):
            vi, vj = T.axis.remap("SS", [i, j])
            pad[vi, vj] = T.if_then_else(1 <= vi and vi < {h + 1} and 1 <= vj and vj < {h + 1},
                                         X[vi - 1, vj - 1], T.float32(0))
    for i, j, r, s in T.grid({h}, {h}, 3, 3):
        with T.block("conv"):
            vi, vj, vr, vs = T.axis.remap("SSRR", [i, j, r, s])
            with T.init():
                Y[vi, vj] = T.float32(0)
            Y[vi, vj] = Y[vi, vj] + pad[vi + vr, vj + vs] * W[vr, vs]
'''


def gpu_matmul(name, rng):
    n = rng.choice([512, 1024])
    t = n // 32
    return f'''@T.prim_func
def {name}(A: T.Buffer(({n}, {n}), "float32"), B: T.Buffer(({n}, {n}), "float32"),
        C: T.Buffer(({n}, {n}), "float32")):
    T.func_attr({{"global_symbol": "{name}", "tir.noalias": True}})
    A_shared = T.alloc_buffer(({n}, {n}), "float32", scope="shared")
    for by in T.thread_binding({t}, thread="blockIdx.y"):
        for bx in T.thread_binding({t}, thread="blockIdx.x"):
            for ty in T.thread_binding(32, thread="threadIdx.y"):
                for tx in T.thread_binding(32, thread="threadIdx.x"):
                    for k_0 in range({t}):
                        for ax1 in range(32):
                            with T.block("A_shared"):
                                v0 = T.axis.spatial({n}, by * 32 + ty)
                                v1 = T.axis.spatial({n}, k_0 * 32 + ax1)
                                T.reads(A[v0, v1])
                                T.writes(A_shared[v0, v1])
                                A_shared[v0, v1] = A[v0, v1]
                        for k_1 in range(32):
                            with T.block("C"):
                                vi = T.axis.spatial({n}, by * 32 + ty)
                                vj = T.axis.spatial({n}, bx * 32 + tx)
                                vk = T.axis.reduce({n}, k_0 * 32 + k_1)
                                T.reads(A_shared[vi, vk], B[vk, vj])
                                T.writes(C[vi, vj])
                                with T.init():
                                    C[vi, vj] = T.float32(0)
                                C[vi, vj] = C[vi, vj] + A_shared[vi, vk] * B[vk, vj]
'''


def gpu_add(name, rng):
    n = rng.choice([1024, 4096, 16384])
    t = rng.choice([64, 128, 256])
    return f'''@T.prim_func
def {name}(A: T.Buffer(({n},), "float32"), B: T.Buffer(({n},), "float32"), C: T.Buffer(({n},), "float32")):
    T.func_attr({{"global_symbol": "{name}", "tir.noalias": True}})
    for bx in T.thread_binding({n // t}, thread="blockIdx.x"):
        for tx in T.thread_binding({t}, thread="threadIdx.x"):
            with T.block("C"):
                vi = T.axis.spatial({n}, bx * {t} + tx)
                T.reads(A[vi], B[vi])
                T.writes(C[vi])
                C[vi] = A[vi] + B[vi]
'''



MAKERS = [elementwise, reduction, tiled_matmul, padded_conv, gpu_matmul, gpu_add]


def to_tirx(text: str) -> str:
    """The same kernels in the current TVM spelling."""
    return text.replace("@T.prim_func\n", "@T.prim_func(s_tir=True)\n").replace("T.block(", "T.sblock(")


def generate(n_kernels=60, seed=0, spelling="classic"):
    """(file text, [kernel texts])."""
    rng = random.Random(seed)
    kernels = []
    for i in range(n_kernels):
        maker = MAKERS[i % len(MAKERS)]
        body = maker(f"k{i:03d}", rng).split("\n")
        body.insert(0, f"# k{i:03d}: {maker.__name__.replace('_', ' ')} kernel, generated")
        body.insert(4, "    # loop nest and block")
        text = "\n".join(body)
        kernels.append(to_tirx(text) if spelling == "tirx" else text)
    return HEADERS[spelling] + "\n\n".join(kernels), kernels


MODULE_HEADERS = {"classic": "from tvm.script import ir as I\nfrom tvm.script import tir as T\n\n\n",
                  "tirx": "from tvm.script import ir as I\nfrom tvm.script import tirx as T\n\n\n"}


def module(n_kernels=61, seed=0, spelling="tirx", copies=1):
    """(file text, [kernel texts]): the kernels as methods of one `@I.ir_module` class, the
    way TVM prints a module (about 1,000 lines for 61 kernels); `copies` > 1 repeats the
    class and its functions under new names (about 1,000 lines each)."""
    import re
    _, kernels = generate(n_kernels, seed, spelling)
    body = "\n".join("\n".join("    " + ln if ln else ln for ln in k.split("\n")) for k in kernels)
    classes = []
    for c in range(copies):
        name = "Module" if copies == 1 else f"Module{c}"
        # every copy's functions named apart, so that no two definitions of the file are equal
        text = body if copies == 1 else re.sub(r"\bk(\d{3})\b", rf"k{c}_\1", body)
        classes.append(f"@I.ir_module\nclass {name}:\n{text}")
    return MODULE_HEADERS[spelling] + "\n\n".join(classes), kernels
