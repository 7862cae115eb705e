from tvm.script import tir as T


@T.prim_func
def spgemm(
    a: T.handle,
    b: T.handle,
    c: T.handle,
    a_indptr: T.handle,
    a_indices: T.handle,
    b_indptr: T.handle,
    b_indices: T.handle,
    c_indptr: T.handle,
    c_indices: T.handle,
    m: T.int32,
    n: T.int32,
    p: T.int32,
    nnz_a: T.int32,
    nnz_b: T.int32,
    nnz_c: T.int32,
):
    T.func_attr({"global_symbol": "spgemm", "tir.noalias": True})
    I = T.dense_fixed(m)
    J = T.sparse_variable(I, (n, nnz_a), (a_indptr, a_indices), "int32")
    J_detach = T.dense_fixed(n)
    K = T.sparse_variable(J_detach, (p, nnz_b), (b_indptr, b_indices), "int32")
    K_c = T.sparse_variable(
        I,
        (p, nnz_c),
        (c_indptr, c_indices),
        "int32",
        sorted=False,
        format="hash",
    )
    A = T.match_sparse_buffer(a, (I, J), "float32")
    B = T.match_sparse_buffer(b, (J_detach, K), "float32")
    C = T.match_sparse_buffer(c, (I, K_c), "float32")
    # Gustavson's SpGEMM into an output whose rows are hashed (constant-time insertion)
    with T.sp_iter([I, J, K], "SRS", "spgemm") as [i, j, k]:
        C[i, k] = C[i, k] + A[i, j] * B[j, k]
