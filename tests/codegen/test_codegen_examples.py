"""Every CPU kernel of the shared examples compiles, runs and matches the interpreter."""
import numpy as np
import pytest

import tirkit
from tirkit.codegen import THREAD_BINDING, build
from tirkit.codegen.cli import compare, make_inputs
from tirkit.codegen.interp import run_reference
from tirkit.diagnostics import TirkitError

from codegen_helpers import EXAMPLES

VALID = EXAMPLES / "valid"
GPU = {"gpu_matmul_shared.py"}


def _kernels():
    out = []
    for path in sorted(VALID.glob("*.py")):
        if path.name in GPU:
            continue
        module = tirkit.parse(path.read_text(), str(path)).module
        for name, _ in module.prim_funcs():
            out.append(pytest.param(path, name, id=f"{path.stem}:{name}"))
    return out


def _load(path, name):
    module = tirkit.parse(path.read_text(), str(path)).module
    return module, module[name]


@pytest.mark.parametrize("path,name", _kernels())
def test_kernel_matches_interpreter(path, name):
    module, func = _load(path, name)
    kernel = build(func, module)
    arrays = make_inputs(func, np.random.default_rng(1))
    assert all(np.count_nonzero(a) == a.size for a in arrays)
    ref = [a.copy() for a in arrays]
    kernel(*arrays)
    run_reference(func, ref, module=module)
    for b, out, r in zip(kernel.buffers, arrays, ref):
        ok, err = compare(out, r, b.dtype)
        assert ok, (b.name, err)


def test_symbolic_batch_matmul_runs_at_two_sizes():
    module, func = _load(VALID / "batch_matmul_symbolic.py", "batch_matmul")
    kernel = build(func, module)
    rng = np.random.default_rng(2)
    for n, m in ((2, 3), (5, 17)):
        A = rng.uniform(0.5, 1.5, (n, m, 64)).astype("float32")
        B = rng.uniform(0.5, 1.5, (n, 64, 32)).astype("float32")
        C = np.full((n, m, 32), 7.0, "float32")
        kernel(A, B, C)
        np.testing.assert_allclose(C, A @ B, rtol=1e-5)


def test_gpu_kernel_gets_a_diagnostic_not_a_crash():
    module, func = _load(VALID / "gpu_matmul_shared.py", "gpu_matmul")
    with pytest.raises(TirkitError) as info:
        build(func, module)
    (d,) = info.value.diagnostics
    assert d.code == THREAD_BINDING
    assert d.severity == "error"
    assert d.span.line == 13          # `for by in T.thread_binding(32, thread="blockIdx.y")`


def test_const_bias_adds_the_constant_table_values():
    module, func = _load(VALID / "const_bias.py", "add_bias")
    kernel = build(func, module)
    A = np.arange(1, 9, dtype="float32")
    B = np.zeros(8, "float32")
    kernel(A, B)
    bias = np.array([0.5, -1.0, 2.25, 0.0, 3.0, -0.125, 0.001, 7.0], "float32")
    np.testing.assert_array_equal(B, A + bias)
    assert "__tirkit_const_bias_data" in tirkit.codegen.emit_llvm(func, module)


def test_wrong_arguments_are_reported():
    module, func = _load(VALID / "matmul.py", "matmul")
    kernel = build(func, module)
    A = np.ones((128, 128), "float32")
    with pytest.raises(TirkitError) as info:
        kernel(A, A.copy(), np.ones((128, 64), "float32"))
    assert info.value.diagnostics[0].code == "codegen/argument"
    with pytest.raises(TirkitError):
        kernel(A, A.copy(), np.ones((128, 128), "float64"))


@pytest.mark.parametrize("stem,name", [("matmul_1024_scheduled", "matmul_1024"),
                                       ("matmul_1024_avx2", "matmul_1024_avx2")])
def test_project_matmul_examples_compute_a_times_b(stem, name):
    from pathlib import Path
    path = Path(__file__).resolve().parents[2] / "examples" / f"{stem}.py"
    module, func = _load(path, name)
    rng = np.random.default_rng(4)
    A = rng.uniform(0.5, 1.5, (1024, 1024)).astype(np.float32)
    B = rng.uniform(-1.5, -0.5, (1024, 1024)).astype(np.float32)
    C = np.full((1024, 1024), 7, np.float32)
    build(func, module)(A, B, C, threads=2)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B.astype(np.float64), rtol=1e-4)
