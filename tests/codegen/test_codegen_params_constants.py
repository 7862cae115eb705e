"""Constants read from a `.params` file reach the compiled kernel (float32 and int8 biases)."""
import numpy as np

import tirkit

import codegen_helpers  # noqa: F401  (private kernel cache)
from tirkit.codegen import build
from tirkit.codegen.interp import run_reference
from tirkit.script import params

N = 37

SCRIPT = f'''from tvm.script import tir as T
from tirkit.script import params
P = params.load("bias.params")


@T.prim_func
def add_bias(A: T.Buffer(({N},), "float32"), B: T.Buffer(({N},), "float32"),
             Q: T.Buffer(({N},), "int8"), R: T.Buffer(({N},), "int32")):
    T.func_attr({{"global_symbol": "add_bias", "tir.noalias": True}})
    w = T.allocate_const(P["bias"], "float32", [{N}])
    bias = T.decl_buffer(({N},), "float32", data=w)
    q = T.allocate_const(P["qbias"], "int8", [{N}])
    qbias = T.decl_buffer(({N},), "int8", data=q)
    for i in range({N}):
        B[i] = A[i] + bias[i]
        R[i] = T.Cast("int32", Q[i]) + T.Cast("int32", qbias[i])
'''


def biases(seed):
    rng = np.random.default_rng(seed)
    bias = rng.uniform(0.5, 4.0, N).astype(np.float32) * rng.choice([-1, 1], N)
    qbias = rng.integers(-128, 128, N, dtype=np.int8)
    qbias[qbias == 0] = 17                                   # never a zero bias
    return bias.astype(np.float32), qbias


def test_bias_from_a_params_file_is_compiled_in(tmp_path):
    bias, qbias = biases(11)
    params.save(tmp_path / "bias.params", {"bias": bias, "qbias": qbias})
    path = tmp_path / "kernel.py"
    path.write_text(SCRIPT)
    r = tirkit.parse(SCRIPT, str(path))
    assert [d for d in r.diagnostics if d.severity == "error"] == []
    func = r.module["add_bias"]
    kernel = build(func, r.module, cache=False)

    rng = np.random.default_rng(12)
    A = rng.standard_normal(N).astype(np.float32)
    Q = rng.integers(-128, 128, N, dtype=np.int8)
    B = np.full(N, np.float32(-7.0))
    R = np.full(N, -7, np.int32)
    kernel(A, B, Q, R)
    np.testing.assert_array_equal(B, A + bias)
    np.testing.assert_array_equal(R, Q.astype(np.int32) + qbias.astype(np.int32))

    ref = [A.copy(), np.zeros(N, np.float32), Q.copy(), np.zeros(N, np.int32)]
    run_reference(func, ref, module=r.module)
    np.testing.assert_array_equal(ref[1], B)
    np.testing.assert_array_equal(ref[3], R)


def test_changing_the_file_changes_the_kernel(tmp_path):
    path = tmp_path / "kernel.py"
    path.write_text(SCRIPT)
    outs = []
    for seed in (21, 22):
        bias, qbias = biases(seed)
        params.save(tmp_path / "bias.params", {"bias": bias, "qbias": qbias})
        r = tirkit.parse(SCRIPT, str(path))
        kernel = build(r.module["add_bias"], r.module)
        A = np.linspace(-3, 3, N, dtype=np.float32)
        Q = np.arange(N, dtype=np.int8)
        B, R = np.zeros(N, np.float32), np.zeros(N, np.int32)
        kernel(A, B, Q, R)
        np.testing.assert_array_equal(B, A + bias)
        np.testing.assert_array_equal(R, Q.astype(np.int32) + qbias)
        outs.append(B)
    assert not np.array_equal(outs[0], outs[1])
