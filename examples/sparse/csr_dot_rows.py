from tvm.script import tir as T


@T.prim_func
def dot_rows(
    a: T.handle,
    b: T.handle,
    y: T.handle,
    a_indptr: T.handle,
    a_indices: T.handle,
    b_indptr: T.handle,
    b_indices: T.handle,
    m: T.int32,
    n: T.int32,
    nnz_a: T.int32,
    nnz_b: T.int32,
):
    T.func_attr({"global_symbol": "dot_rows", "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz_a), (a_indptr, a_indices), "int32")
    J_b = T.sparse_variable(I, (n, nnz_b), (b_indptr, b_indices), "int32")
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (I, J_b), "float32")
    Y = T.match_sparse_buffer(y, (I,), "float32")
    # y[i] = <row i of A, row i of B>: two compressed rows walked together
    with T.sp_iter([I, J], "SR", "dot_rows") as [i, j]:
        with T.init():
            Y[i] = T.float32(0)
        Y[i] = Y[i] + A[i, j] * B[i, j]
