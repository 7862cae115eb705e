from tvm.script import tir as T


@T.prim_func
def spgemm(
    a: T.handle,
    bt: T.handle,
    c: T.handle,
    a_indptr: T.handle,
    a_indices: T.handle,
    bt_indptr: T.handle,
    bt_indices: T.handle,
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
    K = T.dense_fixed(p)
    J_t = T.sparse_variable(K, (n, nnz_b), (bt_indptr, bt_indices), "int32")
    K_c = T.sparse_variable(I, (p, nnz_c), (c_indptr, c_indices), "int32")
    A = T.match_sparse_buffer(a, (I, J), "float32")
    BT = T.match_sparse_buffer(bt, (K, J_t), "float32")
    C = T.match_sparse_buffer(c, (I, K_c), "float32")
    # C = A @ B by inner products: B is given transposed (CSR of B^T, i.e. CSC of B)
    with T.sp_iter([I, K, J], "SSR", "spgemm") as [i, k, j]:
        C[i, k] = C[i, k] + A[i, j] * BT[k, j]
