"""Calls between the functions of an `@I.ir_module` (`Module.f(x)`, TVM's call of a
GlobalVar): the call has the callee's return type, and the interpreter and the CPU back end
run the callee, its scalars by value and its buffers by their data pointers, checked against
numpy on random inputs."""
import subprocess
import sys

import numpy as np
import pytest

import tirkit
import codegen_helpers  # noqa: F401  (private kernel cache)
from tirkit.codegen import build
from tirkit.codegen.cuda import emit_cuda
from tirkit.codegen.cuda.nvcc import compile_cuda, find_nvcc
from tirkit.codegen.cuda.threads import run_threads
from tirkit.codegen.interp import run_reference
from tirkit.diagnostics import TirkitError
from tirkit.ir import expr as E
from tirkit.ir.visit import find_all

HEAD = "from tvm.script import ir as I\nfrom tvm.script import tir as T\n\n\n"

# the callee after its caller, with a branch and two returns: TVM declares every function of
# the module before it parses a body
SCALE = HEAD + '''@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "int32"),
             C: T.Buffer((64,), "float32")):
        for i in range(64):
            C[i] = Module.scale(A[i], B[i]) + T.float32(1)

    @T.prim_func(private=True)
    def scale(a: T.float32, b: T.int32) -> T.float32:
        if b > 0:
            return a * T.float32(2)
        return a - T.float32(1)
'''

# a buffer passed by its data pointer: the callee writes through it
FILL = HEAD + '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def put(dst: T.handle("float32"), i: T.int32, v: T.float32):
        D = T.decl_buffer((16,), "float32", data=dst)
        D[i] = v * v

    @T.prim_func
    def main(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
        for i in range(16):
            Module.put(B.data, 15 - i, A[i])
'''


def _module(text):
    result = tirkit.parse(text, "mod.py")
    assert [d for d in result.diagnostics if d.severity == "error"] == []
    return result.module


def _calls(func):
    return find_all(func.body, lambda x: isinstance(x, E.Call) and x.op.startswith("@"))


def test_a_call_has_its_callees_return_type():
    mod = _module(SCALE)
    assert [c.dtype for c in _calls(mod["main"])] == ["float32"]
    ints = _module(SCALE.replace("-> T.float32", "-> T.int32").replace(
        "a * T.float32(2)", "T.int32(2)").replace("a - T.float32(1)", "b"))
    assert [c.dtype for c in _calls(ints["main"])] == ["int32"]
    # a class read whole (its docstring keeps it from being split into methods)
    whole = _module(SCALE.replace("class Module:\n", 'class Module:\n    """Doc."""\n\n'))
    assert [c.dtype for c in _calls(whole["main"])] == ["float32"]


def test_a_changed_return_type_retypes_the_calls_of_an_unchanged_caller():
    """The caller's cached lowering is keyed by its siblings' return annotations too."""
    tirkit.parse(SCALE, "mod.py")
    changed = SCALE.replace("-> T.float32", "-> T.float64")
    assert [c.dtype for c in _calls(_module(changed)["main"])] == ["float64"]


def _scale_inputs():
    rng = np.random.default_rng(7)
    A = rng.standard_normal(64).astype("float32")
    B = rng.integers(-5, 6, 64).astype("int32")
    want = np.where(B > 0, A * 2, A - 1) + 1
    return A, B, want


def test_a_scalar_function_runs_in_the_interpreter_and_compiled():
    mod = _module(SCALE)
    A, B, want = _scale_inputs()
    assert (B > 0).any() and (B <= 0).any()
    for lanes in (True, False):
        C = np.full(64, np.nan, "float32")
        run_reference(mod["main"], [A, B, C], module=mod, lanes=lanes)
        np.testing.assert_allclose(C, want, rtol=1e-6)
    C = np.full(64, np.nan, "float32")
    build(mod["main"], mod)(A, B, C)
    np.testing.assert_allclose(C, want, rtol=1e-6)


def test_a_buffer_passed_by_its_data_pointer_is_written_by_the_callee():
    mod = _module(FILL)
    A = np.random.default_rng(3).standard_normal(16).astype("float32")
    want = (A * A)[::-1]
    B = np.full(16, np.nan, "float32")
    run_reference(mod["main"], [A, B], module=mod)
    np.testing.assert_allclose(B, want, rtol=1e-6)
    B = np.full(16, np.nan, "float32")
    build(mod["main"], mod)(A, B)
    np.testing.assert_allclose(B, want, rtol=1e-6)
    B = np.full(16, np.nan, "float32")
    build(mod["main"], mod, checked=True)(A, B)
    np.testing.assert_allclose(B, want, rtol=1e-6)


# a pointer into a buffer (TVM's inline_private_functions test): row sums of 16x16 windows
ROWS = HEAD + '''@I.ir_module
class Before:
    @T.prim_func
    def main(A: T.Buffer([80, 16], "float32"), B: T.Buffer([64, 16], "float32")):
        for i in range(64):
            Before.subroutine(T.address_of(A[i, 0]), T.address_of(B[i, 0]))

    @T.prim_func(private=True)
    def subroutine(A_data: T.handle("float32"), B_data: T.handle("float32")):
        A = T.decl_buffer([16, 16], "float32", data=A_data)
        B = T.decl_buffer([16], "float32", data=B_data)
        for i in range(16):
            B[i] = 0.0
            for j in range(16):
                B[i] = B[i] + A[i, j]
'''


def test_a_pointer_into_a_buffer_is_passed_by_its_element_address():
    mod = _module(ROWS)
    A = np.random.default_rng(11).standard_normal((80, 16)).astype("float32")
    want = np.stack([A[i:i + 16].sum(axis=1) for i in range(64)])   # B[i] from A[i:i + 16]
    for run in (lambda B: run_reference(mod["main"], [A, B], module=mod),
                lambda B: build(mod["main"], mod)(A, B),
                lambda B: build(mod["main"], mod, checked=True)(A, B)):
        B = np.full((64, 16), np.nan, "float32")
        run(B)
        np.testing.assert_allclose(B, want, rtol=1e-5)


def test_a_callee_past_the_end_of_a_pointer_is_stopped():
    """The callee's view reaches past the caller's buffer: the interpreter and checked code
    refuse the access (the caller's storage is what bounds the callee's)."""
    mod = _module(ROWS.replace("[80, 16]", "[70, 16]"))
    A = np.random.default_rng(2).standard_normal((70, 16)).astype("float32")
    for run in (lambda B: run_reference(mod["main"], [A, B], module=mod),
                lambda B: build(mod["main"], mod, checked=True)(A, B)):
        with pytest.raises(TirkitError) as e:
            run(np.zeros((64, 16), "float32"))
        assert e.value.diagnostics[0].code == "bounds/out-of-bounds"


def _refused_by_both(mod, line, words):
    """SCALE's main, changed, is refused with codegen/unsupported at `line` by the
    interpreter and the CPU back end."""
    A, B, _ = _scale_inputs()
    for run in (lambda: run_reference(mod["main"], [A, B, np.zeros(64, "float32")],
                                      module=mod),
                lambda: build(mod["main"], mod)):
        with pytest.raises(TirkitError) as e:
            run()
        d = e.value.diagnostics[0]
        assert d.code == "codegen/unsupported" and d.span.line == line
        assert words in d.message


def test_a_callee_that_leaves_a_parallel_loop_is_refused_by_both_engines():
    """The callee's control flow is checked as a kernel's is (passes/control.py)."""
    text = SCALE.replace("        if b > 0:\n            return a * T.float32(2)\n",
                         "        for k in T.parallel(4):\n            if b > k:\n"
                         "                return a * T.float32(2)\n")
    _refused_by_both(_module(text), 17, "T.ret cannot leave 'scale' from inside parallel "
                     "loop 'k'")


def test_a_changed_callee_is_compiled_again():
    """The compiled kernel's cache key holds the functions it calls."""
    A, B, want = _scale_inputs()
    for factor in (2, 3):
        mod = _module(SCALE.replace("a * T.float32(2)", f"a * T.float32({factor})"))
        C = np.full(64, np.nan, "float32")
        build(mod["main"], mod)(A, B, C)
        np.testing.assert_allclose(C, np.where(B > 0, A * factor, A - 1) + 1, rtol=1e-6)


def test_a_call_to_a_function_that_is_not_a_prim_func_is_refused():
    text = SCALE.replace("    @T.prim_func(private=True)\n    def scale(a: T.float32, b: T.int32)"
                         " -> T.float32:\n        if b > 0:\n            return a * T.float32(2)"
                         "\n        return a - T.float32(1)\n",
                         "    def scale(a, b):\n        return a\n")
    _refused_by_both(tirkit.parse(text, "mod.py").module, 11,
                     "'scale' is not a prim_func of the module")


THREADS = HEAD + '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def add(a: T.int32, b: T.int32) -> T.int32:
        return a + b

    @T.prim_func
    def main(A: T.Buffer(({n}, {n}), "int32"), B: T.Buffer(({n}, {n}), "int32"),
             C: T.Buffer(({n}, {n}), "int32")):
        length: T.int32 = Module.add({h}, {h})
        for bx in T.thread_binding(length, "blockIdx.x"):
            for tx in T.thread_binding(length, "threadIdx.x"):
                C[bx, tx] = Module.add(A[bx, tx], B[bx, tx])
'''


def test_a_thread_bound_kernel_calls_a_function_from_the_host_and_from_each_thread(tmp_path):
    """The corpus's kernel of TVM's helpers test, in the thread interpreter (a format
    template: its call from the host has no CUDA C, so the GPU corpus test leaves it out)."""
    text = THREADS.format(n=32, h=16)
    mod = _module(text)
    rng = np.random.default_rng(5)
    A, B = (rng.integers(-1000, 1000, (32, 32)).astype("int32") for _ in range(2))
    C = np.zeros((32, 32), "int32")
    run_threads(mod["main"], [A, B, C], [], module=mod)
    np.testing.assert_array_equal(C, A + B)
    path = tmp_path / "threads.py"
    path.write_text(text)
    r = subprocess.run([sys.executable, "-m", "tirkit.cli", "run", "--check", str(path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "main: no GPU here: ran in the thread interpreter on the CPU (32 of 32 block(s) " \
        "of 32 thread(s)" in r.stdout, r.stdout
    assert "no data race" in r.stdout, r.stdout


# a device function: collected by the GPU corpus test too (gpu_corpus.py), which runs it in
# the thread interpreter against the reference interpreter and compiles it with nvcc
DEVICE = HEAD + '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def axpy(a: T.float32, x: T.float32, y: T.float32) -> T.float32:
        if a > T.float32(0):
            return a * x + y
        return y - x

    @T.prim_func
    def device_call(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"),
                    C: T.Buffer((256,), "float32")):
        for bx in T.thread_binding(2, "blockIdx.x"):
            for tx in T.thread_binding(128, "threadIdx.x"):
                C[bx * 128 + tx] = Module.axpy(A[bx * 128 + tx], B[bx * 128 + tx],
                                               T.float32(1))
'''


def test_a_call_from_a_thread_is_a_device_function_in_cuda():
    mod = _module(DEVICE)
    src = emit_cuda(mod["device_call"], mod)
    assert src.functions == ["tirkit_call_axpy"]
    code = src.kernels_code
    assert "__device__ float tirkit_call_axpy(float a, float x, float y) {" in code
    assert code.index("tirkit_call_axpy(float a") < code.index("__global__")
    assert "return ((a * x) + y);" in code and "tirkit_call_axpy(A[" in code
    rng = np.random.default_rng(6)
    A, B = (rng.standard_normal(256).astype("float32") for _ in range(2))
    C = np.full(256, np.nan, "float32")
    run_threads(mod["device_call"], [A, B, C], [], module=mod)
    np.testing.assert_allclose(C, np.where(A > 0, A * B + 1, 1 - B), rtol=1e-6)
    if find_nvcc() is not None:
        compile_cuda(src.code, "sm_80", "cubin")


# a pointer into a buffer passed to a device function (a format template: the thread
# interpreter passes pointers outside threads only, so the GPU corpus test leaves it out)
DEVICE_POINTER = HEAD + '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def put(dst: T.handle("float32"), v: T.float32):
        D = T.decl_buffer(({one},), "float32", data=dst)
        D[0] = v * v

    @T.prim_func
    def main(A: T.Buffer((128,), "float32"), C: T.Buffer((128,), "float32")):
        for tx in T.thread_binding(128, "threadIdx.x"):
            Module.put(T.address_of(C[tx]), A[tx])
'''


def test_a_device_function_writes_through_a_pointer_into_a_buffer():
    mod = _module(DEVICE_POINTER.format(one=1))
    src = emit_cuda(mod["main"], mod)
    code = src.kernels_code
    assert "__device__ void tirkit_call_put(float* D, float v) {" in code
    assert "D[0] = (v * v);" in code and "tirkit_call_put((&C[tx]), A[tx]);" in code
    if find_nvcc() is not None:
        compile_cuda(src.code, "sm_90", "cubin")


def test_the_thread_interpreter_runs_a_call_through_a_pointer_and_sees_its_races():
    """A call from a thread that passes a buffer's element runs with the callee's body in
    the thread (its view is the caller's buffer from that element on), so the race detector
    sees its accesses: C[tx] = A[tx]^2 against numpy; every thread writing through one
    pointer is a race, reported at the callee's store."""
    mod = _module(DEVICE_POINTER.format(one=1))
    rng = np.random.default_rng(6)
    A = rng.standard_normal(128).astype("float32")
    C = rng.standard_normal(128).astype("float32")
    run_threads(mod["main"], [A, C], [], module=mod)
    np.testing.assert_allclose(C, A * A, rtol=1e-6)
    racy = _module(DEVICE_POINTER.format(one=1).replace("address_of(C[tx])", "address_of(C[0])"))
    with pytest.raises(TirkitError) as e:
        run_threads(racy["main"], [A, C], [], module=racy)
    d = e.value.diagnostics[0]
    assert (d.code, d.span.line) == ("thread/race", 10), d


def test_the_cuda_generator_refuses_a_call_from_the_host():
    """A call outside the thread bindings runs on the host, which the CUDA source does not
    hold: refused at the statement, as any host code is."""
    mod = _module(THREADS.format(n=32, h=16))
    with pytest.raises(TirkitError) as e:
        emit_cuda(mod["main"], mod)
    d = e.value.diagnostics[0]
    assert d.code == "codegen/unsupported" and d.span.line == 14
    assert "CUDA code needs every statement of the function inside a blockIdx/threadIdx " \
        "binding" in d.message


RECURSIVE = HEAD + '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def down(n: T.int32) -> T.int32:
        for a in range(1):
            for b in range({depth}):
                if n > 0:
                    return Module.down(n - 1) + 1
        return 0

    @T.prim_func
    def main(A: T.Buffer((8,), "int32")):
        for i in range(8):
            A[i] = Module.down(A[i] % 4 + {base})
'''


def test_a_recursive_function_runs_to_its_end_and_an_endless_one_is_stopped():
    """A recursion of 8 to 11 calls runs in both engines; one the interpreter cannot hold
    (more than module_calls.MAX_DEPTH calls, or nested statements that exhaust Python's
    stack first) is refused at the call, never a RecursionError, while compiled code runs
    it."""
    A = np.random.default_rng(4).integers(0, 1000, 8).astype("int32")
    want = A % 4 + 8
    mod = _module(RECURSIVE.format(depth=1, base=8))
    for run in (lambda B: run_reference(mod["main"], [B], module=mod),
                lambda B: build(mod["main"], mod)(B)):
        B = A.copy()
        run(B)
        np.testing.assert_array_equal(B, want)
    for depth in (1, 3):          # which limit comes first depends on the caller's stack
        mod = _module(RECURSIVE.format(depth=depth, base=70))
        B = A.copy()
        build(mod["main"], mod)(B)
        np.testing.assert_array_equal(B, A % 4 + 70)
        with pytest.raises(TirkitError) as e:
            run_reference(mod["main"], [A.copy()], module=mod)
        d = e.value.diagnostics[0]
        assert d.code == "codegen/unsupported" and d.span.line == 12
        assert d.message.startswith("calls nest deeper than 64 (a recursion that does not "
                                    "end?)") or d.message.startswith(
            "calls nest deeper than the interpreter's stack holds"), d.message


def test_checked_code_stops_an_endless_recursion_at_the_call():
    """Compiled unchecked, a recursion without end overflows the native stack; checked code
    (what `tirkit run` runs) counts the calls and ends the run at the call that would nest
    past module_calls.MAX_DEPTH, as the interpreter does, in a parallel loop too."""
    text = HEAD + '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def down(n: T.int32) -> T.int32:
        return Module.down(n - 1) * 2 + 1

    @T.prim_func
    def main(A: T.Buffer((8,), "int32")):
        for i in T.parallel(8):
            A[i] = Module.down(A[i])
'''
    mod = _module(text)
    with pytest.raises(TirkitError) as e:
        build(mod["main"], mod, checked=True)(np.arange(8, dtype="int32"))
    d = e.value.diagnostics[0]
    assert (d.code, d.span.line, d.span.column) == ("codegen/unsupported", 9, 16)
    assert d.message == "calls 'down' nested deeper than 64 (a recursion that does not end?)"
    good = _module(RECURSIVE.format(depth=1, base=8).replace("range(8)", "T.parallel(8)"))
    A = np.random.default_rng(9).integers(0, 1000, 8).astype("int32")
    B = A.copy()
    build(good["main"], good, checked=True)(B)
    np.testing.assert_array_equal(B, A % 4 + 8)


def test_the_operations_of_a_called_function_count_at_each_call():
    """What `tirkit bench` divides by its time: a callee's operations once per call (64
    calls of 16 x 16 float additions, the caller storing nothing itself); a recursion counts
    each function once on its path, and ends."""
    from tirkit.codegen.flops import count_ops
    from tirkit.codegen.passes import lower
    mod = _module(ROWS)
    low = lower(mod["main"], mod)
    assert count_ops(low.body, callees=low.callees) == (64 * 16 * 16, 0)
    assert count_ops(low.body) == (0, 0)              # the callee not given: not counted
    mod = _module(SCALE)
    low = lower(mod["main"], mod)
    # per element: the caller's `+ 1`, and the callee's `a * 2` or `a - 1` (both branches
    # of its `if` count, as every `if` does)
    assert count_ops(low.body, callees=low.callees) == (64 * 3, 0)
    mod = _module(RECURSIVE.format(depth=1, base=8))
    low = lower(mod["main"], mod)
    # `A[i] % 4 + 8` computes on loaded data (2 integer operations); the callee on none
    assert count_ops(low.body, callees=low.callees) == (0, 8 * 2)


# a format template: a pointer passed on has no CUDA C here (a device function's parameter is
# a buffer's data), so the GPU corpus test leaves it out
FORWARD = HEAD + '''@I.ir_module
class Module:
    @T.prim_func(private=True)
    def put(dst: T.handle("float32"), v: T.float32):
        D = T.decl_buffer((2,), "float32", data=dst)
        D[0] = v * v
        D[1] = D[0] + v

    @T.prim_func(private=True)
    def twice(dst: T.handle("float32"), v: T.float32):
        Module.put(dst, v + T.float32(1))

    @T.prim_func
    def main(A: T.Buffer((64,), "float32"), C: T.Buffer((128,), "float32")):
        for tx in T.thread_binding({threads}, "threadIdx.x"):
            Module.twice(T.address_of(C[tx * 2]), A[tx])
'''


def test_a_pointer_passed_on_runs_in_every_engine(tmp_path):
    """`twice` passes its pointer on to `put`, which writes two elements through it: such a
    call runs as put's body in twice, so twice reads its pointer through put's view.  The
    thread interpreter, the reference interpreter and the CPU back end give numpy's values,
    `tirkit run` runs twice alone too, and the CUDA generator's device function compiles."""
    mod = _module(FORWARD.format(threads=64))
    rng = np.random.default_rng(8)
    A = rng.standard_normal(64).astype("float32")
    v = A + np.float32(1)
    want = np.stack([v * v, v * v + v], axis=1).reshape(128)
    cpu = _module(FORWARD.format(threads=64).replace('T.thread_binding(64, "threadIdx.x")',
                                                     "range(64)"))
    for run in (lambda C: run_threads(mod["main"], [A, C], [], module=mod),
                lambda C: run_reference(cpu["main"], [A, C], module=cpu),
                lambda C: build(cpu["main"], cpu)(A, C)):
        C = rng.standard_normal(128).astype("float32")
        run(C)
        np.testing.assert_allclose(C, want, rtol=1e-6)
    path = tmp_path / "forward.py"
    path.write_text(FORWARD.format(threads=64).replace('T.thread_binding(64, "threadIdx.x")',
                                                       "range(64)"))
    r = subprocess.run([sys.executable, "-m", "tirkit.cli", "run", "--check", str(path)],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    at = next(i for i, x in enumerate(lines) if x.startswith("twice: ran in "))
    assert lines[at + 2].startswith("  D: ok (rel err "), lines
    src = emit_cuda(mod["main"], mod)
    assert "__device__ void tirkit_call_twice(float* D, float v) {" in src.kernels_code
    if find_nvcc() is not None:
        compile_cuda(src.code, "sm_90", "cubin")


def test_calls_with_a_pointer_the_thread_interpreter_refuses():
    A = np.random.default_rng(9).standard_normal(64).astype("float32")
    returning = FORWARD.format(threads=64).replace("        Module.put(dst, v + T.float32(1))",
                                "        Module.put(dst, v + T.float32(1))\n"
                                "        return 0").replace(
        'def twice(dst: T.handle("float32"), v: T.float32):',
        'def twice(dst: T.handle("float32"), v: T.float32) -> T.int32:')
    recursive = FORWARD.format(threads=64).replace("Module.put(dst, v + T.float32(1))",
                                "Module.twice(dst, v + T.float32(1))")
    for text, line, start in (
            (returning, 21, "'twice' returns with `return`: a call that passes it a pointer"),
            (recursive, 15, "'twice' calls itself again, passing a pointer")):
        mod = _module(text)
        with pytest.raises(TirkitError) as e:
            run_threads(mod["main"], [A, np.zeros(128, "float32")], [], module=mod)
        d = e.value.diagnostics[0]
        assert (d.code, d.span.line) == ("codegen/unsupported", line), d
        assert d.message.startswith(start), d.message


def test_tirkit_run_for_cuda_runs_the_kernels_and_leaves_their_device_functions(tmp_path):
    """`tirkit run --target cuda` on a module: the kernel runs (here in the thread
    interpreter, its call through a pointer inlined), and the function it calls is named as
    a device function, not refused as a kernel without threads; named by --func, it is."""
    path = tmp_path / "device.py"
    path.write_text(DEVICE_POINTER.format(one=1))
    cmd = [sys.executable, "-m", "tirkit.cli", "run", "--target", "cuda", str(path)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    lines = r.stdout.splitlines()
    assert "put: a device function, run by the kernels that call it (main)" in lines, lines
    assert any(x.startswith("main: no GPU here: ran in the thread interpreter on the CPU (1 of "
                            "1 block(s) of 128 thread(s)") for x in lines), lines
    r = subprocess.run(cmd + ["--func", "put"], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and "'put' binds no loop to GPU threads" in r.stderr, r.stderr


def test_a_pointer_passed_on_that_cannot_be_inlined_is_refused_with_a_diagnostic(tmp_path):
    """TVM's packed-API test input: main hands its pointer to a function that returns with
    `T.ret` and reads nothing through it.  No inlining gives main a view, so main keeps a
    handle no buffer views and `tirkit run` refuses it with that diagnostic (it was an
    internal error while the inlining's refusal escaped the command)."""
    path = tmp_path / "packed.py"
    path.write_text(HEAD + '''@I.ir_module
class mod:
    @T.prim_func
    def main(A_data: T.handle("float32")) -> T.int32:
        mod.subroutine(A_data)
        T.ret(T.int32(0))

    @T.prim_func
    def subroutine(A_data: T.handle("float32")) -> T.int32:
        T.evaluate(A_data)
        T.ret(T.int32(0))
''')
    for target in ("cpu", "cuda"):
        r = subprocess.run([sys.executable, "-m", "tirkit.cli", "run", "--check", "--target",
                            target, str(path)], capture_output=True, text=True, timeout=300)
        out = r.stdout + r.stderr
        assert r.returncode == 1 and "internal error" not in out, out
        if target == "cpu":
            assert "parameter 'A_data' is a handle without a buffer" in out, out


# a function that returns a value read through a pointer, called in an expression from each
# thread (a format template, as DEVICE_POINTER)
TOTAL = HEAD + '''@I.ir_module
class Module:
    @T.prim_func
    def main(A: T.Buffer((128,), "float32"), C: T.Buffer((32,), "float32")):
        for tx in T.thread_binding(32, thread="threadIdx.x"):
            C[tx] = Module.total(T.address_of(A[tx * {step}]), T.float32(2)) + T.float32(1)

    @T.prim_func(private=True)
    def total(a: T.handle("float32"), w: T.float32) -> T.float32:
        X = T.decl_buffer((4,), "float32", data=a)
        s = X[0] + X[1]
        return (s + X[2] + X[3]) * w
'''


def test_a_value_read_through_a_pointer_runs_in_the_calling_thread():
    """The call's value comes from the callee's body run in the thread, its final `return`
    binding the value the expression uses, so the race detector sees what it reads: against
    numpy; windows that overlap another thread's store race."""
    mod = _module(TOTAL.format(step=4))
    A = np.random.default_rng(12).standard_normal(128).astype("float32")
    C = np.zeros(32, "float32")
    run_threads(mod["main"], [A, C], [], module=mod)
    np.testing.assert_allclose(C, A.reshape(32, 4).sum(axis=1) * 2 + 1, rtol=1e-5)
    racy = _module(TOTAL.format(step=2).replace("C[tx] = Module", "A[tx * 2 + 1] = Module"))
    with pytest.raises(TirkitError) as e:
        run_threads(racy["main"], [A.copy(), C], [], module=racy)
    assert e.value.diagnostics[0].code == "thread/race", e.value.diagnostics


def test_a_value_call_whose_function_returns_before_its_end_is_refused_in_a_thread():
    early = TOTAL.format(step=4).replace(
        "        s = X[0] + X[1]\n",
        "        s = X[0] + X[1]\n        if w < T.float32(0):\n            return s\n")
    mod = _module(early)
    with pytest.raises(TirkitError) as e:
        run_threads(mod["main"], [np.ones(128, "float32"), np.zeros(32, "float32")], [],
                    module=mod)
    d = e.value.diagnostics[0]
    assert (d.code, d.span.line) == ("codegen/unsupported", 10), d
    assert d.message.startswith("'total' returns elsewhere than at its end"), d.message
