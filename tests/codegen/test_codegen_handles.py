"""Handle parameters that one buffer views (codegen/handles.py): TVM's lowered functions
take `A_data: T.handle` and declare `A = T.decl_buffer(..., data=A_data)` in the body (or,
classic, `A_1 = T.Buffer(..., data=A)`).  `tirkit run` runs them on CPU and GPU as if the
buffer were the parameter's; a handle also passed on as a pointer is refused with a
diagnostic at the parameter."""
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from tirkit.codegen.cuda.threads import run_threads
from tirkit.codegen.handles import with_param_buffers
from tirkit.ir import stmt as S
from tirkit.ir.visit import find_all
from tirkit.script.parse import parse

ROOT = Path(__file__).resolve().parents[2]

TEXT = '''from tvm.script import tir as T


@T.prim_func
def scale(A_data: T.handle("float32"), B_data: T.handle("float32")):
    A = T.decl_buffer((16,), "float32", data=A_data)
    B = T.decl_buffer((16,), "float32", data=B_data)
    for i in range(16):
        B[i] = A[i] * T.float32(2)


@T.prim_func
def scale_classic(A: T.handle("float32"), B: T.handle("float32")):
    A_1 = T.Buffer((16,), data=A)
    B_1 = T.Buffer((16,), data=B)
    for i in range(16):
        B_1[i] = A_1[i] * T.float32(2)


@T.prim_func
def gpu_scale(A_data: T.handle("float32"), B_data: T.handle("float32")):
    A = T.decl_buffer((64,), "float32", data=A_data)
    B = T.decl_buffer((64,), "float32", data=B_data)
    bx = T.launch_thread("blockIdx.x", 2)
    tx = T.launch_thread("threadIdx.x", 32)
    B[bx * 32 + tx] = A[bx * 32 + tx] * T.float32(3)
'''

PASSED_ON = '''from tvm.script import tir as T


@T.prim_func
def passed_on(A_data: T.handle("float32"), B: T.Buffer((16,), "float32")):
    A = T.decl_buffer((16,), "float32", data=A_data)
    for i in range(16):
        B[i] = A[i] + T.float32(1)
    T.evaluate(T.call_extern("int32", "consume", A_data))


@T.prim_func
def two_views(A_data: T.handle("float32"), B: T.Buffer((16,), "float32")):
    A = T.decl_buffer((16,), "float32", data=A_data)
    A2 = T.decl_buffer((4, 4), "float32", data=A_data)
    for i in range(16):
        B[i] = A[i] + A2[i // 4, i % 4]
'''


def _funcs(text):
    r = parse(text, "h.py")
    assert not [d for d in r.diagnostics if d.severity == "error"], r.diagnostics
    return dict(r.module.prim_funcs()), r.module


def test_the_viewing_buffer_becomes_the_parameters_and_its_declaration_goes():
    funcs, _ = _funcs(TEXT)
    for name in ("scale", "scale_classic", "gpu_scale"):
        f = funcs[name]
        g = with_param_buffers(f)
        assert [g.buffer_of(p).name for p in g.params] == \
            (["A_1", "B_1"] if name == "scale_classic" else ["A", "B"])
        assert [g.buffer_of(p).data for p in g.params] == list(g.params)
        assert not find_all(g.body, lambda x: True, S.DeclBuffer)
        assert f.buffer_map == ()                      # the parsed function is unchanged


def test_a_handle_passed_on_or_viewed_twice_stays_a_handle():
    funcs, _ = _funcs(PASSED_ON)
    for f in funcs.values():
        g = with_param_buffers(f)
        assert g.buffer_of(g.params[0]) is None
        assert g is f


def test_the_python_api_reads_handles_as_the_command_line_does():
    """build, the reference interpreter, make_inputs, the thread interpreter and emit_cuda
    take the parsed function as it is."""
    from tirkit.codegen import build
    from tirkit.codegen.cuda import emit_cuda
    from tirkit.codegen.inputs import make_inputs
    from tirkit.codegen.interp import run_reference
    funcs, module = _funcs(TEXT)
    f = funcs["scale"]
    assert [a.shape for a in make_inputs(f, np.random.default_rng(0))] == [(16,), (16,)]
    A = np.random.default_rng(5).standard_normal(16).astype(np.float32)
    B, ref = np.zeros(16, np.float32), np.zeros(16, np.float32)
    build(f, module)(A, B)
    run_reference(f, [A, ref], module=module)
    np.testing.assert_array_equal(B, A * 2)
    np.testing.assert_array_equal(ref, A * 2)
    g = funcs["gpu_scale"]
    A = np.random.default_rng(6).standard_normal(64).astype(np.float32)
    B = np.zeros(64, np.float32)
    run_threads(g, [A, B], module=module)
    np.testing.assert_array_equal(B, A * 3)
    assert emit_cuda(g, module).kernels[0].params == ["A", "B"]


def test_gpu_kernel_over_handles_runs_in_the_thread_interpreter():
    funcs, module = _funcs(TEXT)
    g = with_param_buffers(funcs["gpu_scale"])
    A = np.random.default_rng(4).standard_normal(64).astype(np.float32)
    B = np.full(64, 7, np.float32)
    run_threads(g, [A, B], module=module)
    np.testing.assert_array_equal(B, A * 3)


def _tirkit(*args, tmp_path):
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'language'}{os.pathsep}{ROOT / 'server'}",
               TIRKIT_CACHE_DIR=str(tmp_path / "cache"))
    return subprocess.run([sys.executable, "-m", "tirkit.cli", *args], env=env,
                          capture_output=True, text=True, timeout=300)


def test_tirkit_run_checks_kernels_over_handles(tmp_path):
    path = tmp_path / "handles.py"
    path.write_text(TEXT)
    res = _tirkit("run", "--check", str(path), tmp_path=tmp_path)
    assert res.returncode == 0, res.stdout + res.stderr
    assert "A: ok" in res.stdout and "B: ok" in res.stdout and "B_1: ok" in res.stdout
    assert "gpu_scale: no GPU here: ran in the thread interpreter" in res.stdout
    assert "no data race" in res.stdout


def test_a_handle_passed_on_is_a_diagnostic_at_the_parameter(tmp_path):
    path = tmp_path / "passed.py"
    path.write_text(PASSED_ON)
    res = _tirkit("run", str(path), "--func", "passed_on", tmp_path=tmp_path)
    assert res.returncode == 1
    assert "passed.py:5:15: error: parameter 'A_data' is a handle without a buffer" \
        in res.stderr
    assert "[codegen/unsupported]" in res.stderr and "Traceback" not in res.stderr


def test_a_size_a_handles_buffer_takes_is_the_scalar_the_run_gets():
    """`n` sizes the buffer declared over `A_data`: make_scalars gives it the size
    make_inputs made the array with, as for a `T.Buffer((n,))` parameter."""
    from tirkit.codegen.inputs import make_inputs, make_scalars
    funcs, _ = _funcs(SIZED)
    f = funcs["iota"]
    for seed in range(4):
        rng = np.random.default_rng(seed)
        (a,), (n,) = make_inputs(f, rng, {"n": 24}), make_scalars(f, rng, {"n": 24})
        assert a.shape == (24,) and n == 24


SIZED = '''from tvm.script import tir as T


@T.prim_func
def iota(A_data: T.handle("int32"), n: T.int32):
    A = T.decl_buffer((n,), "int32", data=A_data)
    for i in range(n):
        A[i] = i
'''
