"""kernel_summary: parameters with shapes and dtypes, FLOPs and time as analysis/cost.py
counts them, and the blocks a kernel's text writes (the implicit root left out)."""
from __future__ import annotations

import tirkit
from tirkit.analysis.cost import kernel_costs, roofline_seconds
from tirkit.analysis.summary import count_blocks, kernel_summary
from tirkit.script.printer import Printer
from conftest import EXAMPLES


def funcs(rel):
    return dict(tirkit.parse((EXAMPLES / rel).read_text()).module.functions)


def shapes(s):
    pr = Printer("classic")
    return [(p.name, p.dtype, None if p.shape is None else tuple(pr.expr(e) for e in p.shape))
            for p in s.params]


def test_matmul():
    f = funcs("valid/matmul.py")["matmul"]
    s = kernel_summary(f, "llvm")
    assert shapes(s) == [(n, "float32", ("128", "128")) for n in "ABC"]
    assert s.flops.value == 2 * 128 ** 3
    assert s.unique_bytes == 3 * 128 * 128 * 4
    assert s.seconds == roofline_seconds(kernel_costs(f).total, "llvm") > 0
    assert (s.bound, s.target, s.blocks) == ("compute", "llvm", 1)


def test_default_target_blocks_and_scope():
    f = funcs("valid/gpu_matmul_shared.py")["gpu_matmul"]
    s = kernel_summary(f)
    assert s.target == "cuda" and "NVIDIA" in s.target_label
    assert s.blocks == 3 == count_blocks(f)
    assert kernel_summary(funcs("valid/softmax.py")["softmax"]).blocks == 4


def test_symbolic_sizes():
    s = kernel_summary(funcs("valid/batch_matmul_symbolic.py")["batch_matmul"], "llvm")
    assert shapes(s)[0] == ("A", "float32", ("n", "m", "64"))
    assert s.flops.value is None and s.seconds is None and s.bound == "unknown"


def test_scalar_parameters():
    text = ('from tvm.script import tir as T\n\n\n@T.prim_func\n'
            'def scale(a: T.handle, alpha: T.float32):\n'
            '    A = T.match_buffer(a, (16,), "float16")\n'
            '    for i in range(16):\n'
            '        with T.block("B"):\n'
            '            vi = T.axis.spatial(16, i)\n'
            '            A[vi] = A[vi] * T.float16(2)\n')
    r = tirkit.parse(text)
    assert [d.code for d in r.diagnostics] == []
    s = kernel_summary(r.module.functions[0][1], "llvm")
    assert shapes(s) == [("A", "float16", ("16",)), ("alpha", "float32", None)]
    assert s.flops.value == 16 and s.blocks == 1
