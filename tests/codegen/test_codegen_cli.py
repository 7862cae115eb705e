"""`tirkit run` and `tirkit bench` end to end, in fresh processes (the cache crosses them)."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from codegen_helpers import EXAMPLES

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def _tirkit(*args, cache, **run):
    """`tirkit ARGS` in a fresh process with this kernel cache (`run`: more arguments of
    subprocess.run)."""
    env = dict(os.environ, PYTHONPATH=f"{ROOT / 'language'}{os.pathsep}{ROOT / 'server'}",
               TIRKIT_CACHE_DIR=str(cache))
    return subprocess.run([sys.executable, "-m", "tirkit.cli", *args], env=env,
                          capture_output=True, text=True, timeout=300, **run)


def test_run_check_compares_and_second_run_is_cached(tmp_path):
    path = str(EXAMPLES / "valid" / "softmax.py")
    first = _tirkit("run", path, "--check", cache=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "compiled in" in first.stdout
    assert re.search(r"S: ok \(rel err [0-9.e-]+\)", first.stdout)
    second = _tirkit("run", path, cache=tmp_path)
    assert second.returncode == 0
    assert "(cached)" in second.stdout


def test_bench_reports_gpu_kernel_with_code_and_line(tmp_path):
    res = _tirkit("bench", str(EXAMPLES / "valid" / "gpu_matmul_shared.py"), cache=tmp_path)
    assert res.returncode == 1
    assert "gpu_matmul_shared.py:13:5: error:" in res.stderr
    assert "[codegen/thread-binding]" in res.stderr
    assert "Traceback" not in res.stderr


def test_run_stops_on_script_errors(tmp_path):
    res = _tirkit("run", str(EXAMPLES / "invalid" / "syntax_recovery.py"), cache=tmp_path)
    assert res.returncode == 1
    assert "[syntax]" in res.stderr and "Traceback" not in res.stderr


def test_bench_prints_median_gflops_and_peak_share(tmp_path):
    res = _tirkit("bench", str(EXAMPLES / "valid" / "scheduled_matmul_cpu.py"), "--threads", "1",
                  "--repeat", "3", cache=tmp_path)
    assert res.returncode == 0, res.stderr
    m = re.search(r"matmul_tiled: median ([0-9.]+) ms on 1 thread, ([0-9.]+) GFLOP/s, "
                  r"(\d+)% of measured fp32 peak \((\d+) GFLOP/s\)", res.stdout)
    assert m, res.stdout
    ms, gflops, share, peak = float(m.group(1)), float(m.group(2)), int(m.group(3)), \
        int(m.group(4))
    assert ms > 0 and gflops > 0 and peak > 0
    # the three printed figures agree within their rounding (0.1 GFLOP/s, 1 GFLOP/s, 1%)
    low = 100 * (gflops - 0.05) / (peak + 0.5) - 0.5
    high = 100 * (gflops + 0.05) / (peak - 0.5) + 0.5
    assert low <= share <= high


def test_bench_takes_a_given_peak(tmp_path):
    res = _tirkit("bench", str(EXAMPLES / "valid" / "scheduled_matmul_cpu.py"), "--threads", "2",
                  "--repeat", "3", "--peak", "50", cache=tmp_path)
    assert res.returncode == 0, res.stderr
    assert re.search(r"on 2 threads, [0-9.]+ GFLOP/s, \d+% of given fp32 peak \(100 GFLOP/s\)",
                     res.stdout), res.stdout


def test_bench_counts_one_thread_for_a_kernel_without_a_parallel_loop(tmp_path):
    # only parallel loops use the other threads: a serial kernel's share is of one
    # thread's peak (the given 50 GFLOP/s a core), however many threads were asked for
    res = _tirkit("bench", str(EXAMPLES / "valid" / "matmul.py"), "--threads", "2",
                  "--repeat", "3", "--peak", "50", cache=tmp_path)
    assert res.returncode == 0, res.stderr
    assert re.search(r"matmul: median [0-9.]+ ms on 1 thread \(no parallel loop\), [0-9.]+ "
                     r"GFLOP/s, \d+% of given fp32 peak \(50 GFLOP/s\)", res.stdout), res.stdout


def test_run_selects_one_function_of_a_module(tmp_path):
    res = _tirkit("run", str(EXAMPLES / "valid" / "module_two_funcs.py"), "--func", "scale",
                  "--check", cache=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "scale: ran" in res.stdout and "add_one" not in res.stdout


def test_run_check_stops_before_an_out_of_bounds_kernel_runs(tmp_path):
    src = tmp_path / "oob.py"
    src.write_text('''from tvm.script import tir as T


@T.prim_func
def shift(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        B[i] = A[i + 1]  # tirkit: ignore[bounds/out-of-bounds]
''')
    # the rule's error is silenced, so the kernel is compiled: the interpreter, run first,
    # meets the access outside `A` and stops
    res = _tirkit("run", str(src), "--check", cache=tmp_path / "cache")
    assert res.returncode == 1
    assert "oob.py:7:16: error: access to 'A' outside dimension 0 of extent 16 (index 16) " \
           "[bounds/out-of-bounds]" in res.stderr and "Traceback" not in res.stderr
    assert "ran in" not in res.stdout


def test_run_and_bench_leave_out_the_kernels_that_hold_errors(tmp_path):
    """A kernel holding an error is not compiled; the file's other kernels run, and the
    exit status is 1 unless the kernel run was named."""
    path = str(DATA / "partial" / "undefined_beside_sound.py")
    res = _tirkit("run", path, "--check", cache=tmp_path)
    assert res.returncode == 1, res.stderr
    assert re.search(r"^sound: ran in", res.stdout, re.M) and "B: ok" in res.stdout
    assert "undefined" not in res.stdout
    assert "undefined_beside_sound.py:9:21: error: name 'Q' is not defined" in res.stderr
    assert "undefined_beside_sound.py: 'undefined' has errors: not run" in res.stderr
    named = _tirkit("run", path, "--func", "sound", "--check", cache=tmp_path)
    assert named.returncode == 0 and "B: ok" in named.stdout, named.stderr
    broken = _tirkit("run", path, "--func", "undefined", cache=tmp_path)
    assert broken.returncode == 1 and broken.stdout == ""
    assert "'undefined' has errors: not run" in broken.stderr
    bench = _tirkit("bench", path, "--repeat", "3", cache=tmp_path)
    assert bench.returncode == 1 and re.search(r"^sound: median", bench.stdout, re.M)
    assert "'undefined' has errors: not timed" in bench.stderr
    assert "Traceback" not in res.stderr + named.stderr + broken.stderr + bench.stderr


@pytest.mark.parametrize("example, kernel, code", [
    ("domain_mismatch.py", "scale", "loop-nest/domain-mismatch"),   # compiled: a crash
    ("out_of_bounds.py", "shifted", "bounds/out-of-bounds"),
    ("syntax_recovery.py", "still_checked", "loop-nest/domain-mismatch"),
])
def test_run_refuses_what_check_reports_as_an_error(tmp_path, example, kernel, code):
    """What a rule finds (a binding that leaves its block's domain, a read outside a buffer)
    would have the compiled kernel write or read outside its buffers: it is not run."""
    res = _tirkit("run", str(EXAMPLES / "invalid" / example), cache=tmp_path)
    assert res.returncode == 1 and res.stdout == ""
    assert f"[{code}]" in res.stderr
    assert f"{example}: '{kernel}' has errors: not run" in res.stderr
    assert "Traceback" not in res.stderr


def test_run_refuses_every_kernel_when_its_params_file_cannot_be_read(tmp_path):
    """An error outside every kernel (the `.params` file is missing) leaves the kernels
    without their constants, with no error of their own: none is run."""
    src = tmp_path / "c.py"
    src.write_text('''from tvm.script import tir as T
from tirkit.script import params
P = params.load("gone.params")


@T.prim_func
def add_bias(A: T.Buffer((4,), "float32"), B: T.Buffer((4,), "float32")):
    w = T.allocate_const(P["bias"], "float32", [4])
    bias = T.decl_buffer((4,), "float32", data=w)
    for i in range(4):
        B[i] = A[i] + bias[i]
''')
    res = _tirkit("run", str(src), "--func", "add_bias", cache=tmp_path / "cache")
    assert res.returncode == 1 and res.stdout == ""
    assert re.search(r"c\.py:3:1: error: gone\.params: ", res.stderr), res.stderr
    assert "Traceback" not in res.stderr


def test_run_and_bench_refuse_inputs_that_do_not_fit_in_memory(tmp_path):
    """4 TiB of input: a clear error on the buffer, not a process killed while filling it."""
    src = tmp_path / "huge.py"
    src.write_text('''from tvm.script import tir as T


@T.prim_func
def huge(A: T.Buffer((1099511627776,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        B[i] = A[i]
''')
    for cmd in ("run", "bench"):
        res = _tirkit(cmd, str(src), cache=tmp_path / "cache")
        assert res.returncode == 1 and res.stdout == ""
        assert re.search(r"huge\.py:5:10: error: running this kernel needs about [\d.]+ GiB of "
                         r"memory for its buffers \('A' alone is 4096\.0 GiB\), and [\d.]+ GiB "
                         r"is available \[codegen/argument\]", res.stderr), res.stderr
        assert "Traceback" not in res.stderr


def test_the_memory_guard_counts_the_address_space_limit(tmp_path):
    """Under `ulimit -v` (4 GiB here) the inputs' 8 GiB do not fit even where the machine has
    them: an error on the buffer, not a MemoryError while filling it."""
    import resource
    src = tmp_path / "big.py"
    src.write_text('''from tvm.script import tir as T


@T.prim_func
def big(A: T.Buffer((268435456,), "float32"), B: T.Buffer((16,), "float32")):
    for i in range(16):
        B[i] = A[i]
''')
    limit = 4 << 30
    res = _tirkit("run", str(src), cache=tmp_path / "cache",
                  preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_AS, (limit, limit)))
    assert res.returncode == 1 and res.stdout == "", res.stdout + res.stderr
    m = re.search(r"big\.py:5:9: error: running this kernel needs about ([\d.]+) GiB of memory "
                  r"for its buffers \('A' alone is 1\.0 GiB\), and ([\d.]+) GiB is available "
                  r"\[codegen/argument\]", res.stderr)
    assert m, res.stderr
    assert float(m.group(2)) < 4.0 < float(m.group(1))
    assert "internal error" not in res.stderr and "Traceback" not in res.stderr


def test_run_refuses_allocations_that_do_not_fit_in_memory(tmp_path):
    """4 TiB allocated inside the kernel, in each of the forms that take storage: the system
    grants it and the process would be killed while the kernel fills it."""
    src = tmp_path / "alloc.py"
    src.write_text('''from tvm.script import tir as T


@T.prim_func
def blockwise(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    C = T.alloc_buffer((1 << 40,), "float32")
    for i in range(16):
        with T.block("c"):
            vi = T.axis.spatial(16, i)
            C[vi * 65536] = A[vi]
    for i in range(16):
        with T.block("b"):
            vi = T.axis.spatial(16, i)
            B[vi] = C[vi * 65536]


@T.prim_func
def allocated(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    D = T.decl_buffer((1 << 40,), "float32")
    for i in range(16):
        D[i * 65536] = A[i]
        B[i] = D[i * 65536]


@T.prim_func
def small(A: T.Buffer((16,), "float32"), B: T.Buffer((16,), "float32")):
    D = T.decl_buffer((1 << 20,), "float32")
    for i in range(16):
        D[i * 65536] = A[i]
        B[i] = D[i * 65536]
''')
    res = _tirkit("run", str(src), cache=tmp_path / "cache")
    assert res.returncode == 1
    for line, name in ((6, "C"), (19, "D")):
        assert re.search(rf"alloc\.py:{line}:5: error: running this kernel needs about "
                         rf"[\d.]+ GiB of memory for its buffers \('{name}' alone is "
                         r"4096\.0 GiB\), and [\d.]+ GiB is available \[codegen/argument\]",
                         res.stderr), res.stderr
    assert re.search(r"^small: ran in", res.stdout, re.M), res.stdout
    assert "Traceback" not in res.stderr


SIZED = '''from tvm.script import tir as T


@T.prim_func
def sized(a: T.handle, b: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,), "float32")
    B = T.match_buffer(b, (n,), "float32")
    C = T.alloc_buffer((n, n), "float32")
    for i in range(n):
        with T.block("c"):
            vi = T.axis.spatial(n, i)
            C[vi, 0] = A[vi]
    for i in range(n):
        with T.block("b"):
            vi = T.axis.spatial(n, i)
            B[vi] = C[vi, 0]
'''


def test_run_sizes_an_allocation_of_symbolic_shape_before_it_runs(tmp_path):
    # C is n x n floats: 4 TiB at n = 2^20, from sizes that keep the inputs at 4 MiB each
    src = tmp_path / "sized.py"
    src.write_text(SIZED)
    res = _tirkit("run", str(src), "--size", "n=1048576", cache=tmp_path / "cache")
    assert res.returncode == 1
    assert re.search(r"sized\.py:9:5: error: running this kernel needs about [\d.]+ GiB of "
                     r"memory for its buffers \('C' alone is 4096\.0 GiB\), and [\d.]+ GiB "
                     r"is available \(give its symbolic shapes smaller sizes with --size\) "
                     r"\[codegen/argument\]", res.stderr), res.stderr
    ok = _tirkit("run", str(src), "--size", "n=256", "--check", cache=tmp_path / "cache")
    assert ok.returncode == 0, ok.stderr


def test_an_allocation_inside_a_parallel_loop_counts_once_per_thread():
    import tirkit
    from tirkit.codegen.cli import allocations
    text = '''from tvm.script import tir as T


@T.prim_func
def f(A: T.Buffer((64, 1024), "float32")):
    for i in T.parallel(64):
        row = T.decl_buffer((1024,), "float32")
        for j in range(1024):
            row[j] = A[i, j]
        for j in range(1024):
            A[i, j] = row[1023 - j]
    for i in T.parallel(2):
        two = T.decl_buffer((8,), "float32")
        for j in range(8):
            two[j] = A[i, j]
            A[i, j] = two[j]
'''
    ((_, f),) = tirkit.parse(text).module.prim_funcs()
    # 8 threads hold a row each; the loop of 2 iterations needs only 2 copies
    assert [(n, name) for n, name, _ in allocations(f, threads=8)] == \
        [(8 * 4096, "row"), (2 * 32, "two")]
    assert [(n, name) for n, name, _ in allocations(f, threads=1)] == \
        [(4096, "row"), (32, "two")]


def test_run_of_one_kernel_checks_and_reports_that_kernel_only(tmp_path):
    """`--func good` beside a kernel that reads out of bounds and one that does not parse:
    only the named kernel is checked, and no other kernel's error is printed."""
    path = str(ROOT / "tests" / "data" / "partial" / "two_with_errors.py")

    def errors(stderr):
        return re.findall(r":(\d+):\d+: error: .* \[([\w/-]+)\]", stderr)
    good = _tirkit("run", path, "--func", "good", "--check", cache=tmp_path / "cache")
    assert good.returncode == 0 and good.stderr == "", good.stderr
    assert re.search(r"^good: ran in .*\n  A: ok .*\n  B: ok ", good.stdout), good.stdout
    bad = _tirkit("run", path, "--func", "bad", cache=tmp_path / "cache")
    assert bad.returncode == 1 and bad.stdout == ""
    assert errors(bad.stderr) == [("9", "bounds/out-of-bounds")]
    assert "'bad' has errors: not run" in bad.stderr
    broken = _tirkit("run", path, "--func", "broken", cache=tmp_path / "cache")
    assert broken.returncode == 1 and broken.stdout == ""
    assert errors(broken.stderr) == [("22", "syntax")]
    # with no kernel named, every error is printed and the sound kernel runs
    every = _tirkit("run", path, cache=tmp_path / "cache")
    assert every.returncode == 1 and "good: ran in" in every.stdout
    assert errors(every.stderr) == [("9", "bounds/out-of-bounds"), ("22", "syntax")]


def test_run_gives_a_shape_parameter_the_size_of_its_buffers(tmp_path):
    from test_codegen_inputs import SIZED_BY_A_PARAMETER
    path = tmp_path / "sized.py"
    path.write_text(SIZED_BY_A_PARAMETER)
    for extra in ((), ("--size", "n=3")):
        r = _tirkit("run", str(path), "--check", *extra, cache=tmp_path)
        assert r.returncode == 0, r.stderr
        assert f"scalars: n={3 if extra else 16}" in r.stdout
        assert "X: ok" in r.stdout and "Y: ok" in r.stdout


def test_run_refuses_an_access_out_of_bounds_for_the_sizes_it_runs(tmp_path):
    from test_codegen_inputs import OUT_OF_BOUNDS_FOR_SOME_SIZES
    path = tmp_path / "oob.py"
    path.write_text(OUT_OF_BOUNDS_FOR_SOME_SIZES)
    r = _tirkit("run", str(path), cache=tmp_path)
    assert r.returncode == 1 and "ran in" not in r.stdout
    assert "[bounds/out-of-bounds]" in r.stderr and "(with n=16)" in r.stderr
    ok = _tirkit("run", str(path), "--size", "n=1", cache=tmp_path)
    assert ok.returncode == 0, ok.stderr
    assert "ran in" in ok.stdout
