"""Row means in the current TVM spelling (tirx, T.sblock)."""
from tvm.script import tirx as T


@T.prim_func(s_tir=True)
def row_mean(X: T.Buffer((64, 256), "float32"), M: T.Buffer((64,), "float32")):
    T.func_attr({"global_symbol": "row_mean", "tir.noalias": True})
    acc = T.alloc_buffer((64,), "float32")
    for i, k in T.grid(64, 256):
        with T.sblock("acc"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(X[vi, vk])
            T.writes(acc[vi])
            with T.init():
                acc[vi] = T.float32(0)
            acc[vi] = acc[vi] + X[vi, vk]
    for i in range(64):
        with T.sblock("mean"):
            vi = T.axis.spatial(64, i)
            T.reads(acc[vi])
            T.writes(M[vi])
            M[vi] = acc[vi] * T.float32(0.00390625)


def reference(x):
    """Plain numpy, for comparison (never read by tirkit)."""
    return x.mean(axis=1)
