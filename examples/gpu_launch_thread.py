"""Low-level TIR: thread axes launched with `T.launch_thread` (the form lowering produces)."""
from tvm.script import tir as T


@T.prim_func
def gpu_scale_launch(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32")):
    T.func_attr({"global_symbol": "gpu_scale_launch", "tir.noalias": True})
    bx = T.launch_thread("blockIdx.x", 2)
    tx = T.launch_thread("threadIdx.x", 128)
    B[bx * 128 + tx] = A[bx * 128 + tx] * T.float32(2)
