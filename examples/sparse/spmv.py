from tvm.script import tir as T


@T.prim_func
def spmv(
    a: T.handle,
    x: T.handle,
    y: T.handle,
    indptr: T.handle,
    indices: T.handle,
    m: T.int32,
    n: T.int32,
    nnz: T.int32,
):
    T.func_attr({"global_symbol": "spmv", "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz), (indptr, indices), "int32")
    J_detach = T.dense_fixed(n)
    A = T.match_sparse_buffer(a, (I, J), "float32")
    X = T.match_sparse_buffer(x, (J_detach,), "float32")
    Y = T.match_sparse_buffer(y, (I,), "float32")
    with T.sp_iter([I, J], "SR", "spmv") as [i, j]:
        with T.init():
            Y[i] = T.float32(0)
        Y[i] = Y[i] + A[i, j] * X[j]
