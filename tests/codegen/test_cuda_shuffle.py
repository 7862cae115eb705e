"""Warp shuffles written in the kernel (codegen/cuda/shuffle.py): TVM's lowered
`reduce_scope` with the shuffles it made, a butterfly of `tvm_warp_shuffle_xor` and a scan
of `tvm_warp_shuffle_up`, run by the thread interpreter against numpy on random inputs and
generated as CUDA C."""
from __future__ import annotations

import numpy as np

from test_cuda_allreduce import HEAD, func_of, run_in_threads
from tirkit.codegen.cuda import emit_cuda

# TVM's output of LowerThreadAllreduce keeps the reduce_scope attribute over the shuffles
# it made, with no T.tvm_thread_allreduce left in it
LOWERED_WARP_SUM = HEAD + '''@T.prim_func
def lowered_warp_sum(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4,), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            red = T.alloc_buffer((1,), scope="local")
            t0 = T.alloc_buffer((1,), scope="local")
            with T.attr(T.comm_reducer(lambda x0, y0: x0 + y0, [T.float32(0)]),
                        "reduce_scope", T.int32(0)):
                red[0] = A[i, tx]
                for s in T.unroll(5):
                    t0[0] = T.tvm_warp_shuffle_down(T.tvm_warp_activemask(), red[0],
                                                    16 >> s, 32, 32)
                    red[0] = red[0] + t0[0]
                red[0] = T.tvm_warp_shuffle(T.tvm_warp_activemask(), red[0], 0, 32, 32)
            if tx == 0:
                B[i] = red[0]
'''

# every lane ends with the maximum of its segment of 16 lanes (two rows per warp)
XOR_MAX = HEAD + '''@T.prim_func
def butterfly_max(A: T.Buffer((4, 32), "float32"), B: T.Buffer((4, 32), "float32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            v = T.alloc_buffer((1,), scope="local")
            v[0] = A[i, tx]
            for s in T.unroll(4):
                v[0] = T.max(v[0], T.tvm_warp_shuffle_xor(T.uint32(4294967295), v[0],
                                                          8 >> s, 16, 32))
            B[i, tx] = v[0]
'''

# an inclusive prefix sum over the 32 lanes
UP_SCAN = HEAD + '''@T.prim_func
def warp_scan(A: T.Buffer((4, 32), "int32"), B: T.Buffer((4, 32), "int32")):
    for i in T.thread_binding(4, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            v = T.alloc_buffer((1,), "int32", scope="local")
            t = T.alloc_buffer((1,), "int32", scope="local")
            v[0] = A[i, tx]
            for s in T.unroll(5):
                t[0] = T.tvm_warp_shuffle_up(T.uint32(4294967295), v[0], 1 << s, 32, 32)
                if tx >= 1 << s:
                    v[0] = v[0] + t[0]
            B[i, tx] = v[0]
'''


def test_a_reduce_scope_tvm_has_lowered_already_runs_as_it_is():
    rng = np.random.default_rng(12)
    A = rng.standard_normal((4, 32)).astype(np.float32)
    B = np.full(4, 7, np.float32)
    run_in_threads(LOWERED_WARP_SUM, [A, B])
    np.testing.assert_allclose(B, A.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)
    code = emit_cuda(*func_of(LOWERED_WARP_SUM)).code
    assert "__shfl_down_sync(__activemask(), red[0], (16 >> 4), 32)" in code
    assert "__shfl_sync(__activemask(), red[0], 0, 32)" in code


def test_a_butterfly_of_xor_shuffles_gives_every_lane_its_segments_maximum():
    rng = np.random.default_rng(13)
    A = rng.standard_normal((4, 32)).astype(np.float32)
    B = np.zeros((4, 32), np.float32)
    run_in_threads(XOR_MAX, [A, B])
    want = np.repeat(A.reshape(4, 2, 16).max(2), 16, axis=1)
    np.testing.assert_array_equal(B, want)
    assert "__shfl_xor_sync(4294967295U, v[0], (8 >> 0), 16)" in \
        emit_cuda(*func_of(XOR_MAX)).code


def test_up_shuffles_scan_the_lanes():
    rng = np.random.default_rng(14)
    A = rng.integers(-50, 50, (4, 32)).astype(np.int32)
    B = np.zeros((4, 32), np.int32)
    run_in_threads(UP_SCAN, [A, B])
    np.testing.assert_array_equal(B, np.cumsum(A, axis=1))
    assert "__shfl_up_sync(4294967295U, v[0], (1 << 0), 32)" in \
        emit_cuda(*func_of(UP_SCAN)).code


# each lane reads another lane's value, a lane of its own computing (a 4 x 8 transpose of
# the warp), as TVM's lowered warp-memory programs do
PER_LANE = HEAD + '''@T.prim_func
def warp_transpose(A: T.Buffer((2, 32), "float32"), B: T.Buffer((2, 32), "float32")):
    for i in T.thread_binding(2, thread="blockIdx.x"):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            v = T.alloc_buffer((1,), scope="local")
            v[0] = A[i, tx]
            B[i, tx] = T.tvm_warp_shuffle(T.tvm_warp_activemask(), v[0],
                                          tx % 4 * 8 + tx // 4, 32, 32)
'''


def test_a_shuffle_from_a_lane_each_thread_computes():
    rng = np.random.default_rng(15)
    A = rng.standard_normal((2, 32)).astype(np.float32)
    B = np.zeros((2, 32), np.float32)
    run_in_threads(PER_LANE, [A, B])
    tx = np.arange(32)
    np.testing.assert_array_equal(B, A[:, tx % 4 * 8 + tx // 4])


# a block 8 threads wide: each warp holds four rows of threadIdx.y, and TVM's lowering
# shuffles over the whole warp (width 32), taking each row's sum from the lane 8 * ty
ROWS_IN_A_WARP = HEAD + '''@T.prim_func
def rows_in_a_warp(A: T.Buffer((16, 8), "float32"), B: T.Buffer((16,), "float32")):
    threadIdx_y = T.launch_thread("threadIdx.y", 16)
    red = T.allocate([1], "float32", "local")
    threadIdx_x = T.launch_thread("threadIdx.x", 8)
    red_1 = T.Buffer((1,), data=red, scope="local")
    red_1[0] = A[threadIdx_y, threadIdx_x]
    for s in T.unroll(3):
        red_1[0] = red_1[0] + T.tvm_warp_shuffle_down(T.tvm_warp_activemask(), red_1[0],
                                                      4 >> s, 32, 32)
    red_1[0] = T.tvm_warp_shuffle(T.tvm_warp_activemask(), red_1[0], 8 * threadIdx_y, 32, 32)
    if threadIdx_x == 0:
        B[threadIdx_y] = red_1[0]
'''


def test_lanes_run_in_cuda_order_across_the_rows_of_a_warp():
    rng = np.random.default_rng(16)
    A = rng.standard_normal((16, 8)).astype(np.float32)
    B = np.full(16, 7, np.float32)
    run_in_threads(ROWS_IN_A_WARP, [A, B])
    np.testing.assert_allclose(B, A.astype(np.float64).sum(1), rtol=1e-5, atol=1e-5)
